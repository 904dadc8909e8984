//! What a user leaves out in `host.toml` (`exclude`, `disable`, `min-severity`,
//! `../shared/LINTERS.md` §7): excluded paths never reach a provider, dropped findings never reach
//! the decision, and the decision says both without turning indeterminate; `host/status` says them
//! of each provider before anything is evaluated.

use serde_json::Value;

use crate::support::{Config, Host, Provider, repo, serve_with_config};

const CONFLICT: &str = "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n";

/// A configuration with `top` before any table, the hygiene provider with `hygiene` (its section's
/// lines) and `providers` after.
fn config(top: &str, hygiene: &str, providers: &[Provider]) -> Config {
    let config = Config::new(providers);
    let file = config.file();
    let text = std::fs::read_to_string(&file).unwrap().replacen(
        "[hygiene]\nenabled = false\n",
        &format!("{top}\n[hygiene]\n{hygiene}\n"),
        1,
    );
    std::fs::write(&file, text).unwrap();
    config
}

/// The `coverage.degraded` entries the configuration's choices made (`optional-degraded`).
fn left_out(verdict: &Value) -> Vec<(String, String)> {
    verdict["coverage"]["degraded"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["reason"] == "optional-degraded")
        .map(|d| {
            (
                d["source"].as_str().unwrap().to_owned(),
                d["detail"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn codes(verdict: &Value) -> Vec<String> {
    verdict["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["diagnostic"]["code"].as_str().unwrap().to_owned())
        .collect()
}

/// The paths of the changesets `id` was sent in `check/evaluate`.
fn sent_paths(config: &Config, id: &str) -> Vec<String> {
    config
        .record(id)
        .iter()
        .filter(|m| m["event"] == "check/evaluate")
        .flat_map(|m| {
            m["data"]["changeset"]["changes"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|c| c["path"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn an_excluded_conflict_file_never_reaches_a_provider_and_the_decision_says_it_was_left_out()
{
    let repo = repo();
    repo.write("tests/fixtures/conflict.txt", CONFLICT);
    repo.write("src/ok.txt", "fine\n");
    let config = config(
        "exclude = [\"tests/fixtures/**\", \"vendor/**\"]",
        "",
        &[Provider::fake("none")],
    );
    let host = Host::start(repo.path(), &config);
    let verdict = host.evaluate("interactive").await;
    // Without the exclusion the conflict markers are a deny; excluded, nothing is found, and the
    // user's own choice does not make the decision indeterminate.
    assert_eq!(verdict["decision"], "allow", "{verdict:#}");
    assert_eq!(codes(&verdict), Vec::<String>::new());
    assert_eq!(
        verdict["coverage"]["exhaustive"], false,
        "not everything ran"
    );
    let said = left_out(&verdict);
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0].0, "tests/fixtures/conflict.txt");
    assert!(
        said[0]
            .1
            .starts_with(asp_wire::reason::LEFT_OUT_BY_CONFIGURATION)
            && said[0].1.contains(
                "excluded by host.toml `exclude` (`tests/fixtures/**`), not sent to hygiene, fake"
            ),
        "{}",
        said[0].1
    );
    assert_eq!(sent_paths(&config, "fake"), ["src/ok.txt"]);
    // Nor may it be read: the grant the provider was sent leaves it out.
    let initialized = config
        .record("fake")
        .into_iter()
        .find(|m| m["event"] == "initialized")
        .expect("initialized");
    let read = initialized["data"]["grantedPermissions"]["read"].to_string();
    assert!(read.contains("!tests/fixtures/**"), "{read}");
    host.finish().await;
}

#[tokio::test]
async fn a_disabled_rule_is_dropped_from_the_decision_and_said_once() {
    let repo = repo();
    repo.write("a.txt", CONFLICT);
    repo.write("b.txt", CONFLICT);
    let config = config("", "disable = [\"hygiene/merge-conflict\"]", &[]);
    let host = Host::start(repo.path(), &config);
    let verdict = host.evaluate("interactive").await;
    assert_eq!(verdict["decision"], "allow", "{verdict:#}");
    assert!(!codes(&verdict).contains(&"hygiene/merge-conflict".to_owned()));
    let said = left_out(&verdict);
    assert_eq!(said.len(), 1, "once per answer: {said:?}");
    assert_eq!(said[0].0, "hygiene");
    assert!(
        said[0]
            .1
            .contains("disabled rules hygiene/merge-conflict (2 dropped)"),
        "{}",
        said[0].1
    );
    host.finish().await;
}

#[tokio::test]
async fn min_severity_error_drops_warnings_and_notes() {
    let repo = repo();
    // A duplicate key is a warning, trailing whitespace a note.
    repo.write("a.json", "{\"k\": 1, \"k\": 2}   \n");
    let plain = config("", "", &[]);
    let host = Host::start(repo.path(), &plain);
    let before = codes(&host.evaluate("interactive").await);
    host.finish().await;
    assert!(
        before.contains(&"hygiene/duplicate-key".to_owned()),
        "the fixture has a warning: {before:?}"
    );
    let floor = config("min-severity = \"error\"", "", &[]);
    let host = Host::start(repo.path(), &floor);
    let verdict = host.evaluate("interactive").await;
    assert_eq!(codes(&verdict), Vec::<String>::new(), "{verdict:#}");
    assert_eq!(verdict["decision"], "allow");
    let said = left_out(&verdict);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].1.contains(&format!(
            "findings below error are not reported ({} dropped)",
            before.len()
        )),
        "{}",
        said[0].1
    );
    host.finish().await;
}

#[tokio::test]
async fn a_provider_section_setting_applies_to_that_provider_only() {
    let repo = repo();
    repo.write("tests/fixtures/conflict.txt", CONFLICT);
    let config = config(
        "",
        "exclude = [\"tests/fixtures/**\"]",
        &[Provider::fake("none")],
    );
    let host = Host::start(repo.path(), &config);
    let verdict = host.evaluate("interactive").await;
    assert_eq!(verdict["decision"], "allow", "{verdict:#}");
    assert_eq!(
        sent_paths(&config, "fake"),
        ["tests/fixtures/conflict.txt"],
        "the other provider still gets it"
    );
    let said = left_out(&verdict);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].1.ends_with(
            "excluded by host.toml `hygiene.exclude` (`tests/fixtures/**`), not sent to hygiene"
        ),
        "{}",
        said[0].1
    );
    host.finish().await;
}

#[tokio::test]
async fn host_status_says_what_each_provider_is_not_sent_and_not_shown() {
    let repo = repo();
    let config = config(
        "exclude = [\"vendor/**\"]\nmin-severity = \"warning\"",
        "disable = [\"hygiene/trailing-whitespace\"]",
        &[Provider::fake("none")],
    );
    let host = Host::start(repo.path(), &config);
    let status = host.status().await;
    let detail = |id: &str| {
        status["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .and_then(|s| s["detail"].as_str())
            .unwrap_or_else(|| panic!("no detail of {id}: {status:#}"))
            .to_owned()
    };
    assert!(
        detail("hygiene").ends_with(
            "left out by host.toml: paths excluded: `vendor/**`; rules disabled: hygiene/trailing-whitespace; findings below warning dropped"
        ),
        "{}",
        detail("hygiene")
    );
    assert!(
        detail("fake").ends_with(
            "left out by host.toml: paths excluded: `vendor/**`; findings below warning dropped"
        ),
        "{}",
        detail("fake")
    );
    host.finish().await;
}

#[test]
fn an_invalid_glob_or_severity_stops_the_host_with_an_input_error_naming_the_key() {
    let repo = repo();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("host.toml");
    for (text, named) in [
        (
            "exclude = [\"src/*.{js,ts}\"]\n",
            ":1: exclude: `src/*.{js,ts}`: `{` is not supported",
        ),
        (
            "[hygiene]\nmin-severity = \"hint\"\n",
            ":2: hygiene.min-severity: unknown severity `hint`",
        ),
    ] {
        std::fs::write(&file, text).unwrap();
        let output = serve_with_config(repo.path(), &file);
        assert_eq!(output.status.code(), Some(6), "an input error: {text}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("asp-bridge: input: {}{named}", file.display())),
            "{stderr}"
        );
        assert!(output.stdout.is_empty());
    }
}
