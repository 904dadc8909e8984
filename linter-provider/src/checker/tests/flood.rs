//! A linter that prints past the output cap: stopped, its files linted again in halves, and a
//! file that floods alone reported as not checked, never clean; the rest of its batch is checked.

use super::*;

#[tokio::test]
async fn a_hundred_megabytes_for_one_file_are_stopped_at_the_cap_and_the_file_is_not_checked() {
    let fake = Fake::new("head -c 104857600 /dev/zero | tr '\\000' x");
    let assessment = lint_a_file(&fake, &["{files}"], LONG).await;
    assert_eq!(assessment["status"], "incomplete", "{assessment:#}");
    assert_eq!(assessment["coverage"]["exhaustive"], false);
    assert_eq!(assessment["diagnostics"], json!([]));
    let unsupported = assessment["coverage"]["unsupported"].as_array().unwrap();
    let said: Vec<&str> = unsupported
        .iter()
        .map(|u| u["detail"].as_str().unwrap())
        .collect();
    let cap = format!(
        "a.py: {} printed more than {} MiB for this file alone; it was stopped",
        fake.path(PROGRAM).display(),
        lint::MAX_OUTPUT >> 20
    );
    assert_eq!(said, [cap.as_str()], "{assessment:#}");
    fake.assert_scratch_gone();
}

#[tokio::test]
async fn a_batch_that_floods_is_linted_in_halves_and_only_the_flooding_file_is_not_checked() {
    // Past the cap whenever it is given the file that says FLOOD; else a result per file.
    let fake = Fake::each_file_after(
        "if grep -l FLOOD \"$@\" >/dev/null 2>&1; then head -c 20000000 /dev/zero | tr '\\000' x; exit 0; fi",
    );
    let mut memory = Memory::default();
    let changes = created(
        &mut memory,
        &[
            ("a.py", "ok\n"),
            ("b.py", "ok\n"),
            ("c.py", "FLOOD\n"),
            ("d.py", "ok\n"),
        ],
    );
    let lint = fake.lint(&["{files}"]);
    let assessment = assess(&lint, &memory, params(changes, "all"), LONG).await;
    assert_eq!(
        findings(&assessment),
        [
            ("fake/seen".to_owned(), "a.py".to_owned(), 0),
            ("fake/seen".to_owned(), "b.py".to_owned(), 0),
            ("fake/seen".to_owned(), "d.py".to_owned(), 0),
        ],
        "{assessment:#}"
    );
    assert_eq!(assessment["status"], "incomplete");
    let unsupported = assessment["coverage"]["unsupported"].to_string();
    assert!(
        unsupported.contains("c.py: ") && unsupported.contains("for this file alone"),
        "{unsupported}"
    );
    // All four, then the halves (a b | c d), then c and d alone.
    assert_eq!(
        fake.runs(),
        [
            "a.py b.py c.py d.py",
            "a.py b.py",
            "c.py d.py",
            "c.py",
            "d.py"
        ]
    );
    // A file not checked is not kept: it is linted again next time.
    let again = assess(
        &lint,
        &memory,
        params(assessment_changes(&memory), "all"),
        LONG,
    )
    .await;
    assert_eq!(again["status"], "incomplete");
    assert_eq!(fake.runs().last().map(String::as_str), Some("c.py"));
    fake.assert_scratch_gone();
}

/// The same change again (the files `memory` holds, by the blob ids the first change named).
fn assessment_changes(memory: &Memory) -> Value {
    let mut changes: Vec<Value> = Vec::new();
    for (path, text) in [
        ("a.py", "ok\n"),
        ("b.py", "ok\n"),
        ("c.py", "FLOOD\n"),
        ("d.py", "ok\n"),
    ] {
        let id = provider_kit::digest::blob_id(text.as_bytes());
        assert!(memory.blobs.contains_key(&id));
        changes.push(json!({"path": path, "kind": "create", "after": id}));
    }
    Value::from(changes)
}
