//! Where the language server gets its host: a [`HostSource`] built once the client has named the
//! workspace. The CLI uses a supervised host process ([`supervised`]); tests plug in a host that runs
//! in-process over a duplex.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use bridge_core::{HostClient, HostConfig, RestartPolicy, Supervisor};
use tokio::sync::watch;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A host that may come and go: [`Supervisor`] is the real one.
pub trait HostSource: Send + Sync + 'static {
    /// A client of a live host; starts or restarts it when due, else fails fast with a `health` error.
    fn client(&self) -> BoxFuture<'_, bridge_core::Result<HostClient>>;
    /// Counts successful starts (1 after the first start, 2 after a restart…).
    fn starts(&self) -> watch::Receiver<u64>;
    /// Stops the host (the fixed escalation) and refuses further calls.
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}

impl HostSource for Supervisor {
    fn client(&self) -> BoxFuture<'_, bridge_core::Result<HostClient>> {
        Box::pin(Supervisor::client(self))
    }

    fn starts(&self) -> watch::Receiver<u64> {
        Supervisor::starts(self)
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(Supervisor::shutdown(self))
    }
}

/// Builds the host for a workspace root (canonical, absolute) when the client initializes.
pub type HostFactory =
    Box<dyn FnOnce(&Path) -> bridge_core::Result<Arc<dyn HostSource>> + Send + 'static>;

/// A factory of supervised host processes: `config` makes the host configuration for a root.
pub fn supervised<F>(config: F, policy: RestartPolicy) -> HostFactory
where
    F: FnOnce(&Path) -> bridge_core::Result<HostConfig> + Send + 'static,
{
    Box::new(move |root| {
        let source: Arc<dyn HostSource> = Arc::new(Supervisor::new(config(root)?, policy));
        Ok(source)
    })
}
