//! Findings reach the editor at the right place, follow edits, and only the newest evaluation of a
//! document is ever shown.

use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::host::{Answer, TestHost};
use crate::support::{
    API_TS, TestClient, Workspace, api_ts_denied, clean, decision, denies_in_api_ts, finding,
    plain_client, rich_client, span, utf8_client,
};

/// `😀` is 2 UTF-16 code units and 4 UTF-8 bytes; `漢` and `字` are 1 unit and 3 bytes each.
const EMOJI_LINE: &str = "// 😀漢字 key = \"AKIA\";\n";

fn emoji_workspace() -> (Workspace, TestHost) {
    // `key` is UTF-16 columns 8..11 on line 0: `// ` 3 + 😀 2 + 漢 1 + 字 1 + ` ` 1.
    api_ts_denied(EMOJI_LINE, (0, 8), (0, 11), "lattice/secrets")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_a_document_shows_the_hosts_finding_as_an_error_with_code_source_and_data() {
    let (workspace, host) = emoji_workspace();
    let mut client = TestClient::start(&host);
    let init = client.initialize(&workspace.root(), rich_client()).await;
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(
        init["capabilities"]["textDocumentSync"]["change"], 2,
        "incremental"
    );
    assert_eq!(
        init["capabilities"]["diagnosticProvider"]["interFileDependencies"],
        false
    );
    let uri = workspace.uri(API_TS);
    client.open(&uri, 1, EMOJI_LINE);

    let published = client.published(&uri).await;
    assert_eq!(published["version"], 1);
    let diagnostics = published["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{published}");
    let d = &diagnostics[0];
    assert_eq!(
        span(d),
        ((0, 8), (0, 11)),
        "UTF-16 columns, as the host sent them"
    );
    assert_eq!(d["severity"], 1);
    assert_eq!(d["code"], "lattice/secrets");
    assert_eq!(d["source"], "lattice");
    assert_eq!(
        d["codeDescription"]["href"],
        "https://example.test/rules/lattice/secrets"
    );
    assert_eq!(
        d["message"],
        "introduced secret literal\nNext step: Move the secret to runtime configuration."
    );
    assert_eq!(
        d["data"],
        json!({
            "fingerprint": "sha256:deny0001",
            "disposition": "gating",
            "introduced": true,
            "nextStep": "Move the secret to runtime configuration.",
            "nextStepOrigin": "server",
            "authority": {"identity": "the-open-engine", "granted": true, "requirement": "lattice-alpha-check"},
            "receiptId": "eval-deny-0001",
            "decision": "deny",
            "assurance": "gated",
            "authoritative": false,
        })
    );

    let evaluations = host.evaluations();
    assert_eq!(evaluations.len(), 1);
    assert_eq!(evaluations[0]["callSite"], "interactive", "never gate");
    let changes = evaluations[0]["changeset"]["changes"].as_array().unwrap();
    assert!(changes.is_empty(), "the file is as committed: {changes:?}");
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_prefers_utf8_gets_byte_columns() {
    let (workspace, host) = emoji_workspace();
    let mut client = TestClient::start(&host);
    let init = client.initialize(&workspace.root(), utf8_client()).await;
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    assert!(
        init["capabilities"].get("diagnosticProvider").is_none(),
        "push only"
    );
    let uri = workspace.uri(API_TS);
    client.open(&uri, 1, EMOJI_LINE);
    let published = client.published(&uri).await;
    let d = &published["diagnostics"][0];
    // `// ` 3 + 😀 4 + 漢 3 + 字 3 + ` ` 1: 14 bytes before `key`.
    assert_eq!(span(d), ((0, 14), (0, 17)));
    assert!(
        d.get("codeDescription").is_none(),
        "not advertised by the client"
    );

    // The client's edits are in bytes too: an emoji at the start of the line is 4 of them.
    client.change(&uri, 2, (0, 0), (0, 0), "😀");
    let moved = client.published(&uri).await;
    assert_eq!(span(&moved["diagnostics"][0]), ((0, 18), (0, 21)));
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_move_the_findings_until_the_next_save_and_a_cut_one_goes_away() {
    let text = "a\nb\n    secret = 1\n";
    let (workspace, host) = api_ts_denied(text, (2, 4), (2, 10), "x/secret");
    let (mut client, uri) = TestClient::opened(&host, &workspace, plain_client(), API_TS).await;
    let first = client.published(&uri).await;
    assert_eq!(span(&first["diagnostics"][0]), ((2, 4), (2, 10)));

    client.change(&uri, 2, (0, 0), (0, 0), "\n");
    let moved = client.published(&uri).await;
    assert_eq!(moved["version"], 2);
    assert_eq!(span(&moved["diagnostics"][0]), ((3, 4), (3, 10)));

    client.change(&uri, 3, (3, 0), (3, 0), "😀");
    let moved = client.published(&uri).await;
    assert_eq!(moved["version"], 3);
    assert_eq!(
        span(&moved["diagnostics"][0]),
        ((3, 6), (3, 12)),
        "an emoji is 2 UTF-16 units"
    );

    client.change(&uri, 4, (3, 8), (3, 14), "");
    let cut = client.published(&uri).await;
    assert_eq!(cut["version"], 4);
    assert_eq!(cut["diagnostics"], json!([]));
    assert_eq!(
        host.evaluations().len(),
        1,
        "edits alone never ask the host"
    );
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saving_asks_the_host_again_about_the_file_on_disk() {
    let (workspace, host) = api_ts_denied("one\n", (0, 0), (0, 3), "x/old");
    let (mut client, uri) = TestClient::opened(&host, &workspace, plain_client(), API_TS).await;
    assert_eq!(
        client.published(&uri).await["diagnostics"][0]["code"],
        "x/old"
    );

    client.change(&uri, 2, (1, 0), (1, 0), "two\n");
    workspace.write(API_TS, "one\ntwo\n");
    host.plan(Answer::Decision(denies_in_api_ts((1, 0), (1, 3), "x/new")));
    client.save(&uri);
    let published = client
        .wait_for(|m| m["params"]["diagnostics"][0]["code"] == "x/new")
        .await;
    assert_eq!(published["params"]["version"], 2);
    assert_eq!(
        span(&published["params"]["diagnostics"][0]),
        ((1, 0), (1, 3))
    );

    let evaluations = host.evaluations();
    assert_eq!(evaluations.len(), 2);
    let change = &evaluations[1]["changeset"]["changes"][0];
    assert_eq!(change["path"], API_TS);
    assert_eq!(change["kind"], "modify");
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_result_for_version_2_arriving_after_version_3_is_never_published() {
    let workspace = Workspace::new(&[(API_TS, "v1\n")]);
    let host = TestHost::new(clean());
    let (mut client, uri) = TestClient::opened(&host, &workspace, plain_client(), API_TS).await;
    assert_eq!(client.published(&uri).await["version"], 1);

    // Version 2 is saved; the host sits on its answer.
    let (release_v2, held) = oneshot::channel();
    host.plan(Answer::Held(
        held,
        denies_in_api_ts((0, 0), (0, 2), "stale/v2"),
    ));
    host.plan(Answer::Decision(denies_in_api_ts(
        (0, 0),
        (0, 2),
        "fresh/v3",
    )));
    client.change(&uri, 2, (0, 1), (0, 2), "2");
    client.save(&uri);
    host.wait_evaluations(2).await;

    // Version 3 is saved while version 2 is still being evaluated; then version 2's answer comes.
    client.change(&uri, 3, (0, 1), (0, 2), "3");
    client.save(&uri);
    client.barrier().await;
    release_v2.send(()).unwrap();

    let published = client
        .wait_for(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["diagnostics"][0]["code"] == "fresh/v3"
        })
        .await;
    assert_eq!(published["params"]["version"], 3);
    host.wait_evaluations(3).await;
    let stale: Vec<&Value> = client
        .seen
        .iter()
        .filter(|m| m.to_string().contains("stale/v2"))
        .collect();
    assert!(
        stale.is_empty(),
        "version 2's result was published: {stale:?}"
    );
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_that_arrives_after_unsaved_edits_is_moved_with_them() {
    let workspace = Workspace::new(&[(API_TS, "key = 1\n")]);
    let host = TestHost::new(clean());
    let (release, held) = oneshot::channel();
    host.plan(Answer::Held(
        held,
        denies_in_api_ts((0, 0), (0, 3), "x/key"),
    ));
    let (mut client, uri) = TestClient::opened(&host, &workspace, plain_client(), API_TS).await;
    host.wait_evaluations(1).await;
    client.change(&uri, 2, (0, 0), (0, 0), "// new first line\n");
    client.barrier().await;
    release.send(()).unwrap();
    let published = client.published(&uri).await;
    assert_eq!(published["version"], 2);
    assert_eq!(span(&published["diagnostics"][0]), ((1, 0), (1, 3)));
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_document_clears_its_diagnostics() {
    let (workspace, host) = emoji_workspace();
    let (mut client, uri) = TestClient::opened(&host, &workspace, plain_client(), API_TS).await;
    assert_eq!(
        client.published(&uri).await["diagnostics"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    client.close(&uri);
    let cleared = client.published(&uri).await;
    assert_eq!(cleared["diagnostics"], json!([]));
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pulling_client_gets_the_published_set_and_unchanged_when_it_has_it() {
    let (workspace, host) = emoji_workspace();
    let (mut client, uri) = TestClient::opened(&host, &workspace, rich_client(), API_TS).await;
    client.published(&uri).await;
    let params = json!({"textDocument": {"uri": uri}});
    let full = client.request("textDocument/diagnostic", params).await["result"].clone();
    assert_eq!(full["kind"], "full");
    assert_eq!(full["items"][0]["code"], "lattice/secrets");
    let id = full["resultId"].clone();
    let again = json!({"textDocument": {"uri": uri}, "previousResultId": id});
    let unchanged = client.request("textDocument/diagnostic", again).await["result"].clone();
    assert_eq!(unchanged, json!({"kind": "unchanged", "resultId": id}));
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_progress_becomes_work_done_progress_for_a_client_that_shows_it() {
    let (workspace, host) = emoji_workspace();
    let report = json!({"kind": "report", "percentage": 50, "message": "half way"});
    host.plan(Answer::WithProgress(vec![report], clean()));
    let (mut client, _uri) = TestClient::opened(&host, &workspace, rich_client(), API_TS).await;
    let create = client
        .wait_for(|m| m["method"] == "window/workDoneProgress/create")
        .await;
    let token = create["params"]["token"].clone();
    let begin = client.wait_for(|m| m["method"] == "$/progress").await;
    assert_eq!(begin["params"]["token"], token);
    assert_eq!(begin["params"]["value"]["kind"], "begin");
    assert_eq!(begin["params"]["value"]["percentage"], 50);
    assert_eq!(begin["params"]["value"]["message"], "half way");
    let end = client.wait_for(|m| m["method"] == "$/progress").await;
    assert_eq!(end["params"]["value"]["kind"], "end");
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_host_progress_reaches_a_slow_client_as_the_latest_report_only() {
    let (workspace, host) = emoji_workspace();
    let flood: Vec<Value> = (0..5_000)
        .map(|i| json!({"kind": "report", "percentage": i / 50, "message": format!("step {i}")}))
        .collect();
    host.plan(Answer::WithProgress(flood, clean()));
    let mut client = TestClient::initialized(&host, &workspace, rich_client()).await;
    // The client takes its time to create the progress: meanwhile the host's flood is over.
    let release = client.hold("window/workDoneProgress/create");
    let uri = workspace.uri(API_TS);
    client.open(&uri, 1, EMOJI_LINE);
    // The create and the publish race each other: progress is best-effort, so either comes first.
    let (mut created, mut published) = (false, false);
    while !(created && published) {
        let message = client
            .wait_for(|m| {
                m["method"] == "window/workDoneProgress/create"
                    || (m["method"] == "textDocument/publishDiagnostics"
                        && m["params"]["uri"] == uri)
            })
            .await;
        created |= message["method"] == "window/workDoneProgress/create";
        published |= message["method"] == "textDocument/publishDiagnostics";
    }
    host.wait_evaluations(1).await;
    release.send_replace(true);
    let mut values = Vec::new();
    loop {
        let progress = client.wait_for(|m| m["method"] == "$/progress").await;
        let value = progress["params"]["value"].clone();
        if value["kind"] == "end" {
            break;
        }
        values.push(value);
    }
    assert_eq!(values[0]["kind"], "begin");
    assert_eq!(
        values.last().unwrap()["message"],
        "step 4999",
        "the latest report is the last one shown"
    );
    assert!(
        values.len() < 50,
        "not one report per host notification: {} of 5,000",
        values.len()
    );
    client.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_answered_before_the_host_did_is_followed_by_a_refresh() {
    let (workspace, host) = emoji_workspace();
    let (release, held) = oneshot::channel();
    let finding = finding(API_TS, (0, 8), (0, 11), "lattice/secrets");
    host.plan(Answer::Held(held, decision(vec![finding])));
    let (mut client, uri) = TestClient::opened(&host, &workspace, rich_client(), API_TS).await;
    host.wait_evaluations(1).await;
    let params = json!({"textDocument": {"uri": uri}});
    let early = client
        .request("textDocument/diagnostic", params.clone())
        .await["result"]
        .clone();
    assert_eq!(early["items"], json!([]), "nothing is known yet");

    release.send(()).unwrap();
    client
        .wait_for(|m| m["method"] == "workspace/diagnostic/refresh")
        .await;
    let pulled = client.request("textDocument/diagnostic", params).await["result"].clone();
    assert_eq!(pulled["items"][0]["code"], "lattice/secrets");
    assert_ne!(pulled["resultId"], early["resultId"]);
    client.stop().await;
}

/// A tracked file that is now a FIFO is left out of the changeset (never opened): the editor says it
/// was not checked instead of showing an empty, clean-looking list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_left_out_of_the_changeset_says_it_was_not_checked() {
    let workspace = Workspace::new(&[("src/pipe", "text\n")]);
    let pipe = workspace.path().join("src/pipe");
    std::fs::remove_file(&pipe).unwrap();
    test_support::process::mkfifo(&pipe);
    let host = TestHost::new(clean());
    let mut client = TestClient::initialized(&host, &workspace, plain_client()).await;
    let uri = workspace.uri("src/pipe");
    client.open(&uri, 1, "text\n");
    let published = client.published(&uri).await;
    let diagnostics = published["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{published}");
    assert_eq!(diagnostics[0]["code"], "left-out");
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(message.contains("it was not checked"), "{message}");
    client.stop().await;
}
