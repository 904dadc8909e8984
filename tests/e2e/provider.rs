//! `asp-bridge provider hygiene` (and `linters`) as its own process, driven over stdio by a small scripted host
//! built on bridge-core's peer: the lifecycle (`initialize` with version negotiation, the
//! `initialized` grant, `shutdown`, `exit`), `check/evaluate` reading only through the host's
//! `workspace/readBlob`, answers that validate against the ASP schemas, and `$/cancelRequest`.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rpc_peer::child::program::BUILD_FINGERPRINT_ENV;
use rpc_peer::peer::{
    Answer, CallOptions, ExitProbe, Handler, IncomingRequest, Peer, PeerConfig, method_not_found,
};
use rpc_peer::{Error, ExitStatus, FailClass};
use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::process::{Child, Command};
use tokio::sync::Notify;

use test_support::schema::asp_errors;

use crate::support::{blob_id, bridge_bin};

mod linters;

/// The host side: serves blobs from memory (utf-8), records every id asked for, and never answers
/// a read of `hang` (it says when one arrived, and when its handler was dropped by a cancel).
#[derive(Default)]
struct Host {
    blobs: HashMap<String, String>,
    hang: Option<String>,
    asked: Mutex<Vec<String>>,
    hanging: Arc<Notify>,
    dropped: Arc<Notify>,
}

/// Signals when the handler holding it is dropped.
struct OnDrop(Arc<Notify>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

impl Handler for Host {
    fn request(&self, request: IncomingRequest) -> Answer {
        if request.method != "workspace/readBlob" {
            let error = method_not_found(&request.method);
            return Box::pin(async move { Err(error) });
        }
        let params: Value = request.params().unwrap();
        let ids: Vec<String> = serde_json::from_value(params["blobs"].clone()).unwrap();
        self.asked.lock().unwrap().extend(ids.iter().cloned());
        if ids.iter().any(|id| Some(id) == self.hang.as_ref()) {
            self.hanging.notify_one();
            let guard = OnDrop(self.dropped.clone());
            return Box::pin(async move {
                let _guard = guard;
                std::future::pending::<()>().await;
                unreachable!()
            });
        }
        let blobs: Vec<Value> = ids
            .iter()
            .filter_map(|id| {
                self.blobs
                    .get(id)
                    .map(|text| json!({"id": id, "encoding": "utf-8", "bytes": text}))
            })
            .collect();
        let reply = serde_json::value::to_raw_value(&json!({ "blobs": blobs })).unwrap();
        Box::pin(async move { Ok(reply) })
    }
}

/// The ASP blob id of `text`.
fn blob(text: &str) -> String {
    bridge_core::changeset::blob_id(text.as_bytes())
}

fn start(host: Arc<Host>) -> (Child, Peer) {
    start_with(host, &[])
}

/// The hygiene provider with `env` set on top of this process's environment.
fn start_with(host: Arc<Host>, env: &[(&str, &str)]) -> (Child, Peer) {
    spawn_provider(host, &["provider", "hygiene"], env)
}

/// `asp-bridge args`, a provider.
fn start_as(host: Arc<Host>, args: &[&str]) -> (Child, Peer) {
    spawn_provider(host, args, &[])
}

fn spawn_provider(host: Arc<Host>, args: &[&str], env: &[(&str, &str)]) -> (Child, Peer) {
    let mut child = Command::new(bridge_bin())
        .args(args)
        .env_remove(BUILD_FINGERPRINT_ENV)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn asp-bridge provider");
    let reader = BufReader::new(child.stdout.take().unwrap());
    let writer = child.stdin.take().unwrap();
    let probe: ExitProbe = Box::new(|| Box::pin(async { (ExitStatus::Unknown, String::new()) }));
    let peer = Peer::connect(reader, writer, PeerConfig::default(), host, probe);
    (child, peer)
}

async fn call(peer: &Peer, method: &str, params: Value) -> Result<Value, Error> {
    peer.request::<_, Value>(method, Some(&params), CallOptions::default())
        .await
        .map(|reply| reply.value)
}

fn refused(result: Result<Value, Error>) -> (i64, FailClass) {
    match result {
        Err(Error::Refused {
            code, fail_class, ..
        }) => (code, fail_class),
        other => panic!("expected an error reply, got {other:?}"),
    }
}

fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "host": {"name": "e2e-host", "version": "0"},
        "workspace": {"root": "/repo", "baseline": {"rev": "git:tree:9f3a1c"}},
        "assuranceMode": "advisory"
    })
}

