//! `asp-bridge mcp`: read-only MCP tools over stdio for AI agents (mcp-adapter). The host is
//! supervised and started lazily, so the server answers `tools/list` while the host is down. Stdout
//! carries MCP frames only; logs go to stderr. The session ends when the client closes stdin (or on
//! SIGINT/SIGTERM), and the host is shut down with it. With the embedded host, a workspace it
//! cannot serve (outside git) stops the command at once with an `input` error, as an invalid
//! configuration does: every tool call would otherwise fail as if the host were down.

use std::sync::Arc;
use std::time::Duration;

use bridge_core::host::HostLaunch;
use bridge_core::{RestartPolicy, Supervisor};

use crate::flags::McpArgs;

pub(crate) async fn run(args: McpArgs) -> anyhow::Result<()> {
    let repo = crate::setup::workspace_root(args.repo.as_deref())?;
    let config = crate::setup::host_config(&args.host, &repo)?;
    let root = repo.clone();
    tokio::task::spawn_blocking(move || crate::host_choice::check_embedded_root(&root)).await??;
    let policy = RestartPolicy {
        initial_delay: Duration::from_millis(args.supervise.restart_delay_ms),
        ..RestartPolicy::default()
    };
    let supervisor = Arc::new(Supervisor::new(HostLaunch(config), policy));
    tokio::select! {
        outcome = mcp_adapter::serve_stdio(supervisor.clone(), &repo, args.max_output_bytes as usize) => {
            outcome?;
        }
        signal = terminated() => {
            tracing::info!(%signal, "stopping the MCP server");
            supervisor.shutdown().await;
        }
    }
    Ok(())
}

/// Resolves with the name of the first terminating signal received.
async fn terminated() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = tokio::signal::ctrl_c() => "SIGINT",
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}
