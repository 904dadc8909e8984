//! The embedded advisory ASP Core-profile host (`asp-bridge host serve`): the outer seam on its
//! stdio, providers from the trusted configuration on the inner seam, decisions and receipts as the
//! Core profile states them. It is advisory only: `gate` is always `indeterminate` with
//! `insufficient-assurance`, and it offers no edit and no apply.
//!
//! Layers: [`config`] (trusted configuration), `snapshot` (git baseline, hostile workspace reads,
//! changeset intake), `policy` (`.asp/asp.json`), `provider` (processes on the inner seam),
//! `callbacks` (`workspace/readBlob`, `workspace/listTree`), `assessment` (what is accepted from a
//! provider), `plan` + `decide` + `receipt` (the decision), `status` + `evaluate` + `outer` (the
//! outer seam, with `outer_error`), `run` ([`serve`]: start-up to shutdown).

mod assessment;
pub mod builtin;
mod callbacks;
pub mod config;
mod decide;
mod error;
mod evaluate;
// Its unit tests run in every `cargo test` of this crate; the shipped binary never has it.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
mod glob;
mod host;
mod json;
mod leave_out;
mod outer;
mod outer_error;
mod plan;
mod policy;
mod provider;
mod receipt;
mod run;
mod schema;
mod snapshot;
mod status;

pub use assessment::HOST_OWNED;
pub use error::{Error, Result};
pub use receipt::{HOST_NAME, HOST_VERSION};
pub use run::{Options, check_workspace, serve};
