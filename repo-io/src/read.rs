//! The one way the project reads a file it does not trust: opened without following a final link
//! and without waiting on a FIFO or a device, checked once open to be a regular file (and, when
//! the caller looked at the path first, the very file it looked at), then read whole under a cap or
//! hashed (sha256) as it streams, within a deadline.
//!
//! The bridge's changeset hashes working-tree files with it, the embedded host's snapshot hashes
//! the files it opens with its own non-waiting `openat2` through [`Regular::check`] and
//! [`Regular::hash_through`], the linter runner reads its `{out}` file with it, and
//! `asp-bridge provider` fingerprints its own executable with it. Blocking: run it off the async
//! threads.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::Path;
use std::time::Instant;

use sha2::{Digest as _, Sha256};

/// Bytes read at a time while hashing past what is kept: the deadline is checked between reads.
const CHUNK: usize = 64 * 1024;

/// `path` opened read-only without following a final link (`O_NOFOLLOW`: a link there fails with
/// `ELOOP`), without waiting on a FIFO or a device (`O_NONBLOCK`), never as a controlling terminal.
pub fn open_no_follow(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// An open regular file, with its metadata as opened.
#[derive(Debug)]
pub struct Regular {
    file: File,
    meta: Metadata,
}

impl Regular {
    /// `path` opened with [`open_no_follow`], then [`Regular::check`]ed. Given `looked_at`, a link
    /// found there at the open (`ELOOP`) is a file replaced since the look: `None`, like any other.
    pub fn open(path: &Path, looked_at: Option<&Metadata>) -> io::Result<Option<Regular>> {
        match open_no_follow(path) {
            Ok(file) => Regular::check(file, looked_at),
            Err(e) if looked_at.is_some() && e.raw_os_error() == Some(libc::ELOOP) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `file` if it is a regular file and, given `looked_at` (the path's metadata before it was
    /// opened), that same file (device and inode); `None` otherwise: it never was a regular file,
    /// or it was replaced between the look and the open.
    pub fn check(file: File, looked_at: Option<&Metadata>) -> io::Result<Option<Regular>> {
        use std::os::unix::fs::MetadataExt as _;
        let meta = file.metadata()?;
        let same = looked_at.is_none_or(|l| l.dev() == meta.dev() && l.ino() == meta.ino());
        Ok((meta.is_file() && same).then_some(Regular { file, meta }))
    }

    /// Its metadata, as opened.
    pub fn metadata(&self) -> &Metadata {
        &self.meta
    }

    /// Its bytes read whole ([`read_capped`]): `None` when it holds more than `max`.
    pub fn read_capped(self, max: u64) -> io::Result<Option<Vec<u8>>> {
        read_capped(self.file, max)
    }

    /// Its sha256 as it streams ([`hash`]), with its bytes when at most `keep`; reads fail
    /// ([`is_late`]) once `deadline` has passed.
    pub fn hash(self, keep: usize, deadline: Option<Instant>) -> io::Result<Hashed> {
        self.hash_through(|file| file, keep, deadline)
    }

    /// [`Regular::hash`], the file read through `reader` (the embedded host's reads that never
    /// wait).
    pub fn hash_through<R: Read>(
        self,
        reader: impl FnOnce(File) -> R,
        keep: usize,
        deadline: Option<Instant>,
    ) -> io::Result<Hashed> {
        let size = self.meta.len();
        let reader = Until {
            inner: reader(self.file),
            deadline,
        };
        hash(reader, size, keep)
    }
}

/// The sha256 of the regular file at `path`, hashed as it streams: [`Regular::open`] then
/// [`Regular::hash`], keeping no bytes. `None` when it is no regular file (or not the one looked
/// at).
pub fn hash_file(
    path: &Path,
    looked_at: Option<&Metadata>,
    deadline: Option<Instant>,
) -> io::Result<Option<[u8; 32]>> {
    match Regular::open(path, looked_at)? {
        Some(file) => Ok(Some(file.hash(0, deadline)?.sha256)),
        None => Ok(None),
    }
}

/// What a stream hashed to, and its bytes when they were few enough to keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hashed {
    pub sha256: [u8; 32],
    pub bytes: Option<Vec<u8>>,
}

/// Reads `reader` to its end: `None` when it holds more than `max` bytes (at most `max` + 1 are
/// read).
pub fn read_capped(reader: impl Read, max: u64) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    reader.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

/// Hashes a stream whose length is about `size` (a file's, a git object's) to its end, keeping its
/// bytes when there are at most `keep`. When `size` is within `keep` the bytes are read straight
/// into a buffer of that size, with no scratch buffer; a stream longer than said, or a larger one,
/// is hashed [`CHUNK`] bytes a read (bounded memory whatever its size).
pub fn hash(mut reader: impl Read, size: u64, keep: usize) -> io::Result<Hashed> {
    let Some(size) = usize::try_from(size).ok().filter(|&n| n <= keep) else {
        return hash_rest(reader, Sha256::new(), false, keep);
    };
    let mut kept = Vec::with_capacity(size.saturating_add(1));
    (&mut reader).take(keep as u64 + 1).read_to_end(&mut kept)?;
    if kept.len() <= keep {
        return Ok(Hashed {
            sha256: Sha256::digest(&kept).into(),
            bytes: Some(kept),
        });
    }
    let mut hasher = Sha256::new();
    hasher.update(&kept);
    drop(kept);
    hash_rest(reader, hasher, true, keep)
}

/// Goes on hashing `reader` into `hasher`, keeping its bytes up to `keep` unless `over`.
fn hash_rest(
    mut reader: impl Read,
    mut hasher: Sha256,
    mut over: bool,
    keep: usize,
) -> io::Result<Hashed> {
    let mut kept = Vec::new();
    let mut buffer = vec![0u8; CHUNK];
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buffer[..n]);
        if !over {
            if kept.len() + n > keep {
                over = true;
                kept = Vec::new();
            } else {
                kept.extend_from_slice(&buffer[..n]);
            }
        }
    }
    Ok(Hashed {
        sha256: hasher.finalize().into(),
        bytes: (!over).then_some(kept),
    })
}

/// A reader whose reads fail (`TimedOut`, [`is_late`]) once its deadline has passed: a large file
/// is hashed [`CHUNK`] bytes a read, so its hashing stops within a read of the deadline.
struct Until<R> {
    inner: R,
    deadline: Option<Instant>,
}

impl<R: Read> Read for Until<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(io::Error::new(io::ErrorKind::TimedOut, Late));
        }
        self.inner.read(buf)
    }
}

