//! Many blobs from one `git cat-file --batch` process, instead of one process per blob.
//!
//! git's answers are checked, not trusted: each header must name the object asked for, as a blob,
//! with a size that is then read exactly (hashed as it streams, kept up to the cap) and followed by
//! its newline; anything else ends the batch with an error. The whole batch has a deadline, after
//! which git is killed; the process is always reaped before this returns, so none is left behind.

use std::io::{BufRead, BufReader, Read, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use super::{Blob, command, hash_sized, is_object_id};
use crate::error::{Error, Result};

/// Longest header line git may write (`<oid> blob <size>\n` is under 100 bytes).
const MAX_HEADER: u64 = 256;

/// The blob of each object id in `oids`, in order: `Err` for one git says is missing or is not a
/// blob. The outer `Err` is a failure of the whole batch (git could not run, wrote something
/// unexpected, or the deadline passed). Blocking.
pub(crate) fn cat_blobs(
    repo: &std::path::Path,
    oids: &[String],
    deadline: Instant,
) -> Result<Vec<Result<Blob>>> {
    if oids.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(bad) = oids.iter().find(|oid| !is_object_id(oid)) {
        return Err(Error::git(format!("not an object id: {bad:?}")));
    }
    let mut child = command(repo, &["cat-file", "--batch"])?
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::git(format!("cannot run git: {e}")))?;
    let pipes = (child.stdin.take(), child.stdout.take());
    let child = Arc::new(Mutex::new(child));
    let reaper = match Reaper::new(&child, deadline) {
        Ok(reaper) => reaper,
        Err(e) => {
            finish(&child, true, deadline);
            return Err(Error::git(format!("cannot start a thread: {e}")));
        }
    };
    let read = match pipes {
        (Some(stdin), Some(stdout)) => feed_and_read(stdin, stdout, oids),
        _ => Err(Error::git("git cat-file --batch has no pipes")),
    };
    let timed_out = reaper.stop();
    let status = finish(&child, read.is_err() || timed_out, deadline);
    if timed_out {
        return Err(Error::git(format!(
            "git cat-file --batch did not finish within its deadline ({} blobs)",
            oids.len()
        )));
    }
    let blobs = read?;
    match status {
        Some(status) if status.success() => Ok(blobs),
        Some(status) => Err(Error::git(format!("git cat-file --batch failed: {status}"))),
        None => Err(Error::git(
            "git cat-file --batch did not exit after its input ended",
        )),
    }
}

