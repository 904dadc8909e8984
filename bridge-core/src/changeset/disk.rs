//! The after-side of a change, read from the working tree without following anything.
//!
//! git stores a symlink as a blob whose bytes are the link's target, and so does the bridge: a link
//! is never followed, whatever it points at (`/dev/zero`, a FIFO, `/etc/passwd`, a directory, nothing).
//! Only regular files are opened (no-follow and non-blocking, checked again once open), and their
//! bytes are streamed into the hash, never read whole. FIFOs, sockets and devices are never opened:
//! they are reported as skipped. Blocking: run it off the async threads.

use std::fs::{File, Metadata};
use std::io::Read as _;
use std::path::Path;
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// What the working tree holds at a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// A regular file or a symlink, with its blob id.
    Blob(String),
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
        let target = std::fs::read_link(&full).map_err(io)?;
        return Ok(Found::Blob(super::blob_id(&super::path_bytes(&target))));
    }
    if kind.is_dir() {
        return Ok(Found::Directory);
    }
    if !kind.is_file() {
        return Ok(Found::Special(special(&meta)));
    }
    let file = match open_regular(&full, &meta) {
        Ok(Some(file)) => file,
        // Replaced by something else between the look and the open: skipped, never followed.
        Ok(None) => return Ok(Found::Special("a file that changed while it was read")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Gone),
        Err(e) => return Err(io(e)),
    };
    hash_stream(file, deadline)
        .map_err(|e| match e {
            Streamed::Io(e) => io(e),
            Streamed::Late => Error::Input(format!(
                "{} could not be read in time to hash it",
                path.display()
            )),
        })
        .map(Found::Blob)
}

#[cfg(unix)]
fn special(meta: &Metadata) -> &'static str {
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

#[cfg(not(unix))]
fn special(_: &Metadata) -> &'static str {
    "not a regular file"
}

/// Opens a regular file without following a link and without blocking on a FIFO, and checks that
/// what was opened is the regular file that was looked at; `None` if it is not.
#[cfg(unix)]
fn open_regular(full: &Path, looked_at: &Metadata) -> std::io::Result<Option<File>> {
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(full);
    let file = match file {
        Ok(file) => file,
        // O_NOFOLLOW on a link that appeared meanwhile.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    let opened = file.metadata()?;
    let same =
        opened.is_file() && opened.dev() == looked_at.dev() && opened.ino() == looked_at.ino();
    Ok(same.then_some(file))
}

#[cfg(not(unix))]
fn open_regular(full: &Path, _: &Metadata) -> std::io::Result<Option<File>> {
    let file = File::open(full)?;
    Ok(file.metadata()?.is_file().then_some(file))
}

enum Streamed {
    Io(std::io::Error),
    Late,
}

/// The blob id of everything `file` holds, read in chunks (bounded memory whatever its size).
fn hash_stream(mut file: File, deadline: Instant) -> Result<String, Streamed> {
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; 256 * 1024];
    loop {
        if Instant::now() > deadline {
            return Err(Streamed::Late);
        }
        match file.read(&mut chunk) {
            Ok(0) => return Ok(super::hex_id(&hasher.finalize())),
            Ok(n) => hasher.update(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Streamed::Io(e)),
        }
    }
}

/// Reads a small regular file of the workspace whole, at `relative` under `root`: no component of
/// `relative` may be a link, and only a regular file is opened (a FIFO, a device or a socket is
/// refused without being opened). `Ok(None)` when it does not exist. Blocking: run it off the async
/// threads.
pub(crate) fn read_small(
    root: &Path,
    relative: &Path,
    max: u64,
) -> std::io::Result<Option<Vec<u8>>> {
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
    let Some(file) = open_regular(&at, &meta)? else {
        return refuse("it changed while it was read".to_owned());
    };
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return refuse(format!("it is larger than {max} bytes"));
    }
    Ok(Some(bytes))
}
