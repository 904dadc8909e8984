//! The one error type of repo-io; every variant knows its ASP failClass.

use rpc_peer::FailClass;

/// Every way reading the repository through this crate can fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// git could not be run, failed, wrote too much or did not finish in time: the repository
    /// (or what was asked of it) is at fault, an `input` failure.
    #[error("git: {0}")]
    Git(String),

    /// A read that failed (a file of the working tree, a pipe from git): a `health` failure.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The ASP failClass this error is reported with.
    pub fn fail_class(&self) -> FailClass {
        match self {
            Error::Git(_) => FailClass::Input,
            Error::Io { .. } => FailClass::Health,
        }
    }

    /// A read that failed, with what was being read.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_failure_is_an_input_failure() {
        assert_eq!(Error::Git("no".into()).fail_class(), FailClass::Input);
        assert_eq!(Error::Git("no".into()).to_string(), "git: no");
    }

    #[test]
    fn a_failed_read_is_a_health_failure_that_says_what_was_read() {
        let error = Error::io("reading a", std::io::Error::other("gone"));
        assert_eq!(error.fail_class(), FailClass::Health);
        assert_eq!(error.to_string(), "reading a: gone");
    }
}
