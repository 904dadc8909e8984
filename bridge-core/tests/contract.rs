//! What the bridge sends validates against the ASP schemas (`schemas/asp/`, copied from the spec):
//! the params of `host/evaluateChangeset` (with a changeset built from a real git working tree) and
//! of `host/queryInspect`.

use std::time::Duration;

use asp_wire::proto::{AdvisoryCallSite, Comparison};
use bridge_core::Worktree;
use bridge_core::worktree::Scope;
use bridge_core::{CallOptions, ClientConfig, HostClient};
use rpc_peer::ExitStatus;
use serde_json::{Value, json};
use test_support::git::Repo;
use test_support::schema::{asp_validator, assert_asp_valid};
use tokio::io::{AsyncBufReadExt, BufReader};

fn validator(def: &str) -> jsonschema::Validator {
    asp_validator("outer-host.schema.json", def)
}

fn assert_valid(def: &str, instance: &Value) {
    assert_asp_valid("outer-host.schema.json", def, instance);
}

/// Sends one request through a real client and returns it as the host would read it.
async fn sent(send: impl FnOnce(&HostClient)) -> Value {
    let (bridge, host) = tokio::io::duplex(1 << 20);
    let (bridge_read, bridge_write) = tokio::io::split(bridge);
    let (host_read, _host_write) = tokio::io::split(host);
    let probe: bridge_core::host::ExitProbe =
        Box::new(|| Box::pin(async { (ExitStatus::Unknown, String::new()) }));
    let config = ClientConfig {
        request_timeout: Duration::from_secs(5),
        ..ClientConfig::default()
    };
    let client = HostClient::connect(BufReader::new(bridge_read), bridge_write, config, probe);
    send(&client);
    let line = BufReader::new(host_read)
        .lines()
        .next_line()
        .await
        .unwrap()
        .unwrap();
    serde_json::from_str(&line).unwrap()
}

#[tokio::test]
async fn evaluate_changeset_params_match_the_schema() {
    let dir = Repo::new(&[("edited.txt", "before\n"), ("gone.txt", "before\n")]);
    let repo = dir.path();
    std::fs::write(repo.join("edited.txt"), "after\n").unwrap();
    std::fs::remove_file(repo.join("gone.txt")).unwrap();
    std::fs::write(repo.join("new ü.txt"), "new\n").unwrap();
    let baseline = json!({"rev": "tree:abc123", "stampedAt": "2026-06-22T20:00:00Z"});
    let changeset = Worktree::new(repo)
        .changeset(&baseline, &Scope::Changes)
        .await
        .unwrap()
        .changeset;
    assert_eq!(changeset.changes.len(), 3);

    for (call_site, comparison) in [
        (AdvisoryCallSite::Interactive, None),
        (AdvisoryCallSite::Sweep, Some(Comparison::Introduced)),
    ] {
        let changeset = changeset.clone();
        let request = sent(|client| {
            drop(client.evaluate_changeset(
                call_site,
                changeset,
                comparison,
                CallOptions::default(),
            ));
        })
        .await;
        assert_eq!(request["method"], "host/evaluateChangeset");
        assert_valid("evaluateChangesetParams", &request["params"]);
    }
}

#[tokio::test]
async fn query_inspect_params_match_the_schema() {
    let request = sent(|client| {
        drop(client.query_inspect(
            json!({"kind": "fixture/graph"}),
            Some(500),
            CallOptions::default(),
        ));
    })
    .await;
    assert_eq!(request["method"], "host/queryInspect");
    assert_eq!(request["params"]["callSite"], "interactive");
    assert_valid("queryInspectParams", &request["params"]);
}

#[test]
fn the_schema_refuses_what_the_bridge_must_never_send() {
    // The check can fail: a gate call site with a malformed change is refused by the same schema.
    let bad = json!({"callSite": "gatekeeper", "changeset": {"baseline": {"rev": "x"}, "changes": [{"path": "a", "kind": "modify"}]}});
    assert!(!validator("evaluateChangesetParams").is_valid(&bad));
}
