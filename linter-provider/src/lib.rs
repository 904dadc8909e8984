//! The built-in linter runner (`../shared/LINTERS.md`): a linter that writes SARIF (ruff,
//! shellcheck, hadolint…) as an ASP check provider of the embedded host, one process per
//! `[[linter]]` of the trusted `host.toml` (`asp-bridge provider linters`). A checker on the
//! provider kit ([`serve`]) that lints the files its globs name in one run ([`lint`][mod@lint]),
//! keeps what it found by blob ([`kept`]) and fingerprints findings so that moved ones are not new
//! ([`to_kit`]). Beneath it: a linter's settings and the presets ([`preset`], [`from_config`]), the
//! tools' column units ([`columns`]), SARIF (and shellcheck's json1) made findings on repository
//! paths ([`from_sarif`], [`from_shellcheck`]), the private scratch tree the linter runs in
//! ([`scratch`]) and the run itself, with a deadline, capped output and no process left behind
//! ([`tool`], [`strays`]).

mod checker;
pub mod columns;
mod error;
pub mod from_config;
pub mod from_sarif;
pub mod from_shellcheck;
mod kept;
mod lint;
pub mod preset;
pub mod scratch;
mod strays;
mod to_kit;
pub mod tool;

pub use checker::serve;
pub use error::{Error, Result};
pub use provider_kit::Identity;
