//! One evaluation of one document: the host's baseline, a changeset of that file on disk, and
//! `host/evaluateChangeset` at the interactive call site. Host `$/progress` is relayed as work-done
//! progress when the client shows it; the final answer alone is used (progress is a preview).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bridge_core::proto::{AdvisoryCallSite, Decision};
use bridge_core::text::untrusted;
use bridge_core::worktree::{Evaluate, Scope};
use bridge_core::{CallOptions, FailClass, HostSource, Worktree};
use serde_json::Value;
use tokio::sync::mpsc;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::notification::Progress;
use tower_lsp_server::ls_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressEnd, WorkDoneProgressReport,
};

/// How long the client gets to create a progress token before progress is given up on.
const CREATE_PROGRESS_TIMEOUT: Duration = Duration::from_secs(5);

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

impl From<&crate::Error> for Failure {
    fn from(error: &crate::Error) -> Failure {
        Failure {
            class: error.fail_class(),
            message: error.to_string(),
        }
    }
}

/// Asks the host for its decision on the file `path` (repo-relative) as it is on disk.
pub(crate) async fn evaluate(
    host: &dyn HostSource,
    worktree: &Worktree,
    path: &str,
    timeout: Option<Duration>,
    progress: Option<mpsc::UnboundedSender<Value>>,
) -> bridge_core::Result<Decision> {
    let client = host.client().await?;
    let request = Evaluate {
        scope: Scope::Paths(vec![path.to_owned()]),
        ..Evaluate::at(AdvisoryCallSite::Interactive)
    };
    let options = CallOptions { timeout, progress };
    Ok(worktree.evaluate(&client, request, options).await?.decision)
}

/// A sender for the host's `$/progress` values of one evaluation. The first value creates a
/// work-done progress on the client; the progress ends when the sender is dropped (the evaluation
/// is over). Nothing is shown for an evaluation that reports no progress.
pub(crate) fn relay_progress(client: Client, title: String) -> mpsc::UnboundedSender<Value> {
    static TOKENS: AtomicU64 = AtomicU64::new(1);
    let (sender, mut values) = mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        let Some(first) = values.recv().await else {
            return;
        };
        let token = NumberOrString::String(format!(
            "asp-bridge/check/{}",
            TOKENS.fetch_add(1, Ordering::Relaxed)
        ));
        let created = tokio::time::timeout(
            CREATE_PROGRESS_TIMEOUT,
            client.create_work_done_progress(token.clone()),
        )
        .await;
        if !matches!(created, Ok(Ok(()))) {
            tracing::debug!("the client did not create a progress token");
            return;
        }
        let (message, percentage) = report(&first).unwrap_or_default();
        let begin = WorkDoneProgress::Begin(WorkDoneProgressBegin {
            title,
            cancellable: Some(false),
            message,
            percentage,
        });
        send(&client, &token, begin).await;
        while let Some(value) = values.recv().await {
            if let Some((message, percentage)) = report(&value) {
                let report = WorkDoneProgressReport {
                    cancellable: Some(false),
                    message,
                    percentage,
                };
                send(&client, &token, WorkDoneProgress::Report(report)).await;
            }
        }
        let end = WorkDoneProgress::End(WorkDoneProgressEnd { message: None });
        send(&client, &token, end).await;
    });
    sender
}

async fn send(client: &Client, token: &NumberOrString, value: WorkDoneProgress) {
    let params = ProgressParams {
        token: token.clone(),
        value: ProgressParamsValue::WorkDone(value),
    };
    client.send_notification::<Progress>(params).await;
}

/// A host progress value as a work-done message and percentage; `None` for kinds it does not show.
fn report(value: &Value) -> Option<(Option<String>, Option<u32>)> {
    match value.get("kind").and_then(Value::as_str)? {
        "report" | "begin" => {
            let message = value
                .get("message")
                .and_then(Value::as_str)
                .map(|m| untrusted(m, 200).into_owned());
            let percentage = value
                .get("percentage")
                .and_then(Value::as_u64)
                .map(|p| p.min(100) as u32);
            Some((message, percentage))
        }
        "diagnostics" => {
            let n = value
                .get("diagnostics")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            Some((Some(format!("{n} preliminary finding(s), not final")), None))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn host_progress_becomes_a_message_and_a_percentage() {
        assert_eq!(
            report(&json!({"kind": "report", "percentage": 50, "message": "half way"})),
            Some((Some("half way".into()), Some(50)))
        );
        assert_eq!(
            report(&json!({"kind": "diagnostics", "diagnostics": [{}, {}]})),
            Some((Some("2 preliminary finding(s), not final".into()), None))
        );
        assert_eq!(report(&json!({"kind": "something-new"})), None);
        assert_eq!(report(&json!("not an object")), None);
    }
}
