//! Baselines, hostile workspace reads and changeset intake on real git repositories.

use serde_json::json;
use test_support::git::{Repo, git, rev_parse};

use super::*;

/// A repository whose one commit holds `a.txt` and `gone.txt`.
fn repo() -> Repo {
    Repo::new(&[("a.txt", "old\n"), ("gone.txt", "bye\n")])
}

/// [`repo`] opened as a workspace, and its baseline.
fn opened() -> (Repo, Workspace, Baseline) {
    let dir = repo();
    let ws = Workspace::open(dir.path()).unwrap();
    let baseline = ws.baseline();
    (dir, ws, baseline)
}

fn soon() -> std::time::Instant {
    std::time::Instant::now() + std::time::Duration::from_secs(30)
}

fn id(bytes: &[u8]) -> String {
    blob_of(bytes.to_vec()).id
}

#[test]
fn the_baseline_names_the_head_tree_and_is_restamped_when_head_moves() {
    let (dir, ws, first) = opened();
    assert!(first.rev().starts_with("git:tree:"));
    assert_eq!(ws.refresh().unwrap(), (first.clone(), false));
    std::fs::write(dir.path().join("a.txt"), "new\n").unwrap();
    git(dir.path(), &["commit", "-q", "-am", "two"]);
    let (second, moved) = ws.refresh().unwrap();
    assert!(moved);
    assert_ne!(second.rev(), first.rev());
}

#[test]
fn an_empty_repository_has_the_empty_tree_and_a_plain_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert!(Workspace::open(dir.path()).is_err());
    git(dir.path(), &["init", "-q"]);
    let ws = Workspace::open(dir.path()).unwrap();
    assert_eq!(ws.baseline().rev(), format!("git:tree:{}", git::EMPTY_TREE));
}

#[test]
fn symlinks_are_their_target_bytes_and_never_followed() {
    let dir = repo();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s3cret").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("dir")).unwrap();
    let blob = read_no_follow(dir.path(), "link").unwrap();
    assert_eq!(
        blob.id,
        id(outside.path().join("secret").to_str().unwrap().as_bytes())
    );
    assert!(
        read_no_follow(dir.path(), "dir/secret").is_err(),
        "a symlinked directory is not walked"
    );
    assert!(read_no_follow(dir.path(), "../x").is_err());
    assert!(read_no_follow(dir.path(), "/etc/passwd").is_err());
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    assert!(
        read_no_follow(dir.path(), "sub").is_err(),
        "a directory is not a regular file"
    );
}

#[test]
fn large_files_are_hashed_but_not_kept() {
    let dir = repo();
    std::fs::write(dir.path().join("big"), vec![b'x'; MAX_BLOB + 1]).unwrap();
    let blob = read_no_follow(dir.path(), "big").unwrap();
    assert_eq!(blob.id, id(&vec![b'x'; MAX_BLOB + 1]));
    assert!(blob.bytes.is_none());
}

#[test]
fn intake_accepts_true_blob_ids_and_reports_every_mismatch_as_stale() {
    let (dir, ws, baseline) = opened();
    std::fs::write(dir.path().join("a.txt"), "new\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
    std::fs::remove_file(dir.path().join("gone.txt")).unwrap();
    let good = json!({"baseline": baseline.value, "changes": [
        {"path": "a.txt", "kind": "modify", "before": id(b"old\n"), "after": id(b"new\n")},
        {"path": "b.txt", "kind": "create", "after": id(b"b\n")},
        {"path": "gone.txt", "kind": "delete", "before": id(b"bye\n")},
    ]});
    let found = intake(&ws, &baseline, &good, soon()).unwrap();
    assert!(found.stale.is_empty(), "{:?}", found.stale);
    assert_eq!(found.blobs.len(), 4);
    assert_eq!(found.blobs[&id(b"new\n")].path, "a.txt");

    let lying = json!({"baseline": baseline.value, "changes": [
        {"path": "a.txt", "kind": "modify", "before": id(b"other\n"), "after": id(b"new\n")},
        {"path": "b.txt", "kind": "create", "after": id(b"not b\n")},
        {"path": "a.txt", "kind": "delete", "before": id(b"old\n")},
    ]});
    let found = intake(&ws, &baseline, &lying, soon()).unwrap();
    assert_eq!(found.stale.len(), 3, "{:?}", found.stale);

    let moved = json!({"baseline": {"rev": "git:tree:0000"}, "changes": []});
    assert!(
        intake(&ws, &baseline, &moved, soon())
            .unwrap()
            .stale_baseline
            .is_some()
    );
    let escaping = json!({"baseline": baseline.value, "changes": [{"path": "../x", "kind": "create", "after": id(b"")}]});
    assert!(intake(&ws, &baseline, &escaping, soon()).is_err());
}

#[test]
fn the_baseline_tree_lists_files_with_their_asp_blob_ids() {
    let (_dir, ws, baseline) = opened();
    let tree = ws.tree(&baseline.tree).unwrap();
    let paths: Vec<_> = tree.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["a.txt", "gone.txt"]);
    let blob_id = ws.blob_id_of(&tree[0].oid).unwrap();
    assert_eq!(blob_id, id(b"old\n"));
    assert_eq!(ws.oid_of(&blob_id).as_deref(), Some(tree[0].oid.as_str()));
}

