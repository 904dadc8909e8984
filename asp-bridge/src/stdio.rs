//! This process's stdin and stdout as the transport of a stdio server (`host serve`, `provider`).
//!
//! tokio's `stdin()`/`stdout()` run every read and write on the blocking thread pool: two thread
//! hand-offs per message. When both are pipes (as a host or a client starts a server) they are
//! driven by the runtime's reactor instead. On Linux the descriptors are reopened through
//! `/proc/self/fd`, which gives them open file descriptions of their own, so `O_NONBLOCK` stays
//! private to this transport (the process's own stdio and any child that inherits it keep their
//! flags). Anything else (a terminal, a file, a socket, another platform) uses tokio's handles.

// This module is the transport of the stdio servers: stdout is theirs.
use tokio::io::{AsyncRead, AsyncWrite, stdin, stdout};

/// The reading half of the transport.
pub(crate) type Input = Box<dyn AsyncRead + Unpin + Send>;
/// The writing half of the transport.
pub(crate) type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// stdin and stdout: reactor-driven pipes when both are FIFOs, else tokio's blocking handles.
/// Must be called within the runtime.
pub(crate) fn pipes() -> (Input, Output) {
    #[cfg(target_os = "linux")]
    if let Some((input, output)) = linux::reopened_pipes() {
        tracing::debug!("stdio: non-blocking pipes");
        return (input, output);
    }
    (Box::new(stdin()), Box::new(stdout()))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::OwnedFd;
    use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};

    use tokio::net::unix::pipe;

    use super::{Input, Output};

    pub(super) fn reopened_pipes() -> Option<(Input, Output)> {
        let input = reopen("/proc/self/fd/0", false)?;
        let output = reopen("/proc/self/fd/1", true)?;
        let input = pipe::Receiver::from_owned_fd(input).ok()?;
        let output = pipe::Sender::from_owned_fd(output).ok()?;
        Some((Box::new(input), Box::new(output)))
    }

    /// `path` opened anew with `O_NONBLOCK`, when it is a FIFO.
    fn reopen(path: &str, write: bool) -> Option<OwnedFd> {
        let file = std::fs::OpenOptions::new()
            .read(!write)
            .write(write)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .ok()?;
        let fifo = file.metadata().ok()?.file_type().is_fifo();
        fifo.then(|| file.into())
    }
}
