//! The provider kit: everything an ASP check provider needs around its checks, generic over a
//! [`Checker`]. The lifecycle server (`initialize`, the `initialized` grant and budget, `shutdown`,
//! `exit`, `check/evaluate` and its legacy name, cancellation), the request parsing, the workspace
//! reads (`workspace/readBlob` in batches halved on refusal, `workspace/listTree`), `validAsOf`,
//! fingerprints and digests, the comparison of both sides, the bounds and the Assessment. A
//! provider (hygiene, the linter runner) is one checker on it, in its own process.

mod bounds;
pub mod changed;
mod checker;
pub mod digest;
mod error;
mod evaluate;
#[cfg(feature = "memory")]
pub mod memory;
mod request;
mod server;
pub mod text;
pub mod wire;
mod workspace;

pub use bounds::{Cancel, MAX_DIAGNOSTICS, Stop};
pub use checker::{
    About, Blob, ChangeKind, Checked, Checker, Finding, Identity, Named, Run, Side, Which,
};
pub use error::{Error, Result};
pub use evaluate::{CHUNK, evaluate};
pub use request::{Comparison, Invalid, Request, Scope};
pub use server::serve;
pub use wire::Severity;
pub use workspace::{Read, Workspace};
