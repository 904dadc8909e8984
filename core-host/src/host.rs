//! The host's state: the workspace and the enrolled providers.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::policy::Policies;
use crate::provider::Slot;
use crate::snapshot::Workspace;

/// How long `shutdown` waits for the providers before they are killed.
const SHUTDOWN_BOUND: Duration = Duration::from_millis(1500);

pub(crate) struct Host {
    pub(crate) workspace: Arc<Workspace>,
    pub(crate) policies: Arc<Policies>,
    pub(crate) slots: Vec<Arc<Slot>>,
    /// The trusted configuration file, if one was read.
    pub(crate) config_source: Option<PathBuf>,
}

impl Host {
    pub(crate) fn new(workspace: Arc<Workspace>, config: Config) -> Host {
        // Providers start in the configuration's directory (trusted), never in the repository.
        let cwd = config
            .source
            .as_ref()
            .and_then(|p| p.parent())
            .filter(|p| p.is_dir())
            .map_or_else(|| PathBuf::from("/"), PathBuf::from);
        let slots = config
            .providers
            .into_iter()
            .map(|spec| Arc::new(Slot::new(spec, workspace.clone(), cwd.clone())))
            .collect();
        Host {
            workspace,
            policies: Arc::default(),
            slots,
            config_source: config.source,
        }
    }

    /// Starts every provider in the background, so the first evaluation finds them warm.
    pub(crate) fn warm_up(&self) {
        let baseline = self.workspace.baseline();
        for slot in &self.slots {
            let slot = slot.clone();
            let baseline = baseline.clone();
            tokio::spawn(async move { slot.warm_up(&baseline).await });
        }
    }

    /// Stops every provider: the fixed escalation for up to 1.5 s, then they are killed.
    pub(crate) async fn shutdown(&self) {
        let mut tasks = tokio::task::JoinSet::new();
        for slot in &self.slots {
            let slot = slot.clone();
            tasks.spawn(async move { slot.shutdown().await });
        }
        if tokio::time::timeout(SHUTDOWN_BOUND, async {
            while tasks.join_next().await.is_some() {}
        })
        .await
        .is_err()
        {
            tracing::warn!("providers still stopping after {SHUTDOWN_BOUND:?}; killing them");
            tasks.abort_all();
        }
    }
}
