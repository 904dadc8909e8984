//! Changesets of real repositories: edits, links, FIFOs, submodules, names that are not UTF-8, and
//! the git processes an evaluation starts.

use super::*;
use serde_json::json;

use test_support::git::{Repo, add_submodule, git as sh, rev_parse};

fn repo() -> Repo {
    Repo::new(&[
        ("kept.txt", "same\n"),
        ("edited.txt", "old\n"),
        ("gone.txt", "bye\n"),
    ])
}

/// Commits `edited.txt` as `v2` on top of [`repo`]'s commit; returns the ids of both commits.
fn commit_second(dir: &Path) -> (String, String) {
    let first = rev_parse(dir, "HEAD");
    std::fs::write(dir.join("edited.txt"), "v2\n").unwrap();
    sh(dir, &["commit", "-q", "-am", "second"]);
    (first, rev_parse(dir, "HEAD"))
}

/// The changeset of [`repo`] with `edited.txt` edited, limited to `paths`.
fn edited_within(paths: &[&str]) -> ChangeSet {
    let dir = repo();
    std::fs::write(dir.path().join("edited.txt"), "new\n").unwrap();
    let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
    changes(dir.path(), &json!({"rev": "x"}), Some(&paths)).unwrap()
}

#[test]
fn blob_ids_are_sha256_of_raw_bytes() {
    assert_eq!(
        blob_id(b""),
        "blob:sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

/// The changeset of `dir`'s working tree, built as an evaluation builds it.
fn changes(dir: &Path, baseline: &Value, paths: Option<&[String]>) -> Result<ChangeSet> {
    built(dir, &Cache::default(), baseline, paths).map(|b| b.changeset)
}

fn built(dir: &Path, cache: &Cache, baseline: &Value, paths: Option<&[String]>) -> Result<Built> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(build(dir, cache, baseline, paths))
}

/// [`built`] with an empty cache and the baseline `{"rev": "x"}`.
fn built_afresh(dir: &Path, paths: Option<&[String]>) -> Built {
    built(dir, &Cache::default(), &json!({"rev": "x"}), paths).unwrap()
}

/// The paths of `set`'s changes, in order.
fn changed_paths(set: &ChangeSet) -> Vec<&str> {
    set.changes.iter().map(|c| c.path.as_str()).collect()
}

/// What `built` left out: each path and why.
fn left_out(built: &Built) -> Vec<(&str, &str)> {
    built
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.why.as_str()))
        .collect()
}

#[test]
fn working_tree_changes_against_head() {
    let dir = repo();
    std::fs::write(dir.path().join("edited.txt"), "new\n").unwrap();
    std::fs::remove_file(dir.path().join("gone.txt")).unwrap();
    std::fs::write(dir.path().join("fresh ü.txt"), "hi\n").unwrap();
    let baseline = json!({"rev": "tree:not-a-git-object"});
    let set = changes(dir.path(), &baseline, None).unwrap();
    assert_eq!(
        set.baseline, baseline,
        "the baseline is echoed as the host issued it"
    );
    let summary: Vec<_> = set
        .changes
        .iter()
        .map(|c| (c.path.as_str(), c.kind.clone()))
        .collect();
    assert_eq!(
        summary,
        [
            ("edited.txt", ChangeKind::Modify),
            ("fresh ü.txt", ChangeKind::Create),
            ("gone.txt", ChangeKind::Delete)
        ]
    );
    let edited = &set.changes[0];
    assert_eq!(edited.before, Some(blob_id(b"old\n")));
    assert_eq!(edited.after, Some(blob_id(b"new\n")));
    assert_eq!(set.changes[2].before, Some(blob_id(b"bye\n")));
    assert_eq!(set.changes[2].after, None);
}

#[test]
fn a_baseline_naming_a_commit_is_used_as_the_base() {
    let dir = repo();
    let (head, _) = commit_second(dir.path());
    let set = changes(dir.path(), &json!({"rev": format!("git:{head}")}), None).unwrap();
    assert_eq!(
        set.changes.len(),
        1,
        "committed change since the baseline commit is included"
    );
    assert_eq!(set.changes[0].before, Some(blob_id(b"old\n")));
}

#[test]
fn paths_limit_the_changeset_and_nothing_changed_is_empty() {
    assert!(edited_within(&["kept.txt"]).changes.is_empty());
}

