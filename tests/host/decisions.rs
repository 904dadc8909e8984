//! Decisions that must say more than what ran: required coverage the provider itself says is cut
//! short, a call site with nothing enrolled, and baselines named without the host's own stamp.

use serde_json::json;

use crate::support::{Config, Host, Provider, reasons, repo};

const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"; // pragma: allowlist secret

/// A host with only the built-in hygiene provider: no configuration anywhere.
fn hygiene_host(repo: &std::path::Path) -> (tempfile::TempDir, Host) {
    let empty = tempfile::tempdir().unwrap();
    let host = Host::start_env(
        repo,
        &[],
        &[("XDG_CONFIG_HOME", empty.path()), ("HOME", empty.path())],
    );
    (empty, host)
}

#[tokio::test]
async fn a_private_key_behind_ten_thousand_notes_is_never_an_allow() {
    let repo = repo();
    // `a.txt` sorts before the key, and its notes alone pass the provider's cap of 10,000.
    repo.write("a.txt", &"x \n".repeat(10_001));
    repo.write("z/id_ed25519", KEY);
    let (_home, host) = hygiene_host(repo.path());
    for call_site in ["interactive", "sweep"] {
        let verdict = host.evaluate(call_site).await;
        assert_eq!(verdict["decision"], "indeterminate", "{call_site}");
        assert_eq!(verdict["coverage"]["exhaustive"], false);
        assert_eq!(reasons(&verdict), ["incomplete"]);
        let findings = verdict["findings"].as_array().unwrap();
        assert!(
            findings
                .iter()
                .any(|f| f["diagnostic"]["code"] == "hygiene/private-key"),
            "the key is reported"
        );
        let detail = verdict["coverage"]["degraded"][0]["detail"]
            .as_str()
            .unwrap();
        assert!(
            detail.contains("status incomplete: 2 more findings were left out"),
            "{detail}"
        );
    }
    host.finish().await;
}

#[tokio::test]
async fn a_call_site_with_no_provider_enrolled_is_indeterminate_and_unavailable() {
    let repo = repo();
    repo.write("a.txt", "changed\n");
    let config = Config::new(&[]);
    let host = Host::start(repo.path(), &config);
    for call_site in ["interactive", "sweep"] {
        let verdict = host.evaluate(call_site).await;
        assert_eq!(verdict["decision"], "indeterminate", "{call_site}");
        assert_eq!(verdict["pass"], false);
        assert_eq!(reasons(&verdict), ["missing-required-provider"]);
        assert_eq!(verdict["coverage"]["exhaustive"], false);
        assert_eq!(verdict["coverage"]["ran"], json!([]));
    }
    let status = host.status().await;
    for call_site in ["interactive", "sweep", "gate"] {
        let gate = &status["gates"][call_site];
        assert_eq!(gate["available"], false, "{call_site}: {gate:#}");
        let degraded = gate["degraded"].to_string();
        assert!(
            degraded.contains("missing-required-provider"),
            "{call_site}: {degraded}"
        );
    }
    host.finish().await;
}

#[tokio::test]
async fn a_baseline_is_known_by_its_rev_whatever_its_stamp() {
    let repo = repo();
    repo.write("a.txt", "changed\n");
    let config = Config::new(&[Provider::fake("none")]);
    let host = Host::start(repo.path(), &config);
    let changeset = host.changeset().await;
    let rev = changeset["baseline"]["rev"].clone();
    for baseline in [
        // What a direct client that omits the optional stamp sends.
        json!({"rev": rev}),
        // Another client's clock.
        json!({"rev": rev, "stampedAt": "2001-01-01T00:00:00Z"}),
    ] {
        let mut changeset = changeset.clone();
        changeset["baseline"] = baseline.clone();
        let verdict = host.evaluate_changeset("interactive", changeset).await;
        assert_eq!(verdict["decision"], "allow", "{baseline}: {verdict:#}");
        assert_eq!(verdict["coverage"]["ran"], json!(["fake"]));
    }
    host.finish().await;
}
