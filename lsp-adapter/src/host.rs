//! Where the language server gets its host: a [`bridge_core::HostSource`] built once the client has
//! named the workspace. The CLI uses a supervised host process ([`supervised`]); tests plug in a host
//! that runs in-process over a duplex.

use std::path::Path;
use std::sync::Arc;

use bridge_core::host::HostLaunch;
use bridge_core::{HostConfig, HostSource, RestartPolicy, Supervisor};

/// Builds the host for a workspace root (canonical, absolute) when the client initializes; it runs
/// on the blocking pool, so it may look at the workspace (e.g. run git) first.
pub type HostFactory =
    Box<dyn FnOnce(&Path) -> bridge_core::Result<Arc<dyn HostSource>> + Send + 'static>;

/// A factory of supervised host processes: `config` makes the host configuration for a root.
pub fn supervised<F>(config: F, policy: RestartPolicy) -> HostFactory
where
    F: FnOnce(&Path) -> bridge_core::Result<HostConfig> + Send + 'static,
{
    Box::new(move |root| {
        let source: Arc<dyn HostSource> =
            Arc::new(Supervisor::new(HostLaunch(config(root)?), policy));
        Ok(source)
    })
}
