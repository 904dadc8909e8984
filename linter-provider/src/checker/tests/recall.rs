//! What the runner kept is recalled before anything is read: a file linted before, both sides of
//! it when the comparison is `introduced`, is neither linted nor read again, and the answer names
//! only the blobs it did read; what was kept is forgotten when the linter itself is replaced.

use super::*;

/// The blob ids of every `workspace/readBlob` the host was asked so far.
fn read_so_far(memory: &Memory) -> Vec<String> {
    memory.asked.lock().unwrap().concat()
}

#[tokio::test]
async fn files_linted_before_are_not_read_again_on_either_side() {
    let fake = Fake::new(EACH_FILE);
    let lint = fake.lint(&["{files}"]);
    let mut memory = Memory::default();
    memory.commit("pyproject.toml", b"[tool.ruff]\n");
    let a = modified(&mut memory, "a.py", "a = 0\n", "a = 1\n");
    let b = json!({"path": "b.py", "kind": "create", "after": memory.add(b"b = 1\n")});
    let changes = json!([a, b]);
    let first = assess(&lint, &memory, params(changes.clone(), "introduced"), LONG).await;
    // Both files' after sides, then a.py's before side (it has a finding to compare).
    assert_eq!(fake.runs(), ["a.py b.py", "a.py"]);
    assert_eq!(findings(&first).len(), 2, "{first:#}");
    let read = read_so_far(&memory);
    for id in [&a["before"], &a["after"], &b["after"]] {
        assert!(read.contains(&id.as_str().unwrap().to_owned()), "{id} read");
    }
    let again = assess(&lint, &memory, params(changes, "introduced"), LONG).await;
    assert_eq!(fake.runs().len(), 2, "no run: {:?}", fake.runs());
    assert_eq!(read_so_far(&memory), read, "nothing read again");
    assert_eq!(again["diagnostics"], first["diagnostics"]);
    assert_eq!(again["status"], "complete", "{again:#}");
    assert_eq!(again["validAsOf"]["blobs"], json!([]), "only what was read");
    // One file's bytes changed: only its new side (and the configuration it is linted with) is
    // read.
    let b2 = json!({"path": "b.py", "kind": "create", "after": memory.add(b"b = 2\n")});
    let third = assess(&lint, &memory, params(json!([a, b2]), "introduced"), LONG).await;
    assert_eq!(fake.runs()[2..], ["b.py"]);
    let newly: Vec<String> = read_so_far(&memory)[read.len()..].to_vec();
    assert!(newly.contains(&b2["after"].as_str().unwrap().to_owned()));
    for id in [&a["before"], &a["after"]] {
        assert!(!newly.contains(&id.as_str().unwrap().to_owned()), "{id}");
    }
    assert_eq!(findings(&third).len(), 2, "{third:#}");
    fake.assert_scratch_gone();
}

#[tokio::test]
async fn what_was_kept_is_forgotten_when_the_linter_is_replaced() {
    let fake = Fake::new(EACH_FILE);
    let lint = fake.lint(&["{files}"]);
    let mut memory = Memory::default();
    let changes = created(&mut memory, &[("a.py", "a = 1\n")]);
    let first = assess(&lint, &memory, params(changes.clone(), "all"), LONG).await;
    assess(&lint, &memory, params(changes.clone(), "all"), LONG).await;
    assert_eq!(fake.runs().len(), 1, "kept: {:?}", fake.runs());
    // An upgrade puts another file at the same path (this one logs its runs in its own folder).
    let replaced = Fake::new(EACH_FILE);
    let installed = std::process::Command::new("install")
        .args(["-m", "755"])
        .arg(replaced.path(PROGRAM))
        .arg(fake.path(PROGRAM))
        .status()
        .unwrap();
    assert!(installed.success());
    let again = assess(&lint, &memory, params(changes, "all"), LONG).await;
    assert_eq!(replaced.runs(), ["a.py"], "linted again");
    assert_eq!(again["diagnostics"], first["diagnostics"]);
    fake.assert_scratch_gone();
    replaced.assert_scratch_gone();
}
