//! The provider lifecycle and the host's own: the narrowed grant, warm processes, no orphan,
//! shutdown and exit, refusals, repository policy and configuration errors.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use test_support::process::{FifoWriters, ended};

use crate::support::{
    ASP_BRIDGE, Config, Host, Provider, Repo, fake, reasons, repo, serve_with_config, valid,
    well_host,
};

/// A deadline against a hang only.
const LIMIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn the_initialized_grant_is_narrowed_to_the_configured_globs() {
    let repo = repo();
    repo.write("a.txt", "changed\n");
    let mut provider = Provider::fake("none");
    provider.read = Some(r#"["*.txt", "!**/.env*"]"#);
    let config = Config::new(&[provider]);
    let host = Host::start(repo.path(), &config);
    let verdict = host.evaluate("interactive").await;
    assert_eq!(verdict["decision"], "allow");
    let second = host.evaluate("interactive").await;
    assert_eq!(second["decision"], "allow");
    host.finish().await;
    let record = config.record("fake");
    let initialize = record.iter().find(|r| r["event"] == "initialize").unwrap();
    assert_eq!(initialize["data"]["protocolVersion"], "asp/1.0");
    assert_eq!(initialize["data"]["assuranceMode"], "advisory");
    let granted =
        &record.iter().find(|r| r["event"] == "initialized").unwrap()["data"]["grantedPermissions"];
    assert_eq!(granted["read"], json!(["*.txt", "!**/.env*"]));
    assert_eq!(granted["write"], false);
    assert_eq!(granted["network"], false);
    assert_eq!(
        record.iter().filter(|r| r["event"] == "initialize").count(),
        1,
        "the provider is kept warm between evaluations"
    );
}

#[tokio::test]
async fn no_provider_outlives_the_host() {
    let (repo, config, host) = well_host();
    host.status().await;
    let pid = config.pid("fake").expect("the provider started");
    assert!(!ended(pid));
    let status = host.finish().await;
    assert!(status.success(), "{status}");
    assert!(ended(pid), "the provider ended with the host");

    // Killed outright, the host still takes its providers with it.
    let (config, mut host) = Host::with_well_provider(repo.path());
    host.status().await;
    let pid = config.pid("fake").unwrap();
    host.child.start_kill().unwrap();
    host.child.wait().await.unwrap();
    let gone = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(25));
        ended(pid)
    });
    assert!(gone, "the provider died with the killed host");
}

#[tokio::test]
async fn shutdown_stops_the_providers_and_exit_ends_the_host() {
    let (_repo, config, mut host) = well_host();
    host.status().await;
    let pid = config.pid("fake").unwrap();
    assert_eq!(
        host.call("shutdown", json!(null)).await.unwrap(),
        json!(null)
    );
    assert!(ended(pid), "shutdown stops the providers before it answers");
    host.peer.notify("exit", None::<&()>).unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), host.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "exit ends the host even with stdin open");
}

#[tokio::test]
async fn edit_and_apply_are_refused_and_inspect_is_unsupported() {
    let repo = repo();
    let config = Config::new(&[]);
    let host = Host::start(repo.path(), &config);
    for method in ["host/requestEditPlan", "host/applyProposal"] {
        let (class, message) = host.call(method, json!({})).await.unwrap_err();
        assert_eq!(class, rpc_peer::FailClass::Policy, "{message}");
    }
    let inspect = host
        .call(
            "host/queryInspect",
            json!({"callSite": "interactive", "request": {"kind": "x"}}),
        )
        .await
        .unwrap();
    valid("queryInspectResult", &inspect);
    assert_eq!(inspect["coverage"]["degraded"][0]["reason"], "unsupported");
    assert_eq!(inspect["receipt"]["kind"], "inspect");
    host.finish().await;
}

