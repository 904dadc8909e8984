//! `asp-bridge host serve`: the host started (trusted configuration, workspace), the outer seam
//! served on a byte-stream pair until it ends, and every provider stopped.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use rpc_peer::peer::{self, PeerConfig};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;

use crate::error::{Error, Result};
use crate::{config, host, outer, snapshot};

/// How long running requests may finish once the outer seam's input ended.
const DRAIN: Duration = Duration::from_secs(2);

/// What `asp-bridge host serve` was asked to do.
#[derive(Clone, Debug)]
pub struct Options {
    /// The workspace root (inside a git repository).
    pub repo: PathBuf,
    /// `--config FILE` or `ASP_BRIDGE_CONFIG`.
    pub config: Option<PathBuf>,
    /// How the built-in providers are started: this executable and `provider`, followed by each
    /// one's subcommand ([`crate::builtin::BUILTINS`]); empty, they cannot be started.
    pub builtin_launcher: Vec<String>,
    /// The linter runner's check of a `[[linter]]`'s own keys (see [`crate::builtin::Launcher`]).
    pub check_linter: fn(&serde_json::Value) -> std::result::Result<(), String>,
}

/// Checks that `repo` is inside a git repository, as [`serve`] does first (with the same error),
/// for a caller that wants to know before it starts a host. Blocking: one `git rev-parse`.
pub fn check_workspace(repo: &std::path::Path) -> Result<()> {
    snapshot::git_dirs(repo).map(drop)
}

/// Serves the outer seam on a byte-stream pair (the CLI gives its stdin and stdout) until the
/// input ends, `exit` arrives or SIGTERM/SIGINT does; every provider is stopped before it returns,
/// and what they left behind is ended ([`rpc_peer::child::strays`]).
pub async fn serve<R, W>(reader: R, writer: W, options: Options) -> Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let repo = options.repo.clone();
    let (config, workspace) = tokio::task::spawn_blocking(move || {
        let launcher = crate::builtin::Launcher {
            command: &options.builtin_launcher,
            check_linter: options.check_linter,
        };
        let config = config::Config::load(options.config.as_deref(), launcher)?;
        let workspace = snapshot::Workspace::open(&repo)?;
        Ok::<_, Error>((config, workspace))
    })
    .await
    .map_err(|e| Error::input(format!("start-up failed: {e}")))??;
    let host = Arc::new(host::Host::new(Arc::new(workspace), config));
    host.warm_up();
    let exit = Arc::new(Notify::new());
    let handler = Arc::new(outer::Outer {
        host: host.clone(),
        exit: exit.clone(),
        shutting_down: Arc::new(AtomicBool::new(false)),
    });
    let config = PeerConfig {
        role: rpc_peer::Role::Client,
        classify: asp_wire::code::fail_class,
        ..PeerConfig::default()
    };
    let served = peer::serve(reader, writer, config, handler, DRAIN);
    tokio::select! {
        outcome = served => {
            if let Err(e) = outcome {
                tracing::warn!("outer seam ended: {e}");
            }
        }
        () = exit.notified() => tracing::debug!("exit received"),
        () = terminated() => tracing::info!("terminated by a signal"),
    }
    // The orderly stop of the providers takes up to its bound; a SIGTERM or SIGINT meanwhile (the
    // runtime's handler now owns them, so they would otherwise be ignored) ends it at once: the
    // stop is dropped, which kills each provider's process group.
    tokio::select! {
        () = host.shutdown() => {}
        () = terminated() => tracing::info!("terminated while stopping the providers; killing them"),
    }
    // What a provider started out of its group's reach (`setsid`) came back to this process when
    // the provider ended, if it adopted (`asp-bridge host serve` does): it ends with the host.
    rpc_peer::child::strays::end_all().await;
    Ok(())
}

/// Resolves on SIGTERM or SIGINT.
async fn terminated() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
