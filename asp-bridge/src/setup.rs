//! What the commands set up before they talk to a host: the workspace root and the host
//! configuration the flags describe.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use bridge_core::HostConfig;

use crate::flags::HostArgs;
use crate::host_choice;

/// The workspace root: `--repo` or the current directory, made absolute; it must be a directory.
pub(crate) fn workspace_root(repo: Option<&Path>) -> anyhow::Result<PathBuf> {
    let repo = match repo {
        Some(repo) => repo.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let root = repo
        .canonicalize()
        .with_context(|| format!("workspace root {}", repo.display()))?;
    anyhow::ensure!(
        root.is_dir(),
        "workspace root {} is not a directory",
        repo.display()
    );
    Ok(root)
}

/// The host configuration of a one-shot command (`status`, `sarif`): its first call is the
/// handshake, and `--timeout-ms` bounds that one too.
pub(crate) fn one_shot_config(args: &HostArgs, repo: &Path) -> anyhow::Result<HostConfig> {
    let mut config = host_config(args, repo)?;
    config.handshake_timeout = config.handshake_timeout.min(config.client.request_timeout);
    Ok(config)
}

/// The host configuration the flags describe (the host chosen as `host_choice` says).
pub(crate) fn host_config(args: &HostArgs, repo: &Path) -> anyhow::Result<HostConfig> {
    let command = host_choice::choose(args)?.command(repo)?;
    let mut config = HostConfig::new(command, repo.to_path_buf());
    config.client.request_timeout = Duration::from_millis(args.timeout_ms);
    config.handshake_timeout = Duration::from_millis(args.handshake_timeout_ms);
    Ok(config)
}
