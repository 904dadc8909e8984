//! `asp-bridge provider linters` as its own process: an evaluation cancelled while its linter runs
//! ends the linter and, once the linter is reaped, what it started in a session of its own (the
//! provider is its linters' subreaper), however long the linter would have run.

use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

/// A fake linter that starts a helper in a new session, writes the helper's pid beside itself
/// once it is known, and then hangs.
const STARTS_A_HELPER_THEN_HANGS: &str = r#"#!/bin/sh
dir=$(dirname "$0")
mkfifo "$dir/ready"
setsid sh -c 'echo $$ > "$1"; exec sleep 300' helper "$dir/ready" </dev/null >/dev/null 2>&1 &
read pid < "$dir/ready"
echo "$pid" > "$dir/helper.pid.tmp"
mv "$dir/helper.pid.tmp" "$dir/helper.pid"
exec sleep 300
"#;

/// Waits up to 10 s for `until`.
async fn within_10_s(until: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !until() {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

#[tokio::test]
async fn a_cancelled_evaluation_ends_what_its_linter_started_in_a_session_of_its_own() {
    let tools = tempfile::tempdir().unwrap();
    let fake = tools.path().join("starts-a-helper");
    std::fs::write(&fake, STARTS_A_HELPER_THEN_HANGS).unwrap();
    let chmod = std::process::Command::new("chmod")
        .args(["755", fake.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(chmod.success());
    let text = "import os\n";
    let mut host = Host::default();
    host.blobs.insert(blob(text), text.to_owned());
    let linter = json!({"id": "fake", "command": [fake, "{files}"], "files": ["**/*.py"]});
    let (mut child, peer) = start_as(
        Arc::new(host),
        &["provider", "linters", "--linter", &linter.to_string()],
    );
    call(&peer, "initialize", initialize_params("asp/1.0"))
        .await
        .unwrap();
    let grant = json!({
        "grantedPermissions": {"read": ["**/*"], "write": false, "network": false},
        "baseline": {"rev": "git:tree:1"}
    });
    peer.notify("initialized", Some(&grant)).unwrap();
    let params = json!({
        "changeset": {"baseline": {"rev": "git:tree:1"},
            "changes": [{"path": "a.py", "kind": "create", "after": blob(text)}]},
        "scope": "changeset", "comparison": "all"
    });
    let evaluation = tokio::spawn(async move {
        let _ = peer
            .request::<_, Value>("check/evaluate", Some(&params), CallOptions::default())
            .await;
    });
    let pid_file = tools.path().join("helper.pid");
    assert!(
        within_10_s(|| pid_file.exists()).await,
        "the fake started its helper"
    );
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Dropping the caller's future sends `$/cancelRequest`: the provider drops the evaluation.
    evaluation.abort();
    let gone = within_10_s(|| !Path::new(&format!("/proc/{pid}")).exists()).await;
    if !gone {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    assert!(gone, "the helper {pid} outlived the cancelled run");
    child.kill().await.unwrap();
}
