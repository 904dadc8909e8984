//! Attempts that never wait: what they refuse, and that a refusal leaves nothing behind that the
//! blocking run would then miss.

use std::time::{Duration, Instant};

use test_support::git::{Repo, git};

use super::*;
use crate::snapshot::{Workspace, blob_of, read_no_follow};

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

#[test]
fn a_git_process_is_refused_and_started_outside_an_attempt() {
    let dir = Repo::new(&[("a.txt", "a\n")]);
    let args = ["rev-parse", "HEAD"];
    assert!(attempt(|| crate::snapshot::git::run(dir.path(), &args)).is_none());
    assert!(crate::snapshot::git::run(dir.path(), &args).is_ok());
    let ws = Workspace::open(dir.path()).unwrap();
    let tree = ws.baseline().tree;
    let oid = ws.tree(&tree).unwrap().get("a.txt").unwrap().oid.clone();
    assert!(
        attempt(|| ws.git_blobs(&[oid.as_str()], soon())).is_none(),
        "a blob not yet cached needs git cat-file"
    );
    let blobs = ws.git_blobs(&[oid.as_str()], soon());
    let cached = attempt(|| ws.git_blobs(&[oid.as_str()], soon())).expect("cached now");
    assert_eq!(
        cached[&oid].as_ref().unwrap().id,
        blobs[&oid].as_ref().unwrap().id
    );
}

// Reads at hand are Linux's (`RESOLVE_CACHED`, `RWF_NOWAIT`): elsewhere every one refuses.
#[cfg(target_os = "linux")]
#[test]
fn a_file_at_hand_reads_as_the_blocking_read_does() {
    let dir = Repo::new(&[("a.txt", "a\n")]);
    std::fs::write(dir.path().join("b.txt"), "b é\n").unwrap();
    let blocking = read_no_follow(dir.path(), "b.txt").unwrap();
    // Just written and just read: its path and bytes are in the kernel's caches.
    let at_hand = attempt(|| read_no_follow(dir.path(), "b.txt"))
        .expect("a file just read is at hand")
        .unwrap();
    assert_eq!(at_hand.id, blocking.id);
    assert_eq!(at_hand.bytes, blocking.bytes);
    // Once looked for, a missing file is known to the dentry cache as missing (where the file
    // system keeps such entries: tmpfs does not, and there the attempt is refused).
    assert!(read_no_follow(dir.path(), "gone.txt").is_err());
    if let Some(missing) = attempt(|| read_no_follow(dir.path(), "gone.txt")) {
        assert_eq!(missing.unwrap_err().kind(), io::ErrorKind::NotFound);
    }
}

// Reads at hand are Linux's (`RESOLVE_CACHED`, `RWF_NOWAIT`): elsewhere every one refuses.
#[cfg(target_os = "linux")]
#[test]
fn a_symlink_a_file_past_the_allowance_and_a_fifo_are_left_to_the_blocking_run() {
    let dir = Repo::new(&[("a.txt", "a\n")]);
    std::os::unix::fs::symlink("a.txt", dir.path().join("link")).unwrap();
    let big = vec![b'x'; usize::try_from(INLINE_BYTES).unwrap() + 1];
    std::fs::write(dir.path().join("big"), &big).unwrap();
    test_support::process::mkfifo(&dir.path().join("fifo"));
    for path in ["link", "big"] {
        assert!(read_no_follow(dir.path(), path).is_ok());
        assert!(
            attempt(|| read_no_follow(dir.path(), path)).is_none(),
            "{path}"
        );
    }
    // A FIFO opens at once (non-blocking) and is refused as no regular file, in both runs.
    let fifo = attempt(|| read_no_follow(dir.path(), "fifo")).expect("refused at once");
    assert_eq!(fifo.unwrap_err().kind(), io::ErrorKind::InvalidInput);
    // The allowance is the attempt's, not each file's.
    let half = vec![b'y'; usize::try_from(INLINE_BYTES / 2).unwrap() + 1];
    std::fs::write(dir.path().join("h1"), &half).unwrap();
    std::fs::write(dir.path().join("h2"), &half).unwrap();
    let (_, _) = (
        read_no_follow(dir.path(), "h1").unwrap(),
        read_no_follow(dir.path(), "h2").unwrap(),
    );
    assert!(attempt(|| read_no_follow(dir.path(), "h1")).is_some());
    assert!(
        attempt(|| (
            read_no_follow(dir.path(), "h1"),
            read_no_follow(dir.path(), "h2")
        ))
        .is_none()
    );
    // So is the number of paths opened.
    let reads = |n| {
        attempt(|| {
            for _ in 0..n {
                let _ = read_no_follow(dir.path(), "a.txt");
            }
        })
    };
    assert!(reads(INLINE_OPENS).is_some());
    assert!(reads(INLINE_OPENS + 1).is_none());
}