#[tokio::test]
async fn an_invalid_policy_makes_every_decision_indeterminate() {
    let repo = Repo::new(&[
        ("a.txt", "first\n"),
        (".asp/asp.json", "{\"aspVersion\": 1}"),
    ]);
    repo.write("a.txt", "changed\n");
    let (_config, host) = Host::with_well_provider(repo.path());
    let status = host.status().await;
    assert_eq!(status["host"]["state"], "degraded");
    assert_eq!(status["policy"]["activation"], "rejected");
    let bytes = std::fs::read(repo.path().join(".asp/asp.json")).unwrap();
    use sha2::Digest as _;
    let digest: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(status["policy"]["policyDigest"], format!("sha256:{digest}"));
    for call_site in ["interactive", "sweep", "gate"] {
        let verdict = host.evaluate(call_site).await;
        assert_eq!(verdict["decision"], "indeterminate");
        assert!(reasons(&verdict).contains(&"malformed".to_owned()));
        assert_eq!(verdict["policyDigest"], format!("sha256:{digest}"));
    }
    host.finish().await;
}

#[tokio::test]
async fn a_changeset_that_edits_the_policy_cannot_authorize_itself() {
    let repo = repo();
    repo.write(".asp/asp.json", "{}");
    let (_config, host) = Host::with_well_provider(repo.path());
    let verdict = host.evaluate("interactive").await;
    assert_eq!(verdict["decision"], "indeterminate");
    assert!(reasons(&verdict).contains(&"policy-self-authorization".to_owned()));
    host.finish().await;
}

#[tokio::test]
async fn the_baseline_is_restamped_when_head_moves() {
    let repo = repo();
    let config = Config::new(&[]);
    let host = Host::start(repo.path(), &config);
    let before = host.status().await["workspace"]["baseline"]["rev"].clone();
    repo.write("a.txt", "next\n");
    repo.commit();
    let after = host.status().await["workspace"]["baseline"]["rev"].clone();
    assert_ne!(before, after);
    host.finish().await;
}

#[test]
fn a_configuration_error_names_file_line_and_key() {
    let repo = repo();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("host.toml");
    std::fs::write(
        &file,
        "[hygiene]\nenabled = false\n[[provider]]\nid = \"x\"\ncommand = []\n",
    )
    .unwrap();
    let output = serve_with_config(repo.path(), &file);
    assert_eq!(output.status.code(), Some(6), "an input error");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "asp-bridge: input: {}:5: provider[0].command:",
            file.display()
        )),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[tokio::test]
