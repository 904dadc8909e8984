//! A checker of a few lines on the kit (a finding on every line holding `FIXME`), enrolled in the
//! embedded host as a `[[provider]]` from a `host.toml`: this test binary is also the provider
//! (`--serve`), and the test evaluates a change through `core-host` and finds its finding and
//! its assessment in the verdict.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use provider_kit::digest::fingerprint;
use provider_kit::text::Text;
use provider_kit::{About, Checked, Checker, Finding, Identity, Run, Severity, Side, Workspace};
use rpc_peer::peer::{CallOptions, ExitProbe, NoRequests, Peer, PeerConfig};
use serde_json::{Value, json};

/// The test checker: `fixme/fixme` on every line of a side that holds `FIXME`.
struct Fixme;

impl Checker for Fixme {
    type Rule = &'static str;
    type Settings = ();

    fn about(&self) -> About {
        About {
            id: "fixme",
            source: "fixme",
            publisher: "provider-kit tests",
            per_rule_cap: None,
        }
    }

    fn rules(&self) -> Vec<&'static str> {
        vec!["fixme/fixme"]
    }

    fn rule_id<'r>(&'r self, rule: &'r &'static str) -> &'r str {
        rule
    }

    fn configure(&self, _: Option<&Value>) -> Result<((), Value), String> {
        Ok(((), json!({})))
    }

    fn check<W: Workspace>(
        &self,
        sides: Vec<Side>,
        _run: &Run<'_, Self, W>,
    ) -> impl Future<Output = Result<Vec<Checked>, String>> + Send {
        let checked = sides.iter().map(|side| {
            let text = String::from_utf8_lossy(&side.bytes);
            let text = Text::new(&text);
            let findings = (0..text.lines.len())
                .filter(|&i| text.content(i).contains("FIXME"))
                .map(|i| Finding {
                    code: "fixme/fixme".into(),
                    severity: Severity::Warning,
                    message: "a FIXME is left in".into(),
                    range: Some(text.line_range(i)),
                    fingerprint: fingerprint(["fixme/fixme", &side.path, text.content(i)]),
                    help: "Fix it, or say why not.".into(),
                    help_uri: "https://example.invalid/fixme".into(),
                });
            Checked {
                findings: findings.collect(),
                ..Checked::default()
            }
        });
        std::future::ready(Ok(checked.collect()))
    }
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    if std::env::args().any(|a| a == "--serve") {
        let identity = Identity {
            version: "0.0.1".into(),
            fingerprint: "sha256:test".into(),
        };
        let served = runtime.block_on(provider_kit::serve(
            tokio::io::stdin(),
            tokio::io::stdout(),
            Fixme,
            identity,
        ));
        served.expect("served");
        return;
    }
    runtime.block_on(a_checker_on_the_kit_is_enrolled_by_the_host_and_its_finding_comes_back());
    eprintln!(
        "test a_checker_on_the_kit_is_enrolled_by_the_host_and_its_finding_comes_back ... ok"
    );
}

async fn a_checker_on_the_kit_is_enrolled_by_the_host_and_its_finding_comes_back() {
    let repo = test_support::git::Repo::new(&[("notes.txt", "one\n")]);
    repo.write("notes.txt", "one\ntwo FIXME\nthree\n");
    let dir = tempfile::tempdir().expect("a scratch folder");
    let exe = std::env::current_exe().expect("this test binary");
    let config = format!(
        "[hygiene]\nenabled = false\n[[provider]]\nid = \"fixme\"\ncommand = [{:?}, \"--serve\"]\nrequired-for = [\"sweep\"]\n",
        exe.to_string_lossy()
    );
    std::fs::write(dir.path().join("host.toml"), config).expect("host.toml");
    let (outer, inner) = tokio::io::duplex(1 << 20);
    let (reader, writer) = tokio::io::split(inner);
    let options = core_host::Options {
        repo: repo.path().to_path_buf(),
        config: Some(dir.path().join("host.toml")),
        builtin_launcher: Vec::new(),
        check_linter: |_| Ok(()),
    };
    let host = tokio::spawn(core_host::serve(reader, writer, options));
    let (from_host, to_host) = tokio::io::split(outer);
    let probe: ExitProbe =
        Box::new(|| Box::pin(async { (rpc_peer::ExitStatus::Unknown, String::new()) }));
    let peer = Peer::connect(
        tokio::io::BufReader::new(from_host),
        to_host,
        PeerConfig::default(),
        Arc::new(NoRequests),
        probe,
    );
    let call = |method: &'static str, params: Value| {
        let peer = peer.clone();
        async move {
            let options = CallOptions {
                timeout: Some(Duration::from_secs(60)),
                progress: None,
            };
            let raw = peer.request_raw(method, Some(&params), options).await;
            serde_json::from_str::<Value>(raw.expect(method).get()).expect("JSON")
        }
    };
    let status = call("host/status", json!({})).await;
    let baseline = status["workspace"]["baseline"].clone();
    let changeset = bridge_core::Worktree::new(repo.path())
        .changeset(&baseline, &bridge_core::worktree::Scope::Changes)
        .await
        .expect("a changeset");
    let params =
        json!({"callSite": "sweep", "changeset": changeset.changeset, "comparison": "all"});
    let verdict = call("host/evaluateChangeset", params).await;
    let findings = verdict["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{verdict:#}");
    let diagnostic = &findings[0]["diagnostic"];
    assert_eq!(diagnostic["code"], "fixme/fixme", "{verdict:#}");
    assert_eq!(diagnostic["location"]["path"], "notes.txt");
    assert_eq!(diagnostic["location"]["range"]["start"]["line"], 1);
    // The assessment was accepted whole: complete coverage, and the receipt names the provider
    // and the blobs its validAsOf says it read.
    assert_eq!(verdict["coverage"]["exhaustive"], true, "{verdict:#}");
    assert_eq!(verdict["decision"], "allow", "a warning denies nothing");
    let receipt = &verdict["receipt"];
    assert_eq!(receipt["providerIds"], json!(["fixme"]), "{verdict:#}");
    assert_eq!(receipt["providerProvenance"][0]["identity"], "fixme");
    assert!(
        !receipt["validAsOf"]["blobs"].as_array().unwrap().is_empty(),
        "{verdict:#}"
    );
    drop(peer);
    let _ = tokio::time::timeout(Duration::from_secs(10), host).await;
}
