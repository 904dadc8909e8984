//! The built-in linter runner (`../shared/LINTERS.md`): a linter that writes SARIF (ruff,
//! shellcheck, hadolint…) as an ASP check provider of the embedded host. This first part holds what
//! does not depend on the provider kit: the presets and their argv ([`preset`]), the tools' column
//! units converted to UTF-16 ([`columns`]), SARIF (and shellcheck's json1) made findings on
//! repository paths ([`from_sarif`], [`from_shellcheck`]), the private scratch tree the linter runs in ([`scratch`]) and the run itself,
//! with a deadline, capped output and no process left behind ([`tool`]). The checker on the
//! provider kit and the host's enrollment come next (issue 25).

pub mod columns;
mod error;
pub mod from_sarif;
pub mod from_shellcheck;
pub mod preset;
pub mod scratch;
pub mod tool;

pub use error::{Error, Result};
