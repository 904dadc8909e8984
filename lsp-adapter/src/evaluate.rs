//! One evaluation of one document: the host's baseline, a changeset of that file on disk, and
//! `host/evaluateChangeset` at the interactive call site. Host `$/progress` goes to the sender given
//! ([`crate::progress`]); the final answer alone is used (progress is a preview).

use std::time::Duration;

use asp_wire::proto::AdvisoryCallSite;
use bridge_core::worktree::{Evaluate, Scope};
use bridge_core::{CallOptions, HostSource, Worktree};
use rpc_peer::FailClass;
use rpc_peer::peer::ProgressSender;

use crate::answer::{Answer, Checked};
use crate::error::Error;

/// Why an evaluation got no answer: the failClass and what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) class: FailClass,
    pub(crate) message: String,
}

impl Failure {
    /// The failures that mean the host is not there (the ones to recover from).
    pub(crate) fn is_health(&self) -> bool {
        self.class == FailClass::Health
    }
}

impl From<&bridge_core::Error> for Failure {
    fn from(error: &bridge_core::Error) -> Failure {
        Failure {
            class: error.fail_class(),
            message: error.to_string(),
        }
    }
}

impl From<&Error> for Failure {
    fn from(error: &Error) -> Failure {
        Failure {
            class: error.fail_class(),
            message: error.to_string(),
        }
    }
}

/// Asks the host for its decision on the file `path` (repo-relative) as it is on disk; only the
/// findings located there are decoded ([`Answer`]).
pub(crate) async fn evaluate(
    host: &dyn HostSource,
    worktree: &Worktree,
    path: &str,
    timeout: Option<Duration>,
    progress: Option<ProgressSender>,
) -> bridge_core::Result<Checked> {
    let client = host.client().await?;
    let request = Evaluate {
        scope: Scope::Paths(vec![path.to_owned()]),
        ..Evaluate::at(AdvisoryCallSite::Interactive)
    };
    let options = CallOptions { timeout, progress };
    let evaluation = worktree
        .evaluate_as::<Answer>(&client, request, options)
        .await?;
    let mut checked = evaluation.decision.at(path)?;
    checked.left_out = evaluation
        .skipped
        .into_iter()
        // A path left out (a file, or a directory such as a nested repository) covers what it holds.
        .find(|s| bridge_core::confine::is_within(path, &s.path))
        .map(|s| s.why);
    Ok(checked)
}
