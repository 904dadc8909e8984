//! `asp-bridge sarif`: one SARIF 2.1.0 log of the host's decision on the working tree (call site
//! `sweep`, never `gate`), or of a saved host answer (`--from`), written to a file or stdout.
//!
//! The exit status never depends on the findings or the decision: 0 once the log is written,
//! non-zero only when it could not be (usage, host failure, unreadable input), with one classed line
//! on stderr. Nothing but the log reaches stdout; nothing but the output file is written (under a
//! temporary name beside it first, renamed once whole). A host answer, saved or live, is capped at
//! `sarif_export::MAX_ANSWER_BYTES`; past it the command fails with an `input` error that says so.

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
const SWEEP_MAX_FRAME: usize = sarif_export::MAX_ANSWER_BYTES;

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
    options.pretty = args.pretty;
    let target = output.to_string();
    // Converting reads workspace files (line hashes) and writing a large log takes a while: both run
    // off the async executor. The log is written as it is produced, its results one at a time.
    let summary = tokio::task::spawn_blocking(move || {
        let export = sarif_export::export(&decision, &options);
        output
            .write(|out| export.write_to(out))
            .map(|()| export.summary().clone())
    })
    .await
    .context("the SARIF conversion stopped")??;
    tracing::info!(
        decision = %summary.decision,
        results = summary.results,
        omitted = summary.omitted_results,
        rules = summary.rules,
        notifications = summary.notifications,
        "SARIF log written to {target}"
    );
    Ok(())
}

/// A saved host answer, converted with the workspace given by `--repo` (if any).
fn saved(file: &Path, repo: Option<&Path>) -> anyhow::Result<(Decision, Options)> {
    let reader =
        std::fs::File::open(file).with_context(|| format!("cannot read {}", file.display()))?;
    let decision = sarif_export::read_saved_from(reader)
        .with_context(|| format!("--from {}", file.display()))?;
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
    let skipped_before = process.client().stats().skipped_frames;
    let outcome = Worktree::new(repo.clone())
        .evaluate(process.client(), request, CallOptions::default())
        .await;
    let skipped = process.client().stats().skipped_frames > skipped_before;
    process.shutdown().await;
    let decision = match outcome {
        Ok(evaluation) => evaluation.decision,
        // The answer was too large to read: the cap applied, not the host's health.
        Err(bridge_core::Error::Timeout { method, .. }) if skipped => anyhow::bail!(
            "the host's answer to {method} was larger than {} MiB, the limit of a host answer; \
             it was skipped",
            SWEEP_MAX_FRAME / (1024 * 1024)
        ),
        Err(error) => return Err(error.into()),
    };
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

    /// Writes the log with `write`: to stdout as it comes; to a file through a temporary file
    /// beside it, renamed once the log is whole (and removed if it is not). Anything but a plain file
    /// (a device, a FIFO, a symlink) is written in place, never replaced.
    fn write(
        &self,
        write: impl FnOnce(&mut dyn std::io::Write) -> sarif_export::Result<u64>,
    ) -> anyhow::Result<()> {
        let path = match self {
            Output::Stdout => {
                let mut stdout = std::io::stdout().lock();
                return write(&mut stdout)
                    .map(drop)
                    .context("cannot write the SARIF log to stdout");
            }
            Output::File(path) => path,
        };
        let plain = std::fs::symlink_metadata(path).map_or(true, |m| m.file_type().is_file());
        let written = if plain {
            let partial = partial_path(path);
            let written = std::fs::File::create(&partial)
                .map_err(anyhow::Error::from)
                .and_then(|mut file| Ok(write(&mut file)?))
                .and_then(|_| Ok(std::fs::rename(&partial, path)?));
            if written.is_err() {
                let _ = std::fs::remove_file(&partial);
            }
            written
        } else {
            std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(path)
                .map_err(anyhow::Error::from)
                .and_then(|mut file| Ok(write(&mut file).map(drop)?))
        };
        written.with_context(|| format!("cannot write {}", path.display()))
    }
}

/// `dir/.name.<pid>.partial`, beside `path`, where its log is written until it is whole.
fn partial_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "sarif".into(), |n| n.to_string_lossy());
    path.with_file_name(format!(".{name}.{}.partial", std::process::id()))
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Output::Stdout => f.write_str("stdout"),
            Output::File(path) => write!(f, "{}", path.display()),
        }
    }
}
