//! SARIF 2.1.0 export of ASP host decisions, for GitHub code scanning and other dashboards.
//!
//! [`export`] turns a decision (the `host/evaluateChangeset` result) into one SARIF log; it never
//! fails and never panics, whatever the host sent. [`read_saved`] reads a saved host answer (a
//! JSON-RPC response or a bare decision). The log is advisory: its run says `"authoritative": false`,
//! and nothing here turns findings into a pass or a fail.
//!
//! Modules: `export` prepares and writes a log, as `options` ask, counted in a `summary`;
//! `to_sarif` holds the whole mapping (see its doc); `limits` GitHub's
//! upload limits; `line_hash` GitHub's `primaryLocationLineHash`; `uri` artifact URIs; `writer` the
//! bytes; `saved` saved answers; [`schema`] validation against the OASIS schema (feature
//! `schema-check`). Only this crate knows serde-sarif.

mod error;
mod export;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod limits;
mod line_hash;
mod options;
mod saved;
#[cfg(feature = "schema-check")]
pub mod schema;
mod summary;
mod to_sarif;
mod uri;
mod values;
mod writer;

pub use error::{Error, Result};
pub use export::{Export, export};
pub use limits::Limits;
pub use options::{HostIdentity, Options};
pub use saved::{MAX_ANSWER_BYTES, read_saved, read_saved_from};
pub use summary::Summary;