async fn the_configuration_comes_from_asp_bridge_config_or_the_xdg_location() {
    let repo = repo();
    let config = Config::new(&[Provider::fake("none")]);
    let host = Host::start_env(repo.path(), &[], &[("ASP_BRIDGE_CONFIG", &config.file())]);
    let status = host.status().await;
    assert_eq!(status["servers"][0]["id"], "fake");
    host.finish().await;

    let xdg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(xdg.path().join("asp-bridge")).unwrap();
    std::fs::copy(config.file(), xdg.path().join("asp-bridge/host.toml")).unwrap();
    let host = Host::start_env(repo.path(), &[], &[("XDG_CONFIG_HOME", xdg.path())]);
    assert_eq!(host.status().await["servers"][0]["id"], "fake");
    host.finish().await;

    // No configuration at all: the built-in hygiene provider, started as this executable.
    let empty = tempfile::tempdir().unwrap();
    let host = Host::start_env(
        repo.path(),
        &[],
        &[("XDG_CONFIG_HOME", empty.path()), ("HOME", empty.path())],
    );
    let status = host.status().await;
    let servers = status["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0]["id"], "hygiene");
    assert_eq!(servers[0]["requiredFor"], json!(["interactive", "sweep"]));
    assert!(
        servers[0]["detail"].as_str().unwrap().contains(ASP_BRIDGE),
        "{:#}",
        servers[0]
    );
    host.finish().await;
}

/// A host whose one provider (the fake) first starts `sleep 600` as `start` says (`sleep` or
/// `setsid sleep`), holding a FIFO open as long as it lives: the test knows without polling when
/// the helper has started ([`Helper::started`]) and when it is gone ([`Helper::gone`]).
struct Helper {
    fifo: FifoWriters,
    host: Host,
    _dir: tempfile::TempDir,
    _config: Config,
}

impl Helper {
    async fn started(repo: &Path, start: &str) -> Helper {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("helper");
        let writers = FifoWriters::new(&fifo);
        let mut provider = Provider::fake("none");
        provider.command = Some(vec![
            "sh".into(),
            "-c".into(),
            format!(r#"{start} 600 >"$0" & exec "$@""#),
            fifo.to_string_lossy().into_owned(),
            fake().into(),
        ]);
        let config = Config::new(&[provider]);
        let host = Host::start(repo, &config);
        let fifo = wait_for(FifoWriters::wait_opened, writers).await;
        Helper {
            fifo,
            host,
            _dir: dir,
            _config: config,
        }
    }

    async fn gone(fifo: FifoWriters) {
        wait_for(FifoWriters::wait_closed, fifo).await;
    }
}

/// `f` of `fifo` within [`LIMIT`], off the async threads.
async fn wait_for(f: fn(&FifoWriters, Duration), fifo: FifoWriters) -> FifoWriters {
    tokio::task::spawn_blocking(move || {
        f(&fifo, LIMIT);
        fifo
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn a_helper_a_provider_started_does_not_outlive_a_sigkill_of_the_host() {
    let repo = repo();
    let Helper {
        fifo,
        mut host,
        _dir,
        _config,
    } = Helper::started(repo.path(), "sleep").await;
    // No orderly end runs: the provider's group is ended all the same.
    host.child.start_kill().unwrap();
    host.child.wait().await.unwrap();
    Helper::gone(fifo).await;
}

#[tokio::test]
async fn a_process_a_provider_started_in_a_session_of_its_own_ends_with_the_host() {
    let repo = repo();
    let Helper {
        fifo,
        host,
        _dir,
        _config,
    } = Helper::started(repo.path(), "setsid sleep").await;
    // The orderly end: the provider is stopped with its group; the helper, out of its reach, came
    // back to the host, which ends it before it exits.
    host.finish().await;
    Helper::gone(fifo).await;
}

/// A SIGTERM while the providers are being stopped ends the stop at once, killing them, instead of
/// waiting for the stop's bound. The host runs in this process so that the clock can be paused once
/// the provider holds its answer to `shutdown` and the signal is delivered: a paused clock only
/// moves when nothing else can run, so a host that ends on the signal ends before a 1 ms deadline,
/// and one that waits for any timer (the stop's bound) does not.
#[tokio::test]
async fn a_sigterm_while_the_providers_stop_ends_the_stop_at_once() {
    let repo = repo();
    let config = Config::new(&[Provider::fake("hang-on-shutdown")]);
    let mut events = follow(&config.dir.path().join("fake.jsonl"));
    let (outer, inner) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(inner);
    let options = core_host::Options {
        repo: repo.path().to_path_buf(),
        config: Some(config.file()),
        builtin_launcher: Vec::new(),
        check_linter: |_| Ok(()),
    };
    let serve = core_host::serve(reader, writer, options);
    tokio::pin!(serve);
    let mut outer = Some(outer);
    for wanted in ["initialized", "shutdown"] {
        if wanted == "shutdown" {
            // The outer seam ends: the host stops its providers.
            drop(outer.take());
        }
        let seen = tokio::time::timeout(LIMIT, async {
            loop {
                tokio::select! {
                    event = events.recv() => {
                        if event.expect("the provider ended early")["event"] == wanted {
                            return;
                        }
                    }
                    ended = &mut serve => panic!("the host ended before {wanted}: {ended:?}"),
                }
            }
        });
        seen.await
            .unwrap_or_else(|_| panic!("the provider never recorded {wanted}"));
    }
    // The signal reaches the host's listener through a pipe that every runtime of this test
    // process reads: another test's runtime may read it first and wake the listener from its own
    // thread. So the test waits, in real time, until its own listener has the signal (all listeners
    // get it at once), and only then pauses the clock and lets the host run.
    let mut delivered = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("listen for SIGTERM");
    // SAFETY: raise(3) sends the signal to this thread; the runtime's handler only writes a byte.
    #[allow(unsafe_code)]
    unsafe {
        libc::raise(libc::SIGTERM);
    }
    tokio::time::timeout(LIMIT, delivered.recv())
        .await
        .expect("the SIGTERM is delivered");
    tokio::time::pause();
    let ended = tokio::time::timeout(Duration::from_millis(1), &mut serve).await;
    tokio::time::resume();
    assert!(
        matches!(ended, Ok(Ok(()))),
        "the host waited for a timer after SIGTERM: {ended:?}"
    );
    // The provider got nothing more (no `exit`: the orderly stop did not go on) and is gone: it
    // holds its record open until it ends.
    let mut after = Vec::new();
    while let Some(event) = tokio::time::timeout(LIMIT, events.recv())
        .await
        .expect("the provider still runs")
    {
        after.push(event);
    }
    assert_eq!(after, Vec::<Value>::new());
}

/// The provider's record, made a FIFO: each event as it is written, until the provider is gone.
fn follow(record: &Path) -> tokio::sync::mpsc::UnboundedReceiver<Value> {
    test_support::process::mkfifo(record);
    let (send, receive) = tokio::sync::mpsc::unbounded_channel();
    let record = record.to_owned();
    std::thread::spawn(move || {
        let Ok(fifo) = std::fs::File::open(&record) else {
            return;
        };
        for line in std::io::BufRead::lines(std::io::BufReader::new(fifo)) {
            let Ok(line) = line else { return };
            if send.send(serde_json::from_str(&line).unwrap()).is_err() {
                return;
            }
        }
    });
    receive
}

/// A provider named by a bare program name is looked up on `PATH` once, and the integrity the host
/// reports is the hash of the file that runs: a file of that name earlier on `PATH` that is not
/// executable is neither run nor hashed.
#[tokio::test]
async fn the_integrity_reported_is_the_hash_of_the_program_that_runs() {
    let repo = repo();
    repo.write("a.txt", "changed\n");
    let dirs = tempfile::tempdir().unwrap();
    let (decoy, bin) = (dirs.path().join("decoy"), dirs.path().join("bin"));
    for dir in [&decoy, &bin] {
        std::fs::create_dir(dir).unwrap();
    }
    std::fs::write(decoy.join("fake-provider"), "not a program\n").unwrap();
    std::os::unix::fs::symlink(fake(), bin.join("fake-provider")).unwrap();
    let path = std::env::join_paths(
        [decoy.clone(), bin.clone()]
            .into_iter()
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let mut provider = Provider::fake("none");
    provider.command = Some(vec![
        "fake-provider".into(),
        "--fault".into(),
        "none".into(),
    ]);
    let config = Config::new(&[provider]);
    let config_file = config.file();
    let host = Host::start_env(
        repo.path(),
        &["--config", config_file.to_str().unwrap()],
        &[("PATH", Path::new(&path))],
    );
    let verdict = host.evaluate("interactive").await;
    assert_eq!(verdict["decision"], "allow", "{verdict:#}");
    let status = host.call("host/authority/status", json!({})).await.unwrap();
    let integrity = status["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "fake")
        .map(|p| p["authorityEvidence"]["integrity"].clone())
        .unwrap_or_else(|| panic!("{status:#}"));
    let hashed = std::process::Command::new("sha256sum")
        .arg(fake())
        .output()
        .unwrap();
    let hex = String::from_utf8_lossy(&hashed.stdout);
    let hex = hex.split_whitespace().next().unwrap();
    assert_eq!(integrity, format!("sha256:{hex}"), "{status:#}");
    host.finish().await;
}