#[tokio::test]
async fn the_hygiene_provider_process_speaks_asp_1_0_through_callbacks_only() {
    let conflict = "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> x\n";
    let key = "  -----BEGIN OPENSSH PRIVATE KEY-----\n"; // pragma: allowlist secret
    let json_text = "{\"ok\": true,}\n";
    let unrelated = "never asked for\n";
    let mut host = Host::default();
    for text in [conflict, key, json_text, unrelated] {
        host.blobs.insert(blob(text), text.to_owned());
    }
    let host = Arc::new(host);
    let (mut child, peer) = start(host.clone());

    let early = call(&peer, "check/evaluate", json!({})).await;
    assert_eq!(
        refused(early),
        (-32002, FailClass::Contract),
        "no work before initialize"
    );
    let skewed = call(&peer, "initialize", initialize_params("asp/2.0")).await;
    assert_eq!(
        refused(skewed),
        (-32014, FailClass::Contract),
        "a major version it cannot speak"
    );
    let init = call(&peer, "initialize", initialize_params("asp/1.0"))
        .await
        .unwrap();
    assert_eq!(
        asp_errors("initialize.schema.json", "result", &init),
        Vec::<String>::new(),
        "{init:#}"
    );
    assert_eq!(
        init["capabilities"]["check"]["diagnosticSources"],
        json!(["hygiene"])
    );
    assert!(
        init["serverInfo"]["fingerprint"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    let grant = json!({
        "grantedPermissions": {"read": ["**/*"], "write": false, "network": false,
            "resourceLimits": {"wallclockMs": 30000}},
        "baseline": {"rev": "git:tree:9f3a1c"}
    });
    assert!(asp_errors("initialize.schema.json", "initializedParams", &grant).is_empty());
    peer.notify("initialized", Some(&grant)).unwrap();

    let params = json!({
        "changeset": {
            "baseline": {"rev": "git:tree:9f3a1c", "stampedAt": "2026-06-16T10:00:00Z"},
            "changes": [
                {"path": "src/merge.txt", "kind": "create", "after": blob(conflict)},
                {"path": "keys/id_ed25519", "kind": "create", "after": blob(key)},
                {"path": "app.json", "kind": "create", "after": blob(json_text)}
            ]
        },
        "scope": "changeset",
        "comparison": "introduced",
        "changesetDigest": "sha256:from-the-host"
    });
    assert!(
        asp_errors(
            "check-evaluate.schema.json",
            "params",
            &json!({
                "changeset": params["changeset"], "scope": "changeset", "comparison": "introduced"
            })
        )
        .is_empty()
    );
    let assessment = call(&peer, "check/evaluate", params.clone()).await.unwrap();
    assert_eq!(
        asp_errors("check-evaluate.schema.json", "result", &assessment),
        Vec::<String>::new(),
        "{assessment:#}"
    );
    let found: Vec<(String, Value)> = assessment["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["location"].clone(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "hygiene/merge-conflict".to_owned(),
                json!({"path": "src/merge.txt",
                "range": {"start": {"line": 1, "char": 0}, "end": {"line": 5, "char": 9}}})
            ),
            (
                "hygiene/private-key".to_owned(),
                json!({"path": "keys/id_ed25519",
                "range": {"start": {"line": 0, "char": 7}, "end": {"line": 0, "char": 32}}})
            ),
            (
                "hygiene/json-syntax".to_owned(),
                json!({"path": "app.json",
                "range": {"start": {"line": 0, "char": 12}, "end": {"line": 0, "char": 13}}})
            ),
        ]
    );
    assert_eq!(
        assessment["validAsOf"]["baseline"],
        params["changeset"]["baseline"]
    );
    assert_eq!(
        assessment["validAsOf"]["changesetDigest"],
        "sha256:from-the-host"
    );
    let mut read = vec![blob(conflict), blob(key), blob(json_text)];
    read.sort();
    assert_eq!(assessment["validAsOf"]["blobs"], json!(read));
    let mut asked = host.asked.lock().unwrap().clone();
    asked.sort();
    assert_eq!(asked, read, "only the request's blobs were read, each once");

    let bad = call(
        &peer,
        "check/evaluate",
        json!({"changeset": {"changes": []}}),
    )
    .await;
    assert_eq!(refused(bad), (-32602, FailClass::Input));

    assert_eq!(
        call(&peer, "shutdown", Value::Null).await.unwrap(),
        Value::Null
    );
    let late = call(&peer, "check/evaluate", params).await;
    assert_eq!(refused(late).1, FailClass::Health, "no work after shutdown");
    peer.notify("exit", None::<&Value>).unwrap();
    let status = child.wait().await.unwrap();
    assert!(status.success(), "exit ends the process: {status}");
}

