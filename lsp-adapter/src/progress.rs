//! Host `$/progress` as LSP work-done progress, bounded: a preview, so only the latest is kept.
//!
//! The host's values are drained as they come into one slot holding the latest report; what reaches
//! the client is at most one notification in flight and then whatever is latest, however fast the
//! host sends and however slowly the client reads. The final answer alone counts (progress is a
//! preview), so dropping the reports in between loses nothing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use asp_wire::text::untrusted;
use rpc_peer::peer::{ProgressReceiver, ProgressSender, progress_channel};
use serde_json::Value;
use tokio::sync::watch;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::notification::Progress;
use tower_lsp_server::ls_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressEnd, WorkDoneProgressReport,
};

/// How long the client gets to create a progress token before progress is given up on.
const CREATE_PROGRESS_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest progress message shown.
const MESSAGE_MAX: usize = 200;

/// A work-done message and percentage.
type Report = (Option<String>, Option<u32>);

/// A sender for the host's `$/progress` values of one evaluation. The first value creates a
/// work-done progress on the client; the progress ends when the sender is dropped (the evaluation
/// is over). Nothing is shown for an evaluation that reports no progress.
pub(crate) fn relay(client: Client, title: String) -> ProgressSender {
    let (sender, values) = progress_channel();
    let (latest, shown) = watch::channel(None);
    tokio::spawn(coalesce(values, latest));
    tokio::spawn(show(client, title, shown));
    sender
}

/// Keeps only the latest report; the slot's sender is dropped (ending the progress) with `values`.
async fn coalesce(mut values: ProgressReceiver, latest: watch::Sender<Option<Report>>) {
    let mut first = true;
    while let Some(value) = values.recv().await {
        let report = match report(&value) {
            Some(report) => report,
            // The first value starts the progress whatever its kind.
            None if first => Report::default(),
            None => continue,
        };
        first = false;
        latest.send_replace(Some(report));
    }
}

/// Shows the latest report each time the client has taken the one before.
async fn show(client: Client, title: String, mut shown: watch::Receiver<Option<Report>>) {
    static TOKENS: AtomicU64 = AtomicU64::new(1);
    if shown.changed().await.is_err() {
        return;
    }
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
    let (message, percentage) = shown.borrow_and_update().clone().unwrap_or_default();
    let begin = WorkDoneProgress::Begin(WorkDoneProgressBegin {
        title,
        cancellable: Some(false),
        message,
        percentage,
    });
    send(&client, &token, begin).await;
    while shown.changed().await.is_ok() {
        let (message, percentage) = shown.borrow_and_update().clone().unwrap_or_default();
        let report = WorkDoneProgressReport {
            cancellable: Some(false),
            message,
            percentage,
        };
        send(&client, &token, WorkDoneProgress::Report(report)).await;
    }
    let end = WorkDoneProgress::End(WorkDoneProgressEnd { message: None });
    send(&client, &token, end).await;
}

async fn send(client: &Client, token: &NumberOrString, value: WorkDoneProgress) {
    let params = ProgressParams {
        token: token.clone(),
        value: ProgressParamsValue::WorkDone(value),
    };
    client.send_notification::<Progress>(params).await;
}

/// A host progress value as a work-done message and percentage; `None` for kinds it does not show.
fn report(value: &Value) -> Option<Report> {
    match value.get("kind").and_then(Value::as_str)? {
        "report" | "begin" => {
            let message = value
                .get("message")
                .and_then(Value::as_str)
                .map(|m| untrusted(m, MESSAGE_MAX).into_owned());
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

    #[tokio::test]
    async fn only_the_latest_report_waits_for_a_slow_client() {
        let (sender, values) = progress_channel();
        let (latest, mut shown) = watch::channel(None);
        for i in 0..10_000 {
            assert!(
                sender.send(
                    json!({"kind": "report", "percentage": i % 100, "message": format!("{i}")})
                )
            );
        }
        assert!(sender.send(json!({"kind": "something-new"})));
        drop(sender);
        coalesce(values, latest).await;
        assert!(shown.changed().await.is_ok(), "one value to show");
        assert_eq!(
            *shown.borrow_and_update(),
            Some((Some("9999".into()), Some(99))),
            "the latest shown kind, nothing queued behind it"
        );
        assert!(
            shown.changed().await.is_err(),
            "the progress ends with the host's"
        );
    }
}
