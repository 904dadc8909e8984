//! Where a front end gets its host: a [`HostSource`]. The [`Supervisor`] is the real one (lazy start,
//! restart with a growing delay, fail fast during an outage); tests plug in a host that runs
//! in-process over a duplex.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::watch;

use crate::error::Result;
use crate::host::{HostClient, Supervisor};

/// A boxed, sendable future borrowing its source.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A host that may come and go.
pub trait HostSource: Send + Sync + 'static {
    /// A client of a live host; starts or restarts it when due, else fails fast with a `health`
    /// error that says why it is down.
    fn client(&self) -> BoxFuture<'_, Result<HostClient>>;

    /// Counts successful starts (1 after the first start, 2 after a restart…). A source that does
    /// not count them returns a receiver that never changes.
    fn starts(&self) -> watch::Receiver<u64> {
        watch::channel(0).1
    }

    /// Stops the host for good (the fixed escalation); later calls fail.
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}

impl HostSource for Supervisor {
    fn client(&self) -> BoxFuture<'_, Result<HostClient>> {
        Box::pin(Supervisor::client(self))
    }

    fn starts(&self) -> watch::Receiver<u64> {
        Supervisor::starts(self)
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(Supervisor::shutdown(self))
    }
}
