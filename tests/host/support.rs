//! Helpers: a git repository (`test_support::git`), a trusted configuration naming the fake provider, the host process
//! with a JSON-RPC peer on its stdio, and the outer schema every answer is checked against.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rpc_peer::peer::{CallOptions, ExitProbe, NoRequests, Peer, PeerConfig};
use rpc_peer::{ExitStatus, FailClass};
use serde_json::{Value, json};
use tokio::io::BufReader;

pub(crate) const ASP_BRIDGE: &str = env!("CARGO_BIN_EXE_asp-bridge");
/// The fake provider (package `fake-provider`, built beside the bridge).
pub(crate) fn fake() -> &'static str {
    test_support::fake_provider_bin(ASP_BRIDGE)
        .to_str()
        .expect("a UTF-8 path")
}
/// Deadline of one call in these tests; a hung host fails the test instead of hanging it.
const CALL: Duration = Duration::from_secs(60);

pub(crate) use test_support::git::Repo;

/// What `asp-bridge host serve --repo REPO --config FILE` does with no client (stdin closed): for a
/// configuration it refuses before serving.
pub(crate) fn serve_with_config(repo: &Path, file: &Path) -> std::process::Output {
    std::process::Command::new(ASP_BRIDGE)
        .args(["host", "serve", "--repo"])
        .arg(repo)
        .arg("--config")
        .arg(file)
        .stdin(Stdio::null())
        .output()
        .expect("asp-bridge runs")
}

