//! The evaluation against an in-memory host: what is read, what is found, and assessments that
//! validate against `check-assessment.schema.json` with the exact `validAsOf`.

use std::sync::Arc;
use std::time::Duration;

use provider_kit::memory::{Memory, evaluate_params as params, findings};
use provider_kit::wire::TreeEntry;
use provider_kit::{Cancel, ChangeKind, Identity, MAX_DIAGNOSTICS, Request, Which, evaluate};
use serde_json::{Value, json};

use super::*;

fn provenance() -> Identity {
    Identity {
        version: "0.1.0".into(),
        fingerprint: "sha256:build".into(),
    }
}

async fn run(memory: &Memory, params: Value) -> Value {
    let request = Request::parse(&params, &Hygiene).expect("valid request");
    let deadline = Instant::now() + Duration::from_secs(30);
    serde_json::to_value(evaluate(&Hygiene, memory, request, deadline, &provenance()).await)
        .unwrap()
}

/// The assessment of a changeset that adds `files` (path, bytes), all findings.
async fn added(files: &[(&str, &[u8])]) -> Value {
    let mut memory = Memory::default();
    let changes: Vec<Value> = files
        .iter()
        .map(|(path, bytes)| json!({"path": path, "kind": "create", "after": memory.add(bytes)}))
        .collect();
    run(&memory, params(Value::from(changes), "all")).await
}

fn schema_errors(assessment: &Value) -> Vec<String> {
    test_support::schema::asp_errors("check-evaluate.schema.json", "result", assessment)
}

/// Every key anywhere in `value`.
fn keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn a_changeset_with_a_conflict_a_key_and_bad_json_is_assessed_exactly() {
    let mut memory = Memory::default();
    let conflict = memory.add(b"a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> x\n");
    let old_readme = memory.add(b"hello\n");
    let readme = memory.add(b"hello\nworld\n");
    let key = memory
        .add(b"-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n"); // pragma: allowlist secret
    let json_file = memory.add(b"{\"a\": 1,}\n");
    let gone = memory.add(b"<<<<<<< old\n");
    let p = params(
        json!([
            {"path": "src/conflict.txt", "kind": "create", "after": conflict},
            {"path": "README.md", "kind": "modify", "before": old_readme, "after": readme},
            {"path": "deploy/id_ed25519", "kind": "create", "after": key},
            {"path": "config/app.json", "kind": "create", "after": json_file},
            {"path": "old.txt", "kind": "delete", "before": gone}
        ]),
        "introduced",
    );
    let assessment = run(&memory, p.clone()).await;
    assert_eq!(
        schema_errors(&assessment),
        Vec::<String>::new(),
        "{assessment:#}"
    );
    assert_eq!(assessment["status"], "complete");
    assert_eq!(
        findings(&assessment),
        [
            (
                "hygiene/merge-conflict".into(),
                "src/conflict.txt".into(),
                1
            ),
            ("hygiene/private-key".into(), "deploy/id_ed25519".into(), 0),
            ("hygiene/json-syntax".into(), "config/app.json".into(), 0),
        ]
    );
    let d = &assessment["diagnostics"][2];
    assert_eq!(d["severity"], "error");
    assert_eq!(d["introduced"], true);
    assert_eq!(
        d["location"]["range"],
        json!({"start": {"line": 0, "char": 8}, "end": {"line": 0, "char": 9}})
    );
    assert!(d["help"].as_str().unwrap().contains("trailing commas"));
    // validAsOf: the request's baseline as sent, the changeset's digest, every blob read (all of
    // the changeset's, sorted).
    assert_eq!(
        assessment["validAsOf"]["baseline"],
        p["changeset"]["baseline"]
    );
    assert_eq!(
        assessment["validAsOf"]["changesetDigest"],
        provider_kit::digest::canonical_digest(&p["changeset"])
    );
    let mut all = vec![conflict, old_readme, readme, key, json_file, gone];
    all.sort();
    assert_eq!(assessment["validAsOf"]["blobs"], json!(all));
    assert_eq!(assessment["coverage"]["exhaustive"], true);
    let mut names = Vec::new();
    keys(&assessment, &mut names);
    for owned in core_host::HOST_OWNED {
        assert!(
            !names.iter().any(|k| k == owned),
            "host-owned field {owned}"
        );
    }
}