#[tokio::test]
async fn a_cancelled_evaluation_stops_and_cancels_its_own_reads() {
    let text = "slow\n";
    let host = Host {
        hang: Some(blob(text)),
        ..Host::default()
    };
    let host = Arc::new(host);
    let (mut child, peer) = start(host.clone());
    call(&peer, "initialize", initialize_params("asp/1.0"))
        .await
        .unwrap();
    let params = json!({
        "changeset": {"baseline": {"rev": "git:tree:1"},
            "changes": [{"path": "a.txt", "kind": "create", "after": blob(text)}]},
        "scope": "changeset", "comparison": "all"
    });
    let evaluation =
        peer.request::<_, Value>("check/evaluate", Some(&params), CallOptions::default());
    let hanging = host.hanging.notified();
    let evaluation = tokio::spawn(evaluation);
    hanging.await;
    // Dropping the caller's future sends `$/cancelRequest`; the provider drops its read, which
    // cancels the host-side handler in turn.
    let dropped = host.dropped.notified();
    evaluation.abort();
    dropped.await;
    // The provider still serves.
    assert_eq!(
        call(&peer, "shutdown", Value::Null).await.unwrap(),
        Value::Null
    );
    peer.close_input();
    let status = child.wait().await.unwrap();
    assert!(
        status.success(),
        "the end of its input ends the process: {status}"
    );
}

/// The build fingerprint is the digest of the executable: the one the host hands over when it runs
/// the provider from its own executable (so the file is hashed once), else the provider's own hash
/// of itself; a handed-over value that is no sha256 digest is ignored.
#[tokio::test]
async fn the_build_fingerprint_is_the_digest_the_host_hands_over_or_its_own_hash() {
    let own = blob_id(&std::fs::read(bridge_bin()).unwrap()).replace("blob:sha256:", "sha256:");
    let handed = format!("sha256:{}", "ab".repeat(32));
    for (env, expected) in [
        (Some(handed.as_str()), handed.as_str()),
        (Some("sha256:not-a-digest"), own.as_str()),
        (None, own.as_str()),
    ] {
        let env: Vec<(&str, &str)> = env
            .map(|v| (BUILD_FINGERPRINT_ENV, v))
            .into_iter()
            .collect();
        let (mut child, peer) = start_with(Arc::new(Host::default()), &env);
        let init = call(&peer, "initialize", initialize_params("asp/1.0"))
            .await
            .unwrap();
        assert_eq!(init["serverInfo"]["fingerprint"], expected, "{env:?}");
        child.kill().await.unwrap();
    }
}