#[test]
fn a_workspace_in_a_subdirectory_gets_paths_relative_to_it() {
    let dir = repo();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/inner.txt"), "one\n").unwrap();
    sh(dir.path(), &["add", "."]);
    sh(dir.path(), &["commit", "-q", "-m", "sub"]);
    std::fs::write(dir.path().join("sub/inner.txt"), "two\n").unwrap();
    std::fs::write(dir.path().join("sub/new.txt"), "n\n").unwrap();
    let set = changes(&dir.path().join("sub"), &json!({"rev": "x"}), None).unwrap();
    let paths = changed_paths(&set);
    assert_eq!(paths, ["inner.txt", "new.txt"]);
    assert_eq!(set.changes[0].before, Some(blob_id(b"one\n")));
}

#[test]
fn paths_are_literal_not_globs() {
    assert!(
        edited_within(&["*.txt"]).changes.is_empty(),
        "`*.txt` names a file called `*.txt`, not every text file"
    );
}

#[test]
fn outside_a_repository_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = changes(dir.path(), &json!({"rev": "x"}), None).unwrap_err();
    assert_eq!(err.fail_class(), rpc_peer::FailClass::Input);
}

#[cfg(unix)]
#[test]
fn links_are_hashed_as_their_target_and_never_followed() {
    use std::os::unix::fs::symlink;
    let dir = repo();
    let root = dir.path();
    std::fs::create_dir(root.join("dir")).unwrap();
    let links = [
        ("zero", "/dev/zero"),
        ("stdin", "/dev/stdin"),
        ("passwd", "/etc/passwd"),
        ("dangling", "no/such/file"),
        ("to-dir", "dir"),
    ];
    for (name, target) in links {
        symlink(target, root.join(name)).unwrap();
    }
    // git lists no untracked FIFO; a tracked file replaced by one is listed as modified.
    for fifo in ["untracked-fifo", "edited.txt"] {
        std::fs::remove_file(root.join(fifo)).ok();
        test_support::process::mkfifo(&root.join(fifo));
    }
    let built = built_afresh(root, None);
    let got: Vec<_> = built
        .changeset
        .changes
        .iter()
        .map(|c| (c.path.as_str(), c.kind.clone(), c.after.clone()))
        .collect();
    let mut want: Vec<_> = links
        .iter()
        .map(|(name, target)| (*name, ChangeKind::Create, Some(blob_id(target.as_bytes()))))
        .collect();
    want.sort_by(|a, b| a.0.cmp(b.0));
    assert_eq!(
        got, want,
        "a link's blob is its target's bytes, as git stores it"
    );
    assert_eq!(
        built.skipped,
        [Skipped {
            path: "edited.txt".into(),
            why: "a FIFO".into()
        }],
        "a FIFO is never opened, only reported"
    );
}

#[cfg(unix)]
#[test]
fn a_tracked_file_replaced_by_a_link_is_a_modify_to_the_link_target() {
    let dir = repo();
    std::fs::remove_file(dir.path().join("edited.txt")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("edited.txt")).unwrap();
    let set = changes(dir.path(), &json!({"rev": "x"}), None).unwrap();
    assert_eq!(set.changes.len(), 1);
    assert_eq!(set.changes[0].kind, ChangeKind::Modify);
    assert_eq!(set.changes[0].before, Some(blob_id(b"old\n")));
    assert_eq!(set.changes[0].after, Some(blob_id(b"/dev/zero")));
}

/// [`repo`] with a submodule `sub` of another [`repo`] (two commits), committed at the
/// second: the repository and the first commit's id.
fn with_submodule() -> (Repo, Repo, String) {
    let upstream = repo();
    let (first, _) = commit_second(upstream.path());
    let dir = repo();
    add_submodule(dir.path(), upstream.path(), "sub");
    sh(dir.path(), &["commit", "-q", "-m", "with a submodule"]);
    (dir, upstream, first)
}

