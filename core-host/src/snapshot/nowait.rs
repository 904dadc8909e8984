//! Workspace reads that never wait, so that the host's blocking work can be tried on the async
//! thread first and crosses to the blocking pool only when it must.
//!
//! During an [`attempt`] every read this module serves is limited to what the kernel already
//! holds: paths are resolved from the dentry cache alone (`openat2` with `RESOLVE_CACHED`), bytes
//! are read from the page cache alone (`preadv2` with `RWF_NOWAIT`), at most [`INLINE_OPENS`] paths
//! are opened and [`INLINE_BYTES`] read in all (a large changeset is work for the pool), a lock
//! that another thread holds is not waited for, and no git process is started.
//! Whatever would wait *refuses*: the attempt's result is thrown away and [`hop`] runs the same
//! work again on the blocking pool. This is how io_uring tries an `openat` or a read inline before
//! it hands the request to a worker. Outside an attempt every function here is the plain blocking
//! call.
//!
//! Work tried this way may only keep in shared state what it found without a refusal (the caches
//! are filled by git's answers, which an attempt never gets); whatever it read is read again.
//!
//! Those system calls are Linux's. Elsewhere (macOS) an attempt's open and read refuse at once, so
//! every attempt that reads the workspace runs on the blocking pool, as it would without them.

use std::cell::Cell;
use std::fs::File;
use std::io::{self, Read};
#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd as _, FromRawFd as _};
use std::path::Path;
use std::sync::{Mutex, MutexGuard, TryLockError};

use tokio::task::{JoinError, JoinHandle};

/// Most bytes an attempt may read (and hash) on the async thread; more goes to the pool.
pub(crate) const INLINE_BYTES: u64 = 1 << 20;

/// Most paths an attempt may open on the async thread; more go to the pool.
pub(crate) const INLINE_OPENS: u32 = 64;

/// The attempt running on this thread: what it may still open and read, and whether anything
/// refused.
#[derive(Clone, Copy)]
struct Attempt {
    opens_left: u32,
    bytes_left: u64,
    refused: bool,
}

thread_local! {
    static ATTEMPT: Cell<Option<Attempt>> = const { Cell::new(None) };
}

/// Whether an attempt is running on this thread.
pub(crate) fn active() -> bool {
    ATTEMPT.get().is_some()
}

/// Marks the running attempt as refused; the error the refused read returns.
pub(crate) fn refuse() -> io::Error {
    if let Some(mut attempt) = ATTEMPT.get() {
        attempt.refused = true;
        ATTEMPT.set(Some(attempt));
    }
    io::Error::new(
        io::ErrorKind::WouldBlock,
        "not at hand without waiting (tried again off the async thread)",
    )
}

/// Takes `opens` paths and `bytes` bytes of the running attempt's allowance; refuses when it is
/// spent.
fn charge(opens: u32, bytes: u64) -> io::Result<()> {
    let Some(mut attempt) = ATTEMPT.get() else {
        return Ok(());
    };
    if opens > attempt.opens_left || bytes > attempt.bytes_left {
        return Err(refuse());
    }
    attempt.opens_left -= opens;
    attempt.bytes_left -= bytes;
    ATTEMPT.set(Some(attempt));
    Ok(())
}

/// Runs `work` with reads that never wait; `None` when any of them refused (or it panicked), and
/// then its result, whatever it was, is not to be used.
pub(crate) fn attempt<T>(work: impl FnOnce() -> T) -> Option<T> {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            ATTEMPT.set(None);
        }
    }
    ATTEMPT.set(Some(Attempt {
        opens_left: INLINE_OPENS,
        bytes_left: INLINE_BYTES,
        refused: false,
    }));
    let _reset = Reset;
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).ok();
    let refused = ATTEMPT.get().is_none_or(|a| a.refused);
    done.filter(|_| !refused)
}

/// Blocking work, started where it costs least: done at once when it needed nothing that waits,
/// else running on the blocking pool.
pub(crate) enum Hop<T> {
    Done(T),
    Pool(JoinHandle<T>),
}

/// Starts `work` (blocking workspace reads): an [`attempt`] on this thread first, the blocking
/// pool when the attempt refused. Either way the caller may do other work before [`Hop::join`].
pub(crate) fn hop<T, F>(work: F) -> Hop<T>
where
    F: Fn() -> T + Send + 'static,
    T: Send + 'static,
{
    match attempt(&work) {
        Some(done) => Hop::Done(done),
        None => Hop::Pool(tokio::task::spawn_blocking(work)),
    }
}

impl<T> Hop<T> {
    pub(crate) async fn join(self) -> Result<T, JoinError> {
        match self {
            Hop::Done(done) => Ok(done),
            Hop::Pool(handle) => handle.await,
        }
    }
}

/// `mutex` locked: during an attempt only if no other thread holds it (one may hold it across
/// reads that wait).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> io::Result<MutexGuard<'_, T>> {
    if !active() {
        return Ok(rpc_peer::lock(mutex));
    }
    match mutex.try_lock() {
        Ok(guard) => Ok(guard),
        Err(TryLockError::Poisoned(poisoned)) => Ok(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => Err(refuse()),
    }
}

/// `path` opened read-only with `flags` added, refusing a symlink anywhere on the way, in one system
/// call (`openat2` with `RESOLVE_NO_SYMLINKS`).
#[cfg(target_os = "linux")]
pub(crate) fn open_no_symlinks(path: &Path, flags: libc::c_int) -> io::Result<File> {
    openat2(path, flags, libc::RESOLVE_NO_SYMLINKS)
}

