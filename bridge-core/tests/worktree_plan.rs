//! A plan made while the host starts, against `HEAD`'s tree (the baseline the embedded host names
//! on a clean start): kept for a host that names that tree, echoing its baseline and sending what
//! a plan made afterwards would; refused for any other baseline; none before the first commit.

use asp_wire::proto::AdvisoryCallSite;
use bridge_core::Worktree;
use bridge_core::worktree::Evaluate;
use serde_json::{Value, json};
use test_support::git::{Repo, rev_parse};

/// A repository with a modified, an untracked and an unchanged file.
fn changed() -> Repo {
    let repo = Repo::new(&[("a.txt", "one\n"), ("b.txt", "two\n")]);
    repo.write("a.txt", "changed\n");
    repo.write("c.txt", "new\n");
    repo
}

/// The embedded host's baseline for `repo`, as its status gives it.
fn host_baseline(repo: &Repo) -> Value {
    let tree = rev_parse(repo.path(), "HEAD^{tree}");
    json!({"rev": format!("git:tree:{tree}"), "stampedAt": "2026-12-04T00:00:00.000Z"})
}

#[tokio::test]
async fn a_plan_at_head_is_the_plan_of_a_host_that_names_heads_tree() {
    let repo = changed();
    let worktree = Worktree::new(repo.root());
    let request = Evaluate::at(AdvisoryCallSite::Sweep);
    let guessed = worktree.plan_at_head(&request).await.unwrap().unwrap();
    let host = host_baseline(&repo);
    let kept = guessed
        .for_baseline(&host)
        .expect("the host names HEAD's tree");
    assert_eq!(kept.built.changeset.baseline, host, "echoed as issued");
    let afterwards = Evaluate {
        baseline: Some(host),
        ..request
    };
    let planned = worktree.plan(&afterwards).await.unwrap();
    assert_eq!(kept.built.changeset, planned.built.changeset);
    assert_eq!(kept.batch_files, planned.batch_files);
    let paths: Vec<&str> = kept
        .built
        .changeset
        .changes
        .iter()
        .map(|c| c.path.as_str())
        .collect();
    assert_eq!(paths, ["a.txt", "c.txt"]);
}

#[tokio::test]
async fn a_plan_at_head_is_refused_for_any_other_baseline() {
    let repo = changed();
    let request = Evaluate::at(AdvisoryCallSite::Sweep);
    let worktree = Worktree::new(repo.root());
    let other = json!({"rev": format!("git:tree:{}", "4b825dc642cb6eb9a060e54bf8d69288fbee4904")});
    for baseline in [other, json!({"rev": "HEAD"}), json!({}), Value::Null] {
        let guessed = worktree.plan_at_head(&request).await.unwrap().unwrap();
        assert!(guessed.for_baseline(&baseline).is_none(), "{baseline}");
    }
}

#[tokio::test]
async fn before_the_first_commit_there_is_no_plan_at_head() {
    let repo = Repo::init();
    repo.write("a.txt", "new\n");
    let worktree = Worktree::new(repo.root());
    let request = Evaluate::at(AdvisoryCallSite::Sweep);
    assert!(worktree.plan_at_head(&request).await.unwrap().is_none());
}
