//! opcore-asp-provider 0.2.1, a provider nobody here wrote, enrolled as `asp/0.1` through a real
//! `asp-bridge host serve`: its TypeScript type errors on a changed file decide both advisory call
//! sites, it is listed in `coverage.ran`, a project-level finding (a broken `tsconfig.json`) is kept
//! as a finding on the workspace, and every answer matches `outer-host.schema.json`. Needs Node.js
//! 20+ and the bundle in `shared/providers/` (skipped and recorded without them, failed where `ASP_BRIDGE_REQUIRE_TOOLS` is set).

use serde_json::{Value, json};
use test_support::opcore::{Opcore, typescript_repo};

use crate::support::Host;

/// `(code, path)` of every finding, sorted.
fn findings(verdict: &Value) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = verdict["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let d = &f["diagnostic"];
            (
                d["code"].as_str().unwrap().to_owned(),
                d["location"]["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn opcore_type_errors_decide_through_the_embedded_host() {
    let Some(opcore) = Opcore::unpack("opcore_type_errors_decide_through_the_embedded_host") else {
        return;
    };
    let repo = typescript_repo(true);
    let config = opcore.write_host_toml();
    let host = Host::start_with(repo.path(), &["--config", config.to_str().unwrap()]);

    for call_site in ["interactive", "sweep"] {
        let verdict = host.evaluate(call_site).await;
        assert_eq!(verdict["decision"], "deny", "{verdict:#}");
        assert_eq!(verdict["coverage"]["ran"], json!(["opcore"]), "{verdict:#}");
        assert_eq!(verdict["coverage"]["required"], json!(["opcore"]));
        assert_eq!(
            findings(&verdict),
            [
                ("opcore/typescript.types/2322".into(), "src/index.ts".into()),
                ("opcore/typescript.types/2345".into(), "src/index.ts".into()),
            ],
            "{verdict:#}"
        );
        for finding in verdict["findings"].as_array().unwrap() {
            assert_eq!(finding["diagnostic"]["source"], "opcore");
            assert_eq!(finding["diagnostic"]["severity"], "error");
            assert_eq!(finding["disposition"], "gating");
        }
        let provenance = &verdict["receipt"]["providerProvenance"][0];
        assert_eq!(provenance["provider"], "opcore", "{provenance:#}");
    }

    let status = host.status().await;
    let server = &status["servers"][0];
    assert_eq!(server["enrollmentState"], "enrolled", "{status:#}");
    assert_eq!(server["lifecycleState"], "active", "{status:#}");
    assert!(
        server["detail"]
            .as_str()
            .unwrap()
            .contains("protocol asp/0.1"),
        "{status:#}"
    );

    // A tsconfig error has no file: it stays a finding, on the workspace as a whole.
    repo.write(
        "tsconfig.json",
        "{\n  \"compilerOptions\": {\"target\": \"nope\", \"strict\": true},\n  \"include\": [\"src\"]\n}\n",
    );
    repo.write("src/index.ts", "export const x = 1;\n");
    let verdict = host.evaluate("interactive").await;
    assert_eq!(
        findings(&verdict),
        [("opcore/typescript.types/6046".into(), String::new())],
        "{verdict:#}"
    );
    assert_eq!(verdict["coverage"]["ran"], json!(["opcore"]), "{verdict:#}");
    host.finish().await;
}