#[tokio::test]
async fn all_and_resolved_comparisons_see_both_sides() {
    let mut memory = Memory::default();
    let before = memory.add(b"x \n{\n");
    let after = memory.add(b"x \ny\t\n");
    let p = |c| {
        params(
            json!([{"path": "a.txt", "kind": "modify", "before": before, "after": after}]),
            c,
        )
    };
    // Only the changed line is new; `x ` was there before.
    let all = run(&memory, p("all")).await;
    assert_eq!(
        findings(&all),
        [("hygiene/trailing-whitespace".into(), "a.txt".into(), 1)]
    );
    assert!(all["diagnostics"][0].get("introduced").is_none());
    let introduced = run(&memory, p("introduced")).await;
    assert_eq!(findings(&introduced).len(), 1);
    let resolved = run(&memory, p("resolved")).await;
    assert_eq!(findings(&resolved), Vec::<(String, String, u64)>::new());
    assert_eq!(schema_errors(&resolved), Vec::<String>::new());
}

#[tokio::test]
async fn a_refused_read_is_reported_and_the_rest_still_checked() {
    let mut memory = Memory::default();
    let secret = memory.add(b"BEGIN PRIVATE KEY\n"); // pragma: allowlist secret
    let other = memory.add(b"<<<<<<< a\n>>>>>>> b\n");
    memory.refuse.push(secret.clone());
    let p = params(
        json!([
            {"path": ".env", "kind": "create", "after": secret},
            {"path": "b.txt", "kind": "create", "after": other}
        ]),
        "introduced",
    );
    let assessment = run(&memory, p).await;
    assert_eq!(schema_errors(&assessment), Vec::<String>::new());
    assert_eq!(assessment["status"], "incomplete");
    assert_eq!(assessment["coverage"]["exhaustive"], false);
    assert_eq!(
        findings(&assessment),
        [("hygiene/merge-conflict".into(), "b.txt".into(), 0)]
    );
    let degraded = &assessment["coverage"]["degraded"][0];
    assert_eq!(degraded["reason"], "incomplete");
    assert!(
        degraded["detail"]
            .as_str()
            .unwrap()
            .starts_with(".env: could not read"),
        "{degraded}"
    );
    assert_eq!(
        assessment["validAsOf"]["blobs"],
        json!([other]),
        "only what was read"
    );
    // One batch, then one call per blob after it failed.
    assert_eq!(memory.asked.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn a_blob_whose_bytes_do_not_match_its_id_is_not_used() {
    let mut memory = Memory::default();
    let id = memory.add(b"<<<<<<< a\n");
    memory.blobs.insert(id.clone(), b"clean\n".to_vec());
    let assessment = run(
        &memory,
        params(json!([{"path": "a", "kind": "create", "after": id}]), "all"),
    )
    .await;
    assert_eq!(assessment["status"], "incomplete");
    assert!(
        assessment["coverage"]["degraded"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("does not match its id")
    );
    assert_eq!(assessment["validAsOf"]["blobs"], json!([]));
}

#[tokio::test]
async fn an_unsupported_request_reads_nothing() {
    let memory = Memory::default();
    let mut p = params(json!([]), "introduced");
    p["diagnosticSources"] = json!(["acme-secrets"]);
    let assessment = run(&memory, p).await;
    assert_eq!(assessment["status"], "unsupported");
    assert_eq!(
        assessment["coverage"]["unsupported"][0]["reason"],
        "unsupported"
    );
    assert_eq!(schema_errors(&assessment), Vec::<String>::new());
    assert!(memory.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_workspace_scope_checks_the_baseline_too_without_whitespace_noise() {
    let mut memory = Memory::default();
    let old = memory.add(b"{bad json \n");
    let new = memory.add(b"ok \n");
    memory.tree = vec![
        TreeEntry {
            path: "old.json".into(),
            blob_id: old.clone(),
            kind: "file".into(),
        },
        TreeEntry {
            path: "src".into(),
            blob_id: old.clone(),
            kind: "dir".into(),
        },
    ];
    let mut p = params(
        json!([{"path": "new.txt", "kind": "create", "after": new}]),
        "all",
    );
    p["scope"] = json!("workspace");
    let assessment = run(&memory, p).await;
    assert_eq!(
        findings(&assessment),
        [
            ("hygiene/trailing-whitespace".into(), "new.txt".into(), 0),
            ("hygiene/json-syntax".into(), "old.json".into(), 0),
        ]
    );
}

#[tokio::test]
async fn a_passed_deadline_is_reported_as_timed_out() {
    let mut memory = Memory::default();
    let id = memory.add(b"x\n");
    let request = Request::parse(
        &params(json!([{"path": "a", "kind": "create", "after": id}]), "all"),
        &Hygiene,
    )
    .unwrap();
    let assessment = evaluate(&Hygiene, &memory, request, Instant::now(), &provenance()).await;
    let assessment = serde_json::to_value(assessment).unwrap();
    assert_eq!(assessment["status"], "incomplete");
    assert_eq!(assessment["coverage"]["degraded"][0]["reason"], "timed-out");
    assert_eq!(schema_errors(&assessment), Vec::<String>::new());
}

#[tokio::test]
async fn diagnostics_past_the_cap_are_cut_and_marked_truncated() {
    let mut memory = Memory::default();
    let id = memory.add(" \n".repeat(MAX_DIAGNOSTICS + 5).as_bytes());
    let assessment = run(
        &memory,
        params(json!([{"path": "a", "kind": "create", "after": id}]), "all"),
    )
    .await;
    assert_eq!(
        assessment["diagnostics"].as_array().unwrap().len(),
        MAX_DIAGNOSTICS
    );
    assert_eq!(assessment["coverage"]["truncated"], true);
    assert_eq!(assessment["coverage"]["exhaustive"], false);
}

#[tokio::test]
async fn files_are_read_in_large_batches_and_a_refused_blob_costs_a_few_halvings_not_one_call_per_blob()
 {
    let mut memory = Memory::default();
    let mut changes = Vec::new();
    for i in 0..64 {
        let id = memory.add(format!("file {i}\n").as_bytes());
        changes.push(json!({"path": format!("f{i}.txt"), "kind": "create", "after": id}));
    }
    let secret = changes[17]["after"].as_str().unwrap().to_owned();
    memory.refuse.push(secret.clone());
    let assessment = run(&memory, params(json!(changes), "introduced")).await;
    assert_eq!(assessment["status"], "incomplete");
    let read = assessment["validAsOf"]["blobs"].as_array().unwrap();
    assert_eq!(read.len(), 63, "every other file was read");
    assert!(!read.contains(&json!(secret)));
    let asked = memory.asked.lock().unwrap();
    assert_eq!(asked[0].len(), 64, "one call for all of them first");
    // Halving 64 down to the one refused blob: 1 + 2 per level, 6 levels.
    assert_eq!(asked.len(), 13, "{asked:?}");
}

#[tokio::test]
async fn a_private_key_behind_ten_thousand_notes_is_kept_and_the_answer_is_not_complete() {
    // `a.txt` sorts first: its notes alone fill the cap before the key is checked.
    let notes = " \n".repeat(MAX_DIAGNOSTICS + 1);
    let key = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n"; // pragma: allowlist secret
    let assessment = added(&[("a.txt", notes.as_bytes()), ("z/id_ed25519", key)]).await;
    let found = findings(&assessment);
    assert_eq!(found.len(), MAX_DIAGNOSTICS);
    assert!(
        found
            .iter()
            .any(|(code, path, _)| code == "hygiene/private-key" && path == "z/id_ed25519"),
        "the error is kept, a note is left out"
    );
    assert_eq!(assessment["status"], "incomplete");
    assert_eq!(assessment["coverage"]["truncated"], true);
    assert_eq!(assessment["coverage"]["exhaustive"], false);
    let degraded = assessment["coverage"]["degraded"].to_string();
    assert!(
        degraded.contains("2 more findings were left out"),
        "{degraded}"
    );
    assert_eq!(schema_errors(&assessment), Vec::<String>::new());
}

#[tokio::test]
async fn a_file_of_a_million_markers_costs_what_the_cap_keeps() {
    let markers = ">>>>>>>\n".repeat(1 << 20);
    let started = Instant::now();
    let assessment = added(&[("a.txt", markers.as_bytes())]).await;
    assert_eq!(findings(&assessment).len(), MAX_DIAGNOSTICS);
    assert_eq!(assessment["coverage"]["truncated"], true);
    // Far below the deadline of `run` (30 s); building every finding first took minutes.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn no_check_starts_once_its_evaluation_is_gone_or_past_its_deadline() {
    let mut targets = Vec::new();
    for i in 0..4 {
        let bytes = format!("{i}\n<<<<<<< HEAD\n").into_bytes();
        targets.push(Side {
            path: format!("f{i}.txt"),
            change: ChangeKind::Create,
            which: Which::After,
            blob: provider_kit::digest::blob_id(&bytes),
            bytes: Arc::new(bytes),
            other: None,
            added: true,
        });
    }
    let run = |stop: &Stop, deadline: Instant| {
        let settings = checks::Settings {
            max_added_file_bytes: 1 << 20,
            yaml: checks::YamlReading::Compatible,
        };
        let checked = check_sides(&targets, &Rule::ALL, settings, stop, deadline);
        let found: usize = checked.iter().map(|c| c.findings.len()).sum();
        (targets.len() - checked.len(), found)
    };
    let later = Instant::now() + Duration::from_secs(60);
    let live = Cancel::on_drop();
    assert_eq!(
        run(&live.signal(), later),
        (0, 4),
        "each file has its marker"
    );
    let gone = Cancel::on_drop();
    let stop = gone.signal();
    drop(gone);
    assert_eq!(
        run(&stop, later),
        (4, 0),
        "dropped: nothing more is checked"
    );
    assert_eq!(
        run(&live.signal(), Instant::now()),
        (4, 0),
        "past the deadline"
    );
}

#[tokio::test]
async fn a_yaml_template_that_cannot_be_checked_is_not_covered_and_the_answer_not_complete() {
    let assessment = added(&[
        ("chart/values.yaml", b"a: {{ .Values.x }}\nlist: [1, 2\n"),
        ("chart/ok.yaml", b"a: {{ .Values.x }}\nb: 1\n"),
    ])
    .await;
    assert_eq!(assessment["status"], "incomplete");
    let unsupported = assessment["coverage"]["unsupported"].as_array().unwrap();
    assert_eq!(unsupported.len(), 1, "{unsupported:#?}");
    let detail = unsupported[0]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("chart/values.yaml: YAML template not checked"),
        "{detail}"
    );
    assert_eq!(assessment["coverage"]["exhaustive"], false);
    assert_eq!(schema_errors(&assessment), Vec::<String>::new());
}

/// A changeset where `config.json` was a link to `target` and now links to `other`, and
/// `gone.json`, a link, became a file of bad JSON.
fn links(no_list: bool) -> (Memory, Value) {
    let mut memory = Memory {
        no_list,
        ..Memory::default()
    };
    let (before, after) = (memory.add(b"target"), memory.add(b"other"));
    let file = memory.add(b"{,}\n");
    for path in ["config.json", "gone.json"] {
        memory.tree.push(TreeEntry {
            path: path.into(),
            blob_id: before.clone(),
            kind: "symlink".into(),
        });
    }
    let changes = json!([
        {"path": "config.json", "kind": "modify", "before": before, "after": after},
        {"path": "gone.json", "kind": "modify", "before": before, "after": file},
    ]);
    (memory, params(changes, "all"))
}

#[tokio::test]
async fn changed_symlinks_are_skipped_and_the_evidence_says_how_many_and_which() {
    let (memory, params) = links(false);
    let assessment = run(&memory, params).await;
    assert_eq!(schema_errors(&assessment), Vec::<String>::new());
    let found = findings(&assessment);
    assert!(
        found.iter().all(|(_, path, _)| path != "config.json"),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(code, path, _)| code == "hygiene/json-syntax" && path == "gone.json"),
        "a link replaced by a file is checked: {found:?}"
    );
    assert_eq!(assessment["status"], "complete");
    let evidence = &assessment["evidence"][0];
    assert_eq!(evidence["id"], "hygiene/links-skipped", "{assessment:#}");
    assert_eq!(
        evidence["data"],
        json!({"count": 1, "paths": ["config.json"]})
    );
    assert_eq!(
        evidence["message"],
        "1 symbolic link was not checked as content (a link's blob is its target path): config.json"
    );
}

#[tokio::test]
async fn a_host_that_cannot_list_links_loses_no_check_and_the_evidence_says_so() {
    let (memory, params) = links(true);
    let assessment = run(&memory, params).await;
    assert_eq!(schema_errors(&assessment), Vec::<String>::new());
    let found = findings(&assessment);
    assert!(
        found.iter().any(|(_, path, _)| path == "config.json"),
        "checked as a file, as before: {found:?}"
    );
    assert_eq!(assessment["status"], "complete");
    let evidence = &assessment["evidence"][0];
    assert_eq!(evidence["id"], "hygiene/links-unknown", "{assessment:#}");
    assert!(
        evidence["message"]
            .as_str()
            .unwrap()
            .contains("workspace/listTree: method not found"),
        "{evidence}"
    );
}