#[test]
fn a_submodule_at_another_commit_or_with_untracked_files_is_left_out_as_its_own_repository() {
    let (dir, _upstream, first) = with_submodule();
    let submodule = [("sub", SUBMODULE)];
    // A key nobody tracks inside the submodule, the commit unchanged.
    std::fs::write(
        dir.path().join("sub/id_rsa"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\n", // pragma: allowlist secret
    )
    .unwrap();
    let clean = built_afresh(dir.path(), None);
    assert!(clean.changeset.changes.is_empty(), "{clean:?}");
    assert_eq!(
        left_out(&clean),
        submodule,
        "never 'the working tree equals the baseline'"
    );
    sh(&dir.path().join("sub"), &["checkout", "-q", &first]);
    std::fs::write(dir.path().join("edited.txt"), "new\n").unwrap();
    let moved = built_afresh(dir.path(), None);
    let paths = changed_paths(&moved.changeset);
    assert_eq!(paths, ["edited.txt"], "a gitlink is no file change");
    assert_eq!(left_out(&moved), submodule);
    let only = ["sub/id_rsa".to_owned()];
    let within = built_afresh(dir.path(), Some(&only));
    assert_eq!(
        left_out(&within),
        submodule,
        "a path inside it names it too"
    );
    let elsewhere = ["kept.txt".to_owned()];
    let outside = built_afresh(dir.path(), Some(&elsewhere));
    assert!(outside.skipped.is_empty(), "{outside:?}");
}

#[cfg(unix)]
#[test]
fn a_name_that_is_not_utf8_is_left_out_never_sent_altered() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = repo();
    let name = std::ffi::OsStr::from_bytes(b"caf\xff.txt");
    std::fs::write(dir.path().join(name), "tracked\n").unwrap();
    sh(dir.path(), &["add", "."]);
    sh(
        dir.path(),
        &["commit", "-q", "-m", "a name that is not UTF-8"],
    );
    std::fs::write(dir.path().join(name), "edited\n").unwrap();
    std::fs::write(
        dir.path().join(std::ffi::OsStr::from_bytes(b"new\xfe")),
        "x\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("edited.txt"), "new\n").unwrap();
    let built = built_afresh(dir.path(), None);
    let paths = changed_paths(&built.changeset);
    assert_eq!(paths, ["edited.txt"]);
    let skipped = left_out(&built);
    assert_eq!(
        skipped,
        [("caf\u{fffd}.txt", NOT_UTF8), ("new\u{fffd}", NOT_UTF8)]
    );
    let sweep = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(build_all(
            dir.path(),
            &Cache::default(),
            &json!({"rev": "x"}),
        ))
        .unwrap();
    assert!(
        sweep
            .changeset
            .changes
            .iter()
            .all(|c| !c.path.contains('\u{fffd}'))
    );
    assert_eq!(sweep.skipped.len(), 1, "{sweep:?}");
}

#[test]
fn a_large_file_is_hashed_as_it_streams() {
    let dir = repo();
    let big = std::fs::File::create(dir.path().join("big.bin")).unwrap();
    big.set_len(3 * 1024 * 1024 + 7).unwrap();
    let set = changes(dir.path(), &json!({"rev": "x"}), None).unwrap();
    let want = blob_id(&vec![0u8; 3 * 1024 * 1024 + 7]);
    assert_eq!(set.changes[0].after.as_deref(), Some(want.as_str()));
}

#[test]
fn later_evaluations_run_one_git_process_and_look_the_baseline_up_once() {
    let dir = repo();
    let head = rev_parse(dir.path(), "HEAD");
    std::fs::write(dir.path().join("edited.txt"), "new\n").unwrap();
    std::fs::write(dir.path().join("fresh.txt"), "hi\n").unwrap();
    let cache = Cache::default();
    let baseline = json!({"rev": format!("git:commit:{head}")});
    let runs = || cache.git_runs.load(Ordering::Relaxed);
    let first = built(dir.path(), &cache, &baseline, None).unwrap();
    assert_eq!(first.changeset.changes.len(), 2);
    let after_first = runs();
    for round in 1..=3 {
        std::fs::write(dir.path().join("edited.txt"), format!("round {round}\n")).unwrap();
        let again = built(dir.path(), &cache, &baseline, None).unwrap();
        assert_eq!(again.changeset.changes.len(), 2);
        assert_eq!(
            runs() - after_first,
            round,
            "one `git status` per evaluation once the baseline and before-blobs are known"
        );
    }
    let path = ["edited.txt".to_owned()];
    let before = runs();
    built(dir.path(), &cache, &baseline, Some(&path)).unwrap();
    assert_eq!(runs() - before, 1, "a single file costs one process too");
}
