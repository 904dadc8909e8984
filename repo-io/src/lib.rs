//! Reading a repository whose content is hostile, for the bridge's client, the embedded host and
//! the providers alike: [`git`] (the one git runner: a deadline, caps, no program the repository
//! names) and [`path`] (repo-relative paths compared by components).

mod error;
pub mod git;
pub mod path;

pub use error::{Error, Result};
