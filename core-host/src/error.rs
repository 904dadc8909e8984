//! The one error type of core-host; every variant knows its ASP failClass.
//!
//! Provider failures are not errors: they become degraded coverage in a decision. Only what stops
//! the host from answering at all (a bad configuration, a workspace that is not a git repository, a
//! request it refuses) is an `Error`.

use rpc_peer::FailClass;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The trusted configuration file is unreadable or invalid: file, line and key are named.
    #[error("{file}:{line}: {key}: {message}")]
    Config {
        file: String,
        line: usize,
        key: String,
        message: String,
    },

    /// A request the host refuses.
    #[error("{0}")]
    Input(String),

    /// Reading the repository failed: git (run through `repo_io::git`), or a read.
    #[error(transparent)]
    Repo(#[from] repo_io::Error),
}

impl Error {
    pub fn fail_class(&self) -> FailClass {
        match self {
            Error::Config { .. } | Error::Input(_) => FailClass::Input,
            Error::Repo(e) => e.fail_class(),
        }
    }

    pub(crate) fn input(message: impl Into<String>) -> Error {
        Error::Input(message.into())
    }

    pub(crate) fn git(message: impl Into<String>) -> Error {
        repo_io::Error::Git(message.into()).into()
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        repo_io::Error::io(context, source).into()
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_keeps_the_fail_class_it_had_as_one_of_bridge_cores() {
        assert_eq!(Error::input("bad").fail_class(), FailClass::Input);
        assert_eq!(Error::git("failed").fail_class(), FailClass::Input);
        assert_eq!(Error::git("failed").to_string(), "git: failed");
        let io = Error::io("reading a", std::io::Error::other("gone"));
        assert_eq!(io.fail_class(), FailClass::Health);
        assert_eq!(io.to_string(), "reading a: gone");
    }
}
