//! A host that fails, crashes or cannot say everything is never shown as "no problems": a notice at
//! the top of the document, one message per outage, and the findings come back when the host does.

use bridge_core::Error;
use lsp_adapter::Options;
use serde_json::Value;

use crate::host::{Answer, TestHost};
use crate::support::{
    API_TS, TestClient, Workspace, api_ts_denied, clean, fixture, plain_client, rich_client,
};

fn is_notice(diagnostic: &Value, code: &str) -> bool {
    diagnostic["severity"] == 3
        && diagnostic["code"] == code
        && diagnostic["source"] == "asp-bridge"
        && diagnostic["range"]["start"]["line"] == 0
}

/// The next publication for each of `uris`, whatever order they come in.
async fn published_once_each(client: &mut TestClient, uris: &[&String]) -> Vec<Value> {
    let mut found: Vec<Option<Value>> = vec![None; uris.len()];
    while found.iter().any(Option::is_none) {
        let message = client
            .wait_for(|m| m["method"] == "textDocument/publishDiagnostics")
            .await;
        let at = uris
            .iter()
            .position(|u| message["params"]["uri"] == u.as_str());
        if let Some(slot) = at.and_then(|at| found.get_mut(at)).filter(|s| s.is_none()) {
            *slot = Some(message["params"].clone());
        }
    }
    found.into_iter().flatten().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_crash_shows_a_notice_and_a_message_then_the_findings_come_back() {
    let (workspace, host) = api_ts_denied("key = 1\n", (0, 0), (0, 3), "x/key");
    let (mut client, uri) = TestClient::opened(&host, &workspace, rich_client(), API_TS).await;
    assert_eq!(
        client.published(&uri).await["diagnostics"][0]["code"],
        "x/key"
    );

    host.plan(Answer::Crash);
    client.save(&uri);
    let failed = client.published(&uri).await;
    let diagnostics = failed["diagnostics"].as_array().unwrap();
    assert!(is_notice(&diagnostics[0], "not-run/health"), "{failed}");
    let notice = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        notice.starts_with("ASP host check did not run (health): host "),
        "{notice}"
    );
    assert!(
        notice.ends_with("; the findings shown are from the last check that ran"),
        "{notice}"
    );
    assert_eq!(
        diagnostics[1]["code"], "x/key",
        "the last findings stay, under the notice"
    );
    let message = client.shown().await;
    assert_eq!(message["type"], 2);
    assert!(
        message["message"]
            .as_str()
            .unwrap()
            .contains("did not run (health)"),
        "{message}"
    );

    // The host is started again, the pulling client is asked to pull again, and the failed
    // evaluation runs again.
    let (mut refreshed, mut recovered) = (false, None);
    while !refreshed || recovered.is_none() {
        let message = client.wait_for(|m| m["method"].is_string()).await;
        refreshed |= message["method"] == "workspace/diagnostic/refresh";
        if message["method"] == "textDocument/publishDiagnostics" {
            recovered = Some(message["params"].clone());
        }
    }
    let recovered = recovered.unwrap();
    assert_eq!(
        recovered["diagnostics"].as_array().unwrap().len(),
        1,
        "{recovered}"
    );
    assert_eq!(recovered["diagnostics"][0]["code"], "x/key");
    assert_eq!(host.starts(), 2);
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_is_told_once_however_many_documents_it_hits() {
    let workspace = Workspace::new(&[("a.ts", "a\n"), ("b.ts", "b\n")]);
    let host = TestHost::new(clean());
    host.set_down(true);
    let mut client = TestClient::initialized(&host, &workspace, plain_client()).await;
    let (a, b) = (workspace.uri("a.ts"), workspace.uri("b.ts"));
    client.open(&a, 1, "a\n");
    client.open(&b, 1, "b\n");
    for failed in published_once_each(&mut client, &[&a, &b]).await {
        let notice = &failed["diagnostics"][0];
        assert!(is_notice(notice, "not-run/health"), "{failed}");
        let text = notice["message"].as_str().unwrap();
        assert!(
            text.ends_with("; no check of this document has run yet"),
            "no findings of an earlier check to speak of: {text}"
        );
    }

    host.set_down(false);
    for recovered in published_once_each(&mut client, &[&a, &b]).await {
        assert_eq!(
            recovered["diagnostics"],
            serde_json::json!([]),
            "{recovered}"
        );
    }
    let messages = client
        .seen
        .iter()
        .filter(|m| m["method"] == "window/showMessage")
        .count();
    assert_eq!(
        messages, 1,
        "one message for the outage, not one per document"
    );
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_indeterminate_decision_is_shown_as_incomplete_never_as_clean() {
    let workspace = Workspace::new(&[(API_TS, "x\n")]);
    let host = TestHost::new(fixture(
        "outer/evaluate.indeterminate.missing-provider.json",
    ));
    let (mut client, uri) = TestClient::opened(&host, &workspace, plain_client(), API_TS).await;
    let published = client.published(&uri).await;
    let diagnostics = published["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{published}");
    assert!(is_notice(&diagnostics[0], "incomplete"), "{published}");
    let text = diagnostics[0]["message"].as_str().unwrap();
    assert!(text.contains("decision: indeterminate"), "{text}");
    assert!(text.contains("not run or degraded: "), "{text}");
    assert_eq!(diagnostics[0]["data"]["decision"], "indeterminate");
    let message = client.shown().await;
    assert!(
        message["message"].as_str().unwrap().contains("incomplete"),
        "{message}"
    );
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_cannot_be_set_up_is_reported_not_hidden() {
    let workspace = Workspace::new(&[(API_TS, "x\n")]);
    let options = Options::new(Box::new(|_root| {
        Err(Error::HostCommand("unbalanced quotes in \"asp 'x\"".into()))
    }));
    let mut client = TestClient::with_options(options);
    client.initialize(&workspace.root(), plain_client()).await;
    let message = client.shown().await;
    assert!(
        message["message"]
            .as_str()
            .unwrap()
            .contains("(input): invalid host command"),
        "{message}"
    );
    let uri = workspace.uri(API_TS);
    client.open(&uri, 1, "x\n");
    let published = client.published(&uri).await;
    assert!(
        is_notice(&published["diagnostics"][0], "not-run/input"),
        "{published}"
    );
    client.stop().await;
}