/// Why a read stopped: its deadline passed.
#[derive(Debug)]
struct Late;

impl std::fmt::Display for Late {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request's deadline passed while it was read")
    }
}

impl std::error::Error for Late {}

/// Whether `error` is a read given up at its deadline (not a failure of the file system).
pub fn is_late(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|e| e.is::<Late>())
}

/// What a file that is not a regular file is, in a few words ("a FIFO", "a socket", "a device").
pub fn special(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = meta.file_type();
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Reads a small regular file of the workspace whole, at `relative` under `root`: no component of
/// `relative` may be a link, and only a regular file is opened (a FIFO, a device or a socket is
/// refused without being opened). `Ok(None)` when it does not exist. Blocking.
pub fn read_small(root: &Path, relative: &Path, max: u64) -> io::Result<Option<Vec<u8>>> {
    use std::io::{Error, ErrorKind};
    let refuse = |why: String| Err(Error::new(ErrorKind::InvalidData, why));
    let mut at = root.to_path_buf();
    let parts: Vec<_> = relative.components().collect();
    let mut meta = None;
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        let found = match std::fs::symlink_metadata(&at) {
            Ok(found) => found,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let kind = found.file_type();
        let last = i + 1 == parts.len();
        if kind.is_symlink() {
            return refuse(format!(
                "{} is a symbolic link, which is never followed",
                at.strip_prefix(root).unwrap_or(&at).display()
            ));
        }
        if last && kind.is_dir() {
            return refuse("it is a directory".to_owned());
        }
        if last && !kind.is_file() {
            return refuse(format!("it is {}, not a regular file", special(&found)));
        }
        if !last && !kind.is_dir() {
            return Ok(None);
        }
        meta = Some(found);
    }
    let Some(meta) = meta else {
        return Ok(None);
    };
    let Some(file) = Regular::open(&at, Some(&meta))? else {
        return refuse("it changed while it was read".to_owned());
    };
    match file.read_capped(max)? {
        Some(bytes) => Ok(Some(bytes)),
        None => refuse(format!("it is larger than {max} bytes")),
    }
}

/// What is kept of a stream read chunk by chunk: its first `cap` bytes ([`Kept::first`]) or its
/// last ([`Kept::last`]); the rest is dropped as it comes, so a flood costs no memory.
pub struct Kept {
    bytes: Vec<u8>,
    cap: usize,
    last: bool,
}

impl Kept {
    pub fn first(cap: usize) -> Kept {
        Kept {
            bytes: Vec::new(),
            cap,
            last: false,
        }
    }

    pub fn last(cap: usize) -> Kept {
        Kept {
            bytes: Vec::new(),
            cap,
            last: true,
        }
    }

    /// Keeps what it keeps of `chunk`; `true` once the first `cap` bytes are all in (never for
    /// the last ones), so that a reader that needs no more can stop there.
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        if self.last {
            self.bytes.extend_from_slice(chunk);
            let over = self.bytes.len().saturating_sub(self.cap);
            self.bytes.drain(..over);
            return false;
        }
        let room = self.cap.saturating_sub(self.bytes.len());
        self.bytes
            .extend_from_slice(&chunk[..chunk.len().min(room)]);
        self.bytes.len() >= self.cap
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests;