#[test]
fn a_changeset_may_name_any_tree_or_commit_of_the_repository_verified() {
    let dir = repo();
    let first_commit = rev_parse(dir.path(), "HEAD");
    let first_tree = rev_parse(dir.path(), "HEAD^{tree}");
    std::fs::write(dir.path().join("a.txt"), "new\n").unwrap();
    git(dir.path(), &["commit", "-q", "-am", "two"]);
    let ws = Workspace::open(dir.path()).unwrap();
    let own = ws.baseline();
    assert_eq!(
        ws.named_baseline(&own, &own.value).unwrap(),
        own,
        "its own baseline"
    );
    for named in [
        json!({"rev": format!("git:tree:{first_tree}")}),
        json!({"rev": format!("git:commit:{first_commit}"), "stampedAt": "2026-01-01T00:00:00Z"}),
        json!({"rev": format!("git:tree:{}", git::EMPTY_TREE)}),
    ] {
        let found = ws.named_baseline(&own, &named).unwrap();
        assert_eq!(found.value, named, "echoed as the changeset named it");
        let want = if named["rev"].as_str().unwrap().ends_with(git::EMPTY_TREE) {
            git::EMPTY_TREE.to_owned()
        } else {
            first_tree.clone()
        };
        assert_eq!(found.tree, want);
    }
    let blob = rev_parse(dir.path(), "HEAD:a.txt");
    for rev in [
        format!("git:tree:{first_commit}"),
        format!("git:commit:{first_tree}"),
        format!("git:tree:{blob}"),
        format!("git:tree:{}", "1".repeat(40)),
        format!("git:tree:{}", &first_tree[..12]),
        "git:tree:--output=x".to_owned(),
        format!("git:tree:{}", first_tree.to_uppercase()),
        "HEAD~1".to_owned(),
    ] {
        let refused = ws.named_baseline(&own, &json!({ "rev": rev })).unwrap_err();
        assert!(
            refused.contains("the host's baseline is") && refused.contains(own.rev()),
            "{rev}: {refused}"
        );
    }
}

#[test]
fn many_baseline_blobs_come_from_one_git_process_and_missing_ones_fail_alone() {
    let files: Vec<(String, String)> = (0..50)
        .map(|i| (format!("f{i}.txt"), format!("file {i}\n")))
        .collect();
    let pairs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let dir = Repo::new(&pairs);
    let ws = Workspace::open(dir.path()).unwrap();
    let tree = ws.tree(&ws.baseline().tree).unwrap();
    let missing = "1".repeat(40);
    let mut oids: Vec<&str> = tree.iter().map(|e| e.oid.as_str()).collect();
    oids.push(&missing);
    let found = ws.git_blobs(&oids, soon());
    for entry in tree.iter() {
        let text = &files.iter().find(|(p, _)| *p == entry.path).unwrap().1;
        assert_eq!(found[&entry.oid].as_ref().unwrap().id, id(text.as_bytes()));
    }
    assert!(found[&missing].is_err());
}

#[test]
fn intake_keeps_bytes_within_its_budget_and_a_blob_past_it_is_read_again_and_checked() {
    let (dir, ws, baseline) = opened();
    let large = |i: usize| format!("{i}\n").into_bytes().repeat(MAX_BLOB / 4);
    let count = intake::KEPT_BYTES / large(0).len() + 2;
    let mut changes = Vec::new();
    for i in 0..count {
        std::fs::write(dir.path().join(format!("f{i}")), large(i)).unwrap();
        changes.push(json!({"path": format!("f{i}"), "kind": "create", "after": id(&large(i))}));
    }
    let changeset = json!({"baseline": baseline.value, "changes": changes});
    let found = intake(&ws, &baseline, &changeset, soon()).unwrap();
    assert!(found.stale.is_empty(), "{:?}", found.stale);
    assert!(found.kept <= intake::KEPT_BYTES, "{}", found.kept);
    let last = format!("f{}", count - 1);
    let (last_id, dropped) = found.blobs.iter().find(|(_, b)| b.path == last).unwrap();
    assert!(dropped.bytes.is_none() && dropped.again.is_some());
    let again = dropped.with_bytes(&ws, last_id).unwrap();
    assert_eq!(again.bytes.as_deref(), Some(&large(count - 1)));
    std::fs::write(dir.path().join(&last), "changed\n").unwrap();
    let refused = dropped.with_bytes(&ws, last_id).unwrap_err();
    assert!(refused.contains("changed in the working tree"), "{refused}");
}

#[test]
fn intake_reads_a_path_once_however_many_changes_name_it_and_stops_at_its_deadline() {
    let (dir, ws, baseline) = opened();
    std::fs::write(dir.path().join("a.txt"), "new\n").unwrap();
    let change =
        json!({"path": "a.txt", "kind": "modify", "before": id(b"old\n"), "after": id(b"new\n")});
    let changeset = json!({"baseline": baseline.value, "changes": vec![change; 3]});
    let found = intake(&ws, &baseline, &changeset, soon()).unwrap();
    assert!(found.stale.is_empty(), "{:?}", found.stale);
    assert_eq!(found.blobs[&id(b"new\n")].path, "a.txt");
    assert!(found.blobs[&id(b"new\n")].bytes.is_some());
    let past = std::time::Instant::now();
    let found = intake(&ws, &baseline, &changeset, past).unwrap();
    let timed_out = found.timed_out.expect("the deadline had passed");
    assert!(timed_out.contains("0 of 3 changes"), "{timed_out}");
}