// Reads at hand are Linux's (`RESOLVE_CACHED`, `RWF_NOWAIT`): elsewhere every one refuses.
#[cfg(target_os = "linux")]
#[test]
fn a_changeset_past_the_allowance_of_opens_is_left_to_the_blocking_run_at_once() {
    use crate::snapshot::intake;
    let dir = Repo::new(&[("a.txt", "a\n")]);
    let ws = Workspace::open(dir.path()).unwrap();
    let baseline = ws.baseline();
    let changes = |n: u32| {
        let changes: Vec<_> = (0..n)
            .map(|i| {
                let path = format!("new-{i}.txt");
                std::fs::write(dir.path().join(&path), "x\n").unwrap();
                serde_json::json!({"path": path, "kind": "create", "after": blob_of(b"x\n".to_vec()).id})
            })
            .collect();
        serde_json::json!({"baseline": baseline.value, "changes": changes})
    };
    let within = changes(INLINE_OPENS);
    let blocking = intake(&ws, &baseline, &within, soon()).unwrap();
    assert!(blocking.stale.is_empty(), "{:?}", blocking.stale);
    let at_hand = attempt(|| intake(&ws, &baseline, &within, soon()).unwrap()).expect("at hand");
    assert_eq!(at_hand.blobs.len(), blocking.blobs.len());
    let past = changes(INLINE_OPENS + 1);
    assert!(intake(&ws, &baseline, &past, soon()).is_ok());
    assert!(attempt(|| intake(&ws, &baseline, &past, soon())).is_none());
}

#[test]
fn a_move_of_head_is_left_to_the_blocking_run_which_still_sees_it() {
    let dir = Repo::new(&[("a.txt", "a\n")]);
    let ws = Workspace::open(dir.path()).unwrap();
    let first = ws.baseline();
    // `HEAD` as stamped (refused where the file system keeps no entry for a missing ref file).
    if let Some(now) = attempt(|| ws.refresh().unwrap()) {
        assert_eq!(now, (first.clone(), false));
    }
    std::fs::write(dir.path().join("a.txt"), "b\n").unwrap();
    git(dir.path(), &["commit", "-q", "-am", "two"]);
    assert!(attempt(|| ws.refresh()).is_none(), "git names the new tree");
    let (second, moved) = ws.refresh().unwrap();
    assert!(moved, "the refused attempt kept the old stamp");
    assert_ne!(second.rev(), first.rev());
}

#[test]
fn a_lock_held_by_another_thread_is_not_waited_for() {
    let mutex = std::sync::Arc::new(Mutex::new(0));
    let (held, release) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
    std::thread::scope(|s| {
        s.spawn(|| {
            let _guard = rpc_peer::lock(&mutex);
            held.wait();
            release.wait();
        });
        held.wait();
        assert!(attempt(|| lock(&mutex).map(|_| ())).is_none());
        release.wait();
    });
    assert!(attempt(|| lock(&mutex).map(|_| ())).is_some());
}

#[test]
fn a_panic_in_an_attempt_is_a_refusal_and_leaves_no_attempt_behind() {
    assert!(attempt(|| -> () { panic!("in the attempt") }).is_none());
    assert!(!active());
    assert!(attempt(active).unwrap());
}

/// Not Linux: no open or read is known not to wait, so an attempt that reads the workspace refuses
/// and the blocking run reads as everywhere.
#[cfg(not(target_os = "linux"))]
#[test]
fn elsewhere_an_attempt_that_reads_the_workspace_is_left_to_the_blocking_run() {
    let dir = Repo::new(&[("a.txt", "a\n")]);
    let blocking = read_no_follow(dir.path(), "a.txt").unwrap();
    assert_eq!(blocking.id, blob_of(b"a\n".to_vec()).id);
    assert!(attempt(|| read_no_follow(dir.path(), "a.txt")).is_none());
    assert!(attempt(|| metadata(&dir.path().join("a.txt"))).is_none());
    assert!(attempt(|| open(&dir.path().join("a.txt"), 0)).is_none());
}
