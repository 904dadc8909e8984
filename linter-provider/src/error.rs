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
    /// The linter's program is not installed: what to install, when the linter says.
    #[error("{program} is not installed (no executable `{program}` on PATH){}", install.as_ref().map_or_else(String::new, |how| format!("; install it with `{how}`")))]
    NotInstalled {
        program: String,
        install: Option<String>,
    },
    /// Serving the host failed.
    #[error(transparent)]
    Kit(#[from] provider_kit::Error),
}

impl Error {
    /// The ASP failClass of the failure: a configuration that cannot run is `input`; everything
    /// else is the machine's state (`health`), or the connection's.
    pub fn fail_class(&self) -> rpc_peer::FailClass {
        match self {
            Error::Path(_) | Error::Config(_) => rpc_peer::FailClass::Input,
            Error::Kit(error) => error.fail_class(),
            _ => rpc_peer::FailClass::Health,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
