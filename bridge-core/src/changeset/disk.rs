//! The after-side of a change, read from the working tree without following anything.
//!
//! git stores a symlink as a blob whose bytes are the link's target, and so does the bridge: a link
//! is never followed, whatever it points at (`/dev/zero`, a FIFO, `/etc/passwd`, a directory, nothing).
//! Only regular files are opened (no-follow and non-blocking, checked again once open), and their
//! bytes are streamed into the hash, never read whole. FIFOs, sockets and devices are never opened:
//! they are reported as skipped. Blocking: run it off the async threads.

use std::path::Path;
use std::time::Instant;

use repo_io::read::{self, Regular};

use crate::error::{Error, Result};

/// What the working tree holds at a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// A regular file or a symlink: its blob id, and its length (a link's: its target's).
    Blob { id: String, len: u64 },
    /// Nothing (deleted meanwhile).
    Gone,
    /// A directory (a checked-out submodule or a nested repository).
    Directory,
    /// Something that has no content to hash: a FIFO, a socket, a device.
    Special(&'static str),
}

/// What is at `root`/`path`, hashed if it is a file or a link. Fails past `deadline`.
pub(crate) fn read(root: &Path, path: &Path, deadline: Instant) -> Result<Found> {
    let full = root.join(path);
    let io = |e: std::io::Error| Error::io(format!("reading {}", full.display()), e);
    let meta = match std::fs::symlink_metadata(&full) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Gone),
        Err(e) => return Err(io(e)),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = super::path_bytes(&std::fs::read_link(&full).map_err(io)?);
        return Ok(Found::Blob {
            id: super::blob_id(&target),
            len: target.len() as u64,
        });
    }
    if kind.is_dir() {
        return Ok(Found::Directory);
    }
    if !kind.is_file() {
        return Ok(Found::Special(read::special(&meta)));
    }
    let file = match Regular::open(&full, Some(&meta)) {
        Ok(Some(file)) => file,
        // Replaced by something else (a link included) between the look and the open: skipped,
        // never followed.
        Ok(None) => return Ok(Found::Special("a file that changed while it was read")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Gone),
        Err(e) => return Err(io(e)),
    };
    // Streamed into the hash, never read whole (bounded memory whatever its size).
    match file.hash(0, Some(deadline)) {
        Ok(hashed) => Ok(Found::Blob {
            id: super::blob_id_of_digest(&hashed.sha256),
            len: meta.len(),
        }),
        Err(e) if read::is_late(&e) => Err(Error::Input(format!(
            "{} could not be read in time to hash it",
            path.display()
        ))),
        Err(e) => Err(io(e)),
    }
}
