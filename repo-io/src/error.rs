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
}

impl Error {
    /// The ASP failClass this error is reported with.
    pub fn fail_class(&self) -> FailClass {
        match self {
            Error::Git(_) => FailClass::Input,
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
}
