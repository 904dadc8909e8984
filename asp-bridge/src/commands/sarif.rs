//! `asp-bridge sarif`: one SARIF 2.1.0 log of the host's decision on the working tree (call site
//! `sweep`, never `gate`), or of a saved host answer (`--from`), written to a file or stdout.
//!
//! The exit status never depends on the findings or the decision: 0 once the log is written,
//! non-zero only when it could not be (usage, host failure, unreadable input), with one classed line
//! on stderr. Nothing but the log reaches stdout; nothing but the output file is written.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context as _;
use bridge_core::proto::{AdvisoryCallSite, Comparison, Decision};
use bridge_core::worktree::Evaluate;
use bridge_core::{CallOptions, HostProcess, Worktree};
use sarif_export::{HostIdentity, Options};

use crate::flags::{ComparisonArg, SarifArgs};

/// Largest host answer read: a sweep of a whole repository can list tens of thousands of findings
/// (30,000 generated ones are about 20 MB), more than the 16 MiB other commands accept.
const SWEEP_MAX_FRAME: usize = 256 * 1024 * 1024;

pub(crate) async fn run(args: SarifArgs) -> anyhow::Result<()> {
    if args
        .category
        .as_deref()
        .is_some_and(|c| c.trim().is_empty())
    {
        anyhow::bail!("--category must not be empty");
    }
    let output = Output::parse(&args.output)?;
    let (decision, mut options) = match &args.from {
        Some(file) => saved(file, args.repo.as_deref())?,
        None => live(&args).await?,
    };
    options.category = args.category;
    // Converting reads workspace files (line hashes) and serialising a large log takes a while:
    // both run off the async executor, and the output is written only once it is complete.
    let (bytes, summary) = tokio::task::spawn_blocking(move || {
        let export = sarif_export::export(&decision, &options);
        export
            .to_bytes()
            .map(|bytes| (bytes, export.summary().clone()))
    })
    .await
    .context("the SARIF conversion stopped")??;
    output.write(&bytes)?;
    tracing::info!(
        decision = %summary.decision,
        results = summary.results,
        omitted = summary.omitted_results,
        rules = summary.rules,
        notifications = summary.notifications,
        "SARIF log written to {}",
        output
    );
    Ok(())
}

/// A saved host answer, converted with the workspace given by `--repo` (if any).
fn saved(file: &Path, repo: Option<&Path>) -> anyhow::Result<(Decision, Options)> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let decision =
        sarif_export::read_saved(&bytes).with_context(|| format!("--from {}", file.display()))?;
    let repo = repo.map(|r| crate::workspace_root(Some(r))).transpose()?;
    Ok((
        decision,
        Options {
            repo,
            ..Options::default()
        },
    ))
}

/// Asks the host: status (the handshake, for the baseline), then one evaluation of the working tree
/// at the `sweep` call site; the host is shut down whatever the outcome.
async fn live(args: &SarifArgs) -> anyhow::Result<(Decision, Options)> {
    let repo = crate::workspace_root(args.repo.as_deref())?;
    let mut config = crate::host_config(&args.host, &repo)?;
    config.client.max_frame = config.client.max_frame.max(SWEEP_MAX_FRAME);
    let started_at = SystemTime::now();
    let (process, status) = HostProcess::start(&config).await?;
    let comparison = match args.comparison {
        ComparisonArg::All => Comparison::All,
        ComparisonArg::Introduced => Comparison::Introduced,
    };
    let request = Evaluate {
        comparison,
        baseline: Some(status.value.workspace.baseline.clone()),
        ..Evaluate::at(AdvisoryCallSite::Sweep)
    };
    let outcome = Worktree::new(repo.clone())
        .evaluate(process.client(), request, CallOptions::default())
        .await;
    process.shutdown().await;
    let decision = outcome?.decision;
    let host = &status.value.host;
    let options = Options {
        repo: Some(repo),
        host: Some(HostIdentity {
            name: host.name.clone(),
            version: host.version.clone(),
        }),
        started_at: Some(started_at),
        ended_at: Some(SystemTime::now()),
        ..Options::default()
    };
    Ok((decision, options))
}

/// Where the log goes: a file (written whole, once the log is complete) or stdout.
enum Output {
    Stdout,
    File(PathBuf),
}

impl Output {
    fn parse(value: &str) -> anyhow::Result<Output> {
        match value {
            "-" => Ok(Output::Stdout),
            "" => anyhow::bail!("--output must be a file or `-`"),
            path => Ok(Output::File(PathBuf::from(path))),
        }
    }

    fn write(&self, bytes: &[u8]) -> anyhow::Result<()> {
        match self {
            Output::Stdout => {
                let mut stdout = std::io::stdout().lock();
                stdout
                    .write_all(bytes)
                    .and_then(|()| stdout.flush())
                    .context("cannot write the SARIF log to stdout")
            }
            Output::File(path) => std::fs::write(path, bytes)
                .with_context(|| format!("cannot write {}", path.display())),
        }
    }
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Output::Stdout => f.write_str("stdout"),
            Output::File(path) => write!(f, "{}", path.display()),
        }
    }
}
