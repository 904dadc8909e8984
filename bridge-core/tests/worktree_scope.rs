//! `Scope::Files`: the files under the named paths checked whole, changed or not, each a `create`
//! against the empty tree, and nothing outside those paths.

use asp_wire::proto::ChangeKind;
use bridge_core::Worktree;
use bridge_core::worktree::Scope;
use serde_json::Value;
use test_support::git::Repo;

#[tokio::test]
async fn scope_files_sends_every_file_under_the_paths_whole_and_nothing_else() {
    let dir = Repo::new(&[
        ("deploy/id_rsa", "unchanged\n"),
        ("deploy/keys/old.pem", "unchanged\n"),
        ("src/main.rs", "fn main() {}\n"),
    ]);
    dir.write("deploy/new.txt", "untracked\n");
    let scope = Scope::Files(vec!["deploy".to_owned()]);
    let built = Worktree::new(dir.root())
        .changeset(&Value::Null, &scope)
        .await
        .unwrap();
    let mut sent: Vec<(&str, &ChangeKind)> = built
        .changeset
        .changes
        .iter()
        .map(|c| (c.path.as_str(), &c.kind))
        .collect();
    sent.sort_by_key(|(path, _)| *path);
    assert_eq!(
        sent,
        [
            ("deploy/id_rsa", &ChangeKind::Create),
            ("deploy/keys/old.pem", &ChangeKind::Create),
            ("deploy/new.txt", &ChangeKind::Create),
        ]
    );
    let rev = built.changeset.baseline["rev"].as_str().unwrap();
    assert!(
        rev.starts_with("git:tree:4b825dc6"),
        "the empty tree: {rev}"
    );
    assert!(built.changeset.changes.iter().all(|c| c.before.is_none()));
}
