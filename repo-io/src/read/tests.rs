//! The no-follow reader on links, FIFOs, replaced files, caps and deadlines.

use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

#[test]
fn a_regular_file_is_hashed_and_kept_within_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    std::fs::write(&path, b"hello\n").unwrap();
    let kept = Regular::open(&path, None).unwrap().unwrap().hash(6, None);
    assert_eq!(
        kept.unwrap(),
        Hashed {
            sha256: sha256(b"hello\n"),
            bytes: Some(b"hello\n".to_vec())
        }
    );
    let over = Regular::open(&path, None).unwrap().unwrap().hash(5, None);
    assert_eq!(over.unwrap().bytes, None);
    assert_eq!(
        hash_file(&path, None, None).unwrap(),
        Some(sha256(b"hello\n"))
    );
}

#[test]
fn a_stream_longer_or_shorter_than_said_is_hashed_whole() {
    let bytes = vec![7u8; 3 * CHUNK + 5];
    for said in [0, 10, bytes.len() as u64, u64::MAX] {
        let hashed = hash(&bytes[..], said, 4 * CHUNK).unwrap();
        assert_eq!(hashed.sha256, sha256(&bytes), "said {said}");
        assert_eq!(hashed.bytes.as_deref(), Some(&bytes[..]), "said {said}");
        let over = hash(&bytes[..], said, CHUNK).unwrap();
        assert_eq!((over.sha256, over.bytes), (sha256(&bytes), None));
    }
}

#[test]
fn a_link_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("target"), b"secret").unwrap();
    std::os::unix::fs::symlink("target", dir.path().join("link")).unwrap();
    let e = Regular::open(&dir.path().join("link"), None).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
    let e = read_small(dir.path(), Path::new("link"), 100).unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
}

#[test]
fn a_fifo_is_opened_without_waiting_and_is_no_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    // Opened at once (no writer needed) and refused.
    assert!(Regular::open(&fifo, None).unwrap().is_none());
    assert_eq!(hash_file(&fifo, None, None).unwrap(), None);
    let meta = std::fs::symlink_metadata(&fifo).unwrap();
    assert_eq!(special(&meta), "a FIFO");
    let e = read_small(dir.path(), Path::new("fifo"), 100).unwrap_err();
    assert!(e.to_string().contains("a FIFO"), "{e}");
}

#[test]
fn a_file_replaced_after_it_was_looked_at_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    std::fs::write(&path, b"first").unwrap();
    let looked_at = std::fs::symlink_metadata(&path).unwrap();
    assert!(Regular::open(&path, Some(&looked_at)).unwrap().is_some());
    // Written while the first still exists, so it has an inode of its own, then moved over it.
    let other = dir.path().join("other");
    std::fs::write(&other, b"second").unwrap();
    std::fs::rename(&other, &path).unwrap();
    assert!(Regular::open(&path, Some(&looked_at)).unwrap().is_none());
    // A link put there since the look is a replacement too, not an error.
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("elsewhere", &path).unwrap();
    assert!(Regular::open(&path, Some(&looked_at)).unwrap().is_none());
}

#[test]
fn a_read_past_the_cap_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big");
    std::fs::write(&path, vec![b'x'; 11]).unwrap();
    let open = || Regular::open(&path, None).unwrap().unwrap();
    assert_eq!(open().read_capped(11).unwrap(), Some(vec![b'x'; 11]));
    assert_eq!(open().read_capped(10).unwrap(), None);
    assert_eq!(
        read_small(dir.path(), Path::new("big"), 11).unwrap(),
        Some(vec![b'x'; 11])
    );
    let e = read_small(dir.path(), Path::new("big"), 10).unwrap_err();
    assert!(e.to_string().contains("larger than 10 bytes"), "{e}");
    assert_eq!(read_small(dir.path(), Path::new("gone"), 10).unwrap(), None);
}

#[test]
fn a_read_past_its_deadline_stops_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    std::fs::write(&path, b"hello").unwrap();
    let past = Instant::now() - Duration::from_millis(1);
    let e = hash_file(&path, None, Some(past)).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    assert!(is_late(&e));
    assert!(!is_late(&io::Error::new(io::ErrorKind::TimedOut, "nfs")));
    let soon = Instant::now() + Duration::from_secs(60);
    assert!(hash_file(&path, None, Some(soon)).unwrap().is_some());
}
