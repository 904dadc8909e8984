//! Where the host comes from: normally the [`Supervisor`] (lazy start, restart with a growing delay),
//! or anything else that yields a [`HostClient`], such as a host running in-process in tests.

use std::future::Future;
use std::pin::Pin;

use bridge_core::{HostClient, Supervisor};

/// A boxed future borrowing its source.
pub type HostFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A source of host connections for the tools.
pub trait HostSource: Send + Sync + 'static {
    /// A client of a live host; starts (or restarts) it when due, otherwise fails fast with a
    /// `health` error that says why it is down.
    fn client(&self) -> HostFuture<'_, bridge_core::Result<HostClient>>;

    /// Stops the host for good (the MCP session is over); later calls fail.
    fn shutdown(&self) -> HostFuture<'_, ()>;
}

impl HostSource for Supervisor {
    fn client(&self) -> HostFuture<'_, bridge_core::Result<HostClient>> {
        Box::pin(Supervisor::client(self))
    }

    fn shutdown(&self) -> HostFuture<'_, ()> {
        Box::pin(Supervisor::shutdown(self))
    }
}