/// `asp-bridge host serve --repo REPO` with its stdin and stdout piped for a client, no
/// configuration named in the environment, killed when dropped.
pub(crate) fn host_serve(repo: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(ASP_BRIDGE);
    command
        .args(["host", "serve", "--repo"])
        .arg(repo)
        .env_remove("ASP_BRIDGE_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// A git repository with one committed file, `a.txt`.
pub(crate) fn repo() -> Repo {
    Repo::new(&[("a.txt", "first\n")])
}

/// [`Host::with_well_provider`] on a fresh [`repo`]: the repository, the configuration, the host.
pub(crate) fn well_host() -> (Repo, Config, Host) {
    let repo = repo();
    let (config, host) = Host::with_well_provider(repo.path());
    (repo, config, host)
}

/// One `[[provider]]` entry naming the fake provider.
pub(crate) struct Provider {
    pub(crate) id: &'static str,
    pub(crate) args: Vec<String>,
    pub(crate) required_for: &'static str,
    pub(crate) timeout_ms: u64,
    pub(crate) read: Option<&'static str>,
    pub(crate) command: Option<Vec<String>>,
    pub(crate) protocol: &'static str,
    /// More `key = value` lines of the entry.
    pub(crate) extra: String,
}

impl Provider {
    /// A required (interactive, sweep) fake provider with `fault`.
    pub(crate) fn fake(fault: &str) -> Provider {
        Provider {
            id: "fake",
            args: vec!["--fault".into(), fault.into()],
            required_for: r#"["interactive", "sweep"]"#,
            timeout_ms: 20_000,
            read: None,
            command: None,
            protocol: "asp/1.0",
            extra: String::new(),
        }
    }

    /// The same provider with `timeout-ms = ms`.
    pub(crate) fn timeout_ms(mut self, ms: u64) -> Provider {
        self.timeout_ms = ms;
        self
    }

    /// Restarts after 1 ms (doubling), so repeated failures quarantine it quickly.
    pub(crate) fn restart_ms(&mut self) {
        self.extra.push_str("restart-delay-ms = 1\n");
    }
}

/// A configuration directory with `host.toml`; the fake providers record what they receive in it.
pub(crate) struct Config {
    pub(crate) dir: tempfile::TempDir,
}

impl Config {
    pub(crate) fn new(providers: &[Provider]) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("[hygiene]\nenabled = false\n");
        for p in providers {
            let mut command = p.command.clone().unwrap_or_else(|| {
                let file = |ending| dir.path().join(format!("{}.{ending}", p.id));
                let mut c = vec![fake().to_owned()];
                c.extend(p.args.iter().cloned());
                for (flag, ending) in [("--pid-file", "pid"), ("--record", "jsonl")] {
                    c.push(flag.into());
                    c.push(file(ending).to_string_lossy().into_owned());
                }
                c
            });
            let command: Vec<String> = command.drain(..).map(|c| format!("{c:?}")).collect();
            text.push_str(&format!(
                "[[provider]]\nid = {:?}\ncommand = [{}]\nprotocol = {:?}\nrequired-for = {}\ntimeout-ms = {}\n",
                p.id,
                command.join(", "),
                p.protocol,
                p.required_for,
                p.timeout_ms
            ));
            if let Some(read) = p.read {
                text.push_str(&format!("read = {read}\n"));
            }
            text.push_str(&p.extra);
        }
        std::fs::write(dir.path().join("host.toml"), text).unwrap();
        Config { dir }
    }

    pub(crate) fn file(&self) -> PathBuf {
        self.dir.path().join("host.toml")
    }

    /// What provider `id` received, one JSON value per line.
    pub(crate) fn record(&self, id: &str) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join(format!("{id}.jsonl")))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub(crate) fn pid(&self, id: &str) -> Option<u32> {
        std::fs::read_to_string(self.dir.path().join(format!("{id}.pid")))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

/// A running `asp-bridge host serve`.
pub(crate) struct Host {
    pub(crate) child: tokio::process::Child,
    pub(crate) peer: Peer,
    pub(crate) repo: PathBuf,
}

impl Host {
    /// A host on `repo` with one fake provider that has no fault, and its configuration (which
    /// holds what the provider records).
    pub(crate) fn with_well_provider(repo: &Path) -> (Config, Host) {
        let config = Config::new(&[Provider::fake("none")]);
        let host = Host::start(repo, &config);
        (config, host)
    }

    pub(crate) fn start(repo: &Path, config: &Config) -> Host {
        Host::start_with(repo, &["--config", config.file().to_str().unwrap()])
    }

    pub(crate) fn start_with(repo: &Path, args: &[&str]) -> Host {
        Host::start_env(repo, args, &[])
    }

    pub(crate) fn start_env(repo: &Path, args: &[&str], env: &[(&str, &Path)]) -> Host {
        let mut child = host_serve(repo)
            .args(args)
            .envs(env.iter().map(|(k, v)| (*k, *v)))
            .env("ASP_BRIDGE_LOG", "info")
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let probe: ExitProbe =
            Box::new(|| Box::pin(async { (ExitStatus::Unknown, String::new()) }));
        let config = PeerConfig {
            request_timeout: CALL,
            classify: asp_wire::code::fail_class,
            ..PeerConfig::default()
        };
        let peer = Peer::connect(
            BufReader::new(stdout),
            stdin,
            config,
            Arc::new(NoRequests),
            probe,
        );
        Host {
            child,
            peer,
            repo: repo.to_path_buf(),
        }
    }

    /// One call; the raw result or the error's failClass and message.
    pub(crate) async fn call(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, (FailClass, String)> {
        let options = CallOptions {
            timeout: Some(CALL),
            progress: None,
        };
        match self.peer.request_raw(method, Some(&params), options).await {
            Ok(raw) => Ok(serde_json::from_str(raw.get()).unwrap()),
            Err(e) => Err((e.fail_class(), e.to_string())),
        }
    }

    /// `host/status`, checked against the outer schema.
    pub(crate) async fn status(&self) -> Value {
        let status = self.call("host/status", json!({})).await.unwrap();
        valid("statusResult", &status);
        status
    }

    /// The working tree's changes against the host's baseline, as the bridge builds them.
    pub(crate) async fn changeset(&self) -> Value {
        let status = self.status().await;
        let baseline = status["workspace"]["baseline"].clone();
        let built = bridge_core::Worktree::new(&self.repo)
            .changeset(&baseline, &bridge_core::worktree::Scope::Changes)
            .await
            .unwrap();
        serde_json::to_value(built.changeset).unwrap()
    }

    /// `host/evaluateChangeset` of the working tree at `call_site`, checked against the schema.
    pub(crate) async fn evaluate(&self, call_site: &str) -> Value {
        let changeset = self.changeset().await;
        self.evaluate_changeset(call_site, changeset).await
    }

    pub(crate) async fn evaluate_changeset(&self, call_site: &str, changeset: Value) -> Value {
        let params = json!({"callSite": call_site, "changeset": changeset, "comparison": "all"});
        let verdict = self.call("host/evaluateChangeset", params).await.unwrap();
        valid("evaluateChangesetResult", &verdict);
        verdict
    }

    /// Closes the host's stdin and waits for it to exit.
    pub(crate) async fn finish(mut self) -> std::process::ExitStatus {
        self.peer.close_input();
        tokio::time::timeout(CALL, self.child.wait())
            .await
            .expect("the host exits")
            .unwrap()
    }
}

/// Asserts `value` matches `$defs/def` of `outer-host.schema.json`.
pub(crate) fn valid(def: &str, value: &Value) {
    test_support::schema::assert_asp_valid("outer-host.schema.json", def, value);
}

/// The reasons in `coverage.degraded`, and checks they equal `receipt.failures`.
pub(crate) fn reasons(verdict: &Value) -> Vec<String> {
    assert_eq!(
        verdict["coverage"]["degraded"], verdict["receipt"]["failures"],
        "failures mirror degraded coverage"
    );
    verdict["coverage"]["degraded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["reason"].as_str().unwrap().to_owned())
        .collect()
}

/// One evaluation at `call_site` by a host with `providers`, on a repository whose `a.txt` now
/// holds `text`; the host has exited when it returns.
pub(crate) async fn evaluate_once(
    providers: Vec<Provider>,
    text: &str,
    call_site: &str,
) -> (Value, Config) {
    let repo = repo();
    repo.write("a.txt", text);
    let config = Config::new(&providers);
    let host = Host::start(repo.path(), &config);
    let verdict = host.evaluate(call_site).await;
    host.finish().await;
    (verdict, config)
}

/// The one required fake provider with `fault`, on a repository with one changed file.
pub(crate) async fn evaluate_fault(fault: &str, call_site: &str) -> (Value, Config) {
    evaluate_once(vec![Provider::fake(fault)], "second\n", call_site).await
}

/// Asserts that a fake provider doing `fault` at `call_site` leaves the decision indeterminate for
/// `reason` ([`assert_indeterminate`]), with the provider in `state`.
pub(crate) async fn assert_fault_is_indeterminate(
    fault: &str,
    call_site: &str,
    reason: &str,
    state: &str,
) {
    let (verdict, _) = evaluate_fault(fault, call_site).await;
    assert_indeterminate(&verdict, reason);
    assert_eq!(provider_state(&verdict), state, "{verdict:#}");
}

/// The state of the first provider in `coverage.degraded`.
pub(crate) fn provider_state(verdict: &Value) -> &str {
    verdict["coverage"]["degraded"][0]["providerState"]
        .as_str()
        .unwrap_or_default()
}

/// Asserts an indeterminate decision whose only reason is `reason`, for the fake provider.
pub(crate) fn assert_indeterminate(verdict: &Value, reason: &str) {
    assert_eq!(verdict["decision"], "indeterminate", "{verdict:#}");
    assert_eq!(verdict["pass"], false);
    assert_eq!(reasons(verdict), [reason], "{:#}", verdict["coverage"]);
    let degraded = &verdict["coverage"]["degraded"][0];
    assert_eq!(degraded["source"], "fake");
    assert_eq!(degraded["capability"], "check");
    assert_eq!(verdict["coverage"]["required"], json!(["fake"]));
    assert_eq!(verdict["coverage"]["ran"], json!([]));
}
