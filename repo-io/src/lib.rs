//! Reading a repository whose content is hostile, for the bridge's client, the embedded host and
//! the providers alike: [`git`] (the one git runner: a deadline, caps, no program the repository
//! names), [`path`] (repo-relative paths compared by components) and [`read`] (the one no-follow
//! open, capped read and streamed hash of a regular file).

mod error;
pub mod git;
pub mod path;
pub mod read;

pub use error::{Error, Result};