/// There is no such call here (not Linux): it fails (`Unsupported`, or a refusal during an
/// attempt) and the caller walks the path itself.
#[cfg(not(target_os = "linux"))]
pub(crate) fn open_no_symlinks(_path: &Path, _flags: libc::c_int) -> io::Result<File> {
    if active() {
        return Err(refuse());
    }
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "no openat2 on this platform",
    ))
}

/// `path` opened by `openat2` with `flags` (read-only, close-on-exec added) and `resolve`, plus
/// `RESOLVE_CACHED` during an attempt. Any failure of an attempt's open but a missing file refuses:
/// the blocking call may succeed, or fail for a reason worth its own words.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn openat2(path: &Path, flags: libc::c_int, resolve: u64) -> io::Result<File> {
    use std::os::unix::ffi::OsStrExt as _;
    charge(1, 0)?;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a path"))?;
    // SAFETY: `open_how` is plain data; all-zero is its documented empty value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_RDONLY | libc::O_CLOEXEC) as u64;
    how.resolve = resolve | if active() { libc::RESOLVE_CACHED } else { 0 };
    // SAFETY: a valid NUL-terminated path and a valid `open_how` of the size passed; the kernel
    // only reads them. A non-negative result is a new file descriptor that nothing else owns.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            path.as_ptr(),
            &raw const how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    match i32::try_from(fd) {
        // SAFETY: `fd` was just opened and is owned by the returned file alone.
        Ok(fd) if fd >= 0 => Ok(unsafe { File::from_raw_fd(fd) }),
        _ => {
            let e = io::Error::last_os_error();
            if active() && e.kind() != io::ErrorKind::NotFound {
                return Err(refuse());
            }
            Err(e)
        }
    }
}

/// A file opened read-only with `flags` added: by `openat2` during an attempt (which refuses where
/// there is none), by `open` otherwise.
pub(crate) fn open(path: &Path, flags: libc::c_int) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    if active() {
        #[cfg(target_os = "linux")]
        return openat2(path, flags, 0);
        #[cfg(not(target_os = "linux"))]
        return Err(refuse());
    }
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
}

/// `std::fs::metadata` (symlinks followed): during an attempt, of a handle opened by a cached
/// lookup (`O_PATH`, so nothing but the lookup happens; refused where there is none).
pub(crate) fn metadata(path: &Path) -> io::Result<std::fs::Metadata> {
    if active() {
        #[cfg(target_os = "linux")]
        return openat2(path, libc::O_PATH, 0)?.metadata();
        #[cfg(not(target_os = "linux"))]
        return Err(refuse());
    }
    std::fs::metadata(path)
}

/// A file read through [`Read`]: during an attempt only from the page cache (`RWF_NOWAIT`), or
/// from a file system that keeps its files in memory (tmpfs, which has no `RWF_NOWAIT`), and
/// within the attempt's allowance of bytes. Where there is no `RWF_NOWAIT` (not Linux) an attempt's
/// read refuses.
pub(crate) struct Reader {
    file: File,
    /// Found to be on tmpfs: read plainly, without asking for `RWF_NOWAIT` again.
    #[cfg(target_os = "linux")]
    in_memory: bool,
}

impl Reader {
    pub(crate) fn new(file: File) -> Reader {
        Reader {
            file,
            #[cfg(target_os = "linux")]
            in_memory: false,
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn read_at_hand(&mut self, _buf: &mut [u8]) -> io::Result<usize> {
        Err(refuse())
    }

    /// One read from the page cache (or tmpfs) only, within an attempt.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn read_at_hand(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = if self.in_memory {
            self.file.read(buf)?
        } else {
            let iov = libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: buf.len(),
            };
            // The system call itself, not glibc's wrapper (glibc 2.26): the distributed binary
            // runs on glibc 2.17. Its offset is passed as two halves; -1 in both reads at (and
            // moves) the file's own position.
            // SAFETY: one iovec over `buf`, valid for writes of its length for the whole call.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_preadv2,
                    self.file.as_raw_fd(),
                    &iov as *const libc::iovec,
                    1,
                    -1 as libc::c_long,
                    -1 as libc::c_long,
                    libc::RWF_NOWAIT,
                )
            };
            match usize::try_from(n) {
                Ok(n) => n,
                Err(_) => {
                    let e = io::Error::last_os_error();
                    match e.raw_os_error() {
                        Some(libc::EINTR) => return Err(e),
                        Some(libc::EOPNOTSUPP) if in_memory(&self.file) => {
                            self.in_memory = true;
                            self.file.read(buf)?
                        }
                        _ => return Err(refuse()),
                    }
                }
            }
        };
        Ok(n)
    }
}

impl Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !active() {
            return self.file.read(buf);
        }
        let n = self.read_at_hand(buf)?;
        charge(0, n as u64)?;
        Ok(n)
    }
}

/// Whether `file` is on tmpfs, whose reads are copies from memory.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn in_memory(file: &File) -> bool {
    // SAFETY: an all-zero `statfs` is a valid value of this plain C struct.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a `statfs` valid for writes for the duration of the call.
    let done = unsafe { libc::fstatfs(file.as_raw_fd(), &mut fs) };
    done == 0 && fs.f_type == libc::TMPFS_MAGIC
}

#[cfg(test)]
mod tests;
