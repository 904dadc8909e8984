//! The linter runner's one error type.

/// What went wrong running a linter.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path that is not a plain relative path (no `..`, no absolute path, no empty part).
    #[error("{0:?} is not a plain relative path")]
    Path(String),
    /// The scratch tree could not be made or written.
    #[error("the scratch folder: {0}")]
    Scratch(#[source] std::io::Error),
    /// The linter could not be started (not installed, not executable).
    #[error("{program} could not be started: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// The linter did not finish by its deadline (it was killed, with its process group).
    #[error("{program} did not finish within {ms} ms")]
    Timeout { program: String, ms: u128 },
    /// Reading its output or waiting for it failed.
    #[error("{program}: {source}")]
    Io {
        program: String,
        #[source]
        source: std::io::Error,
    },
    /// A configuration that cannot run: an unknown preset, an empty command.
    #[error("{0}")]
    Config(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