/// Reaps git: killed first when `kill`, else given until `deadline` to exit (its input has ended
/// and it has closed its output, so it is exiting: the loop turns once or twice), then killed.
/// `None` when it had to be killed.
fn finish(child: &Mutex<Child>, kill: bool, deadline: Instant) -> Option<ExitStatus> {
    let mut child = rpc_peer::lock(child);
    if !kill {
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                _ => break,
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Writes the ids on a thread of its own (git answers while it reads, so neither side can fill
/// its pipe and wait for the other) and reads the answers here.
fn feed_and_read(
    stdin: ChildStdin,
    stdout: ChildStdout,
    oids: &[String],
) -> Result<Vec<Result<Blob>>> {
    let mut input = Vec::with_capacity(oids.len() * 41);
    for oid in oids {
        input.extend_from_slice(oid.as_bytes());
        input.push(b'\n');
    }
    let writer = std::thread::Builder::new()
        .name("git-cat-file-input".into())
        .spawn(move || {
            let mut stdin = stdin;
            // A write error means git ended early; the reader reports what it saw.
            let _ = stdin.write_all(&input);
        })
        .map_err(|e| Error::git(format!("cannot start a thread: {e}")))?;
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let read = oids
        .iter()
        .map(|oid| read_one(&mut reader, oid))
        .collect::<Result<Vec<_>>>()
        .and_then(|blobs| end_of_answers(&mut reader).map(|()| blobs));
    // On an error git is killed by the caller, which ends a write still blocked (EPIPE), and the
    // writer ends on its own.
    drop(reader);
    if read.is_ok() {
        let _ = writer.join();
    }
    read
}

/// One answer: `Ok(Err(_))` for an object git says it does not have as a blob.
fn read_one(reader: &mut impl BufRead, oid: &str) -> Result<Result<Blob>> {
    let mut header = Vec::new();
    (&mut *reader)
        .take(MAX_HEADER)
        .read_until(b'\n', &mut header)
        .map_err(|e| Error::io("reading git cat-file --batch", e))?;
    let Some(header) = header.strip_suffix(b"\n") else {
        return Err(unexpected(
            oid,
            "an answer that ends early or a header that is too long",
        ));
    };
    let header =
        std::str::from_utf8(header).map_err(|_| unexpected(oid, "a header that is not UTF-8"))?;
    let mut fields = header.split(' ');
    let (Some(named), kind, size, None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(unexpected(oid, "a header of more than three fields"));
    };
    if named != oid {
        return Err(unexpected(oid, "a header naming another object"));
    }
    let size = match (kind, size) {
        (Some("missing" | "ambiguous"), None) => {
            return Ok(Err(Error::git(format!("git has no object {oid}"))));
        }
        (Some(_), Some(size)) => size
            .parse::<u64>()
            .map_err(|_| unexpected(oid, "a size that is not a number"))?,
        _ => return Err(unexpected(oid, "a header without a size")),
    };
    if kind != Some("blob") {
        // Skip the object's content so that the next answer can be read.
        let skipped = std::io::copy(&mut (&mut *reader).take(size), &mut std::io::sink())
            .map_err(|e| Error::io("reading git cat-file --batch", e))?;
        end_of_object(reader, oid, skipped == size)?;
        return Ok(Err(Error::git(format!("{oid} is not a blob"))));
    }
    let mut counted = Counted {
        inner: (&mut *reader).take(size),
        count: 0,
    };
    let blob = hash_sized(&mut counted, size).map_err(|e| Error::io("reading a git blob", e))?;
    let complete = counted.count == size;
    end_of_object(reader, oid, complete)?;
    Ok(Ok(blob))
}

/// Reads on until git closes its output, which it does as it exits once its input has ended (so
/// that reaping it then takes no wait): anything more than the answers asked for is unexpected.
fn end_of_answers(reader: &mut impl Read) -> Result<()> {
    let mut more = [0u8; 1];
    match reader.read(&mut more) {
        Ok(0) => Ok(()),
        Ok(_) => Err(Error::git(
            "git cat-file --batch wrote more than the answers asked for",
        )),
        Err(e) => Err(Error::io("reading git cat-file --batch", e)),
    }
}

/// Checks that the whole object was read and that its newline follows.
fn end_of_object(reader: &mut impl Read, oid: &str, complete: bool) -> Result<()> {
    let mut newline = [0u8; 1];
    if !complete || reader.read_exact(&mut newline).is_err() || newline != *b"\n" {
        return Err(unexpected(oid, "an object shorter than its size"));
    }
    Ok(())
}

fn unexpected(oid: &str, what: &str) -> Error {
    Error::git(format!("git cat-file --batch answered {oid} with {what}"))
}

/// A reader that counts the bytes read through it.
struct Counted<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// Kills git at the deadline unless stopped first.
struct Reaper {
    stop: mpsc::Sender<()>,
    watchdog: std::thread::JoinHandle<bool>,
}

impl Reaper {
    fn new(child: &Arc<Mutex<Child>>, deadline: Instant) -> std::io::Result<Reaper> {
        let (stop, stopped) = mpsc::channel::<()>();
        let child = child.clone();
        let watchdog = std::thread::Builder::new()
            .name("git-cat-file-deadline".into())
            .spawn(move || {
                let left = deadline.saturating_duration_since(Instant::now());
                match stopped.recv_timeout(left) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        let _ = rpc_peer::lock(&child).kill();
                        true
                    }
                    _ => false,
                }
            })?;
        Ok(Reaper { stop, watchdog })
    }

    /// Stops the watchdog; whether it had already killed git.
    fn stop(self) -> bool {
        let _ = self.stop.send(());
        self.watchdog.join().unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    const OID: &str = "0123456789abcdef0123456789abcdef01234567";

    fn answer(bytes: &[u8]) -> Result<Result<Blob>> {
        read_one(&mut Cursor::new(bytes.to_vec()), OID)
    }

    #[test]
    fn a_blob_is_read_to_its_size_and_its_newline() {
        let blob = answer(format!("{OID} blob 3\nabc\n").as_bytes())
            .unwrap()
            .unwrap();
        assert_eq!(blob.id, crate::snapshot::blob_of(b"abc".to_vec()).id);
        assert_eq!(blob.bytes.unwrap().as_slice(), b"abc");
    }

    #[test]
    fn a_missing_object_or_another_kind_fails_that_blob_only() {
        assert!(
            answer(format!("{OID} missing\n").as_bytes())
                .unwrap()
                .is_err()
        );
        let mut two = Cursor::new(format!("{OID} tree 2\nxy\n{OID} blob 1\nz\n").into_bytes());
        assert!(
            read_one(&mut two, OID).unwrap().is_err(),
            "a tree is not a blob"
        );
        assert!(
            read_one(&mut two, OID).unwrap().is_ok(),
            "the next answer is still read"
        );
    }

    #[test]
    fn unexpected_output_fails_the_batch() {
        let other = "f".repeat(40);
        for hostile in [
            format!("{other} blob 3\nabc\n"),
            format!("{OID} blob 5\nabc\n"),
            format!("{OID} blob 3\nabcd"),
            format!("{OID} blob 3"),
            format!("{OID} blob -3\nabc\n"),
            format!("{OID} blob 3 extra\nabc\n"),
            format!("{OID} blob\nabc\n"),
            format!("{OID} {} 3\nabc\n", "x".repeat(300)),
            String::new(),
        ] {
            assert!(answer(hostile.as_bytes()).is_err(), "{hostile:?}");
        }
        assert!(end_of_answers(&mut Cursor::new(b"")).is_ok());
        assert!(
            end_of_answers(&mut Cursor::new(format!("{OID} blob 1\nz\n"))).is_err(),
            "an answer nobody asked for"
        );
    }

    #[test]
    fn ids_that_git_could_read_as_options_or_several_requests_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let soon = Instant::now() + Duration::from_secs(5);
        for bad in ["--batch-all-objects", "abc", &format!("{OID}\n{OID}")] {
            assert!(
                cat_blobs(dir.path(), &[bad.to_owned()], soon).is_err(),
                "{bad:?}"
            );
        }
    }
}
