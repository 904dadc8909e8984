//! `asp-bridge sarif`: one SARIF 2.1.0 log of the host's decision on the working tree (call site
//! `sweep`, never `gate`), or of a saved host answer (`--from`), written to a file or stdout.
//!
//! What is evaluated: the working tree's changes against the host's baseline; with `--base REV`,
//! the changes since the merge base of `REV` and `HEAD`, commits included; with `--all-files`,
//! every tracked file. A changeset larger than `--batch-files` files or `--batch-bytes` bytes
//! (64 MiB) goes in several requests (one
//! progress line each on stderr) whose decisions are merged into one run (`bridge_core::worktree`).
//! An empty changeset is said on stderr, naming the options that would find something.
//!
//! The exit status never depends on the findings or the decision: 0 once the log is written,
//! non-zero only when it could not be (usage, host failure, unreadable input), with one classed line
//! on stderr. Nothing but the log reaches stdout; nothing but the output file is written (under a
//! temporary name beside it first, renamed once whole). A host answer, saved or live, is capped at
//! `sarif_export::MAX_ANSWER_BYTES`; past it the command fails with an `input` error that says so.
//! Once the log is written, one line on stderr says how many results went where, the host's decision
//! and what did not run. A reader that closes stdout early (`| head`) ends the command quietly with 0.

use bridge_core::model::NotRunView;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context as _;
use asp_wire::proto::{AdvisoryCallSite, Decision};
use asp_wire::reason::LEFT_OUT_BY_CONFIGURATION;
use bridge_core::changeset::{MergeBase, Skipped};
use bridge_core::model::NotRun;
use bridge_core::worktree::Evaluate;
use bridge_core::{CallOptions, HostProcess, Worktree};
use rpc_peer::FailClass;
use sarif_export::{HostIdentity, Options};

use crate::flags::{SarifArgs, SweepArgs};

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
    // Checked before anything is evaluated: a log that cannot be written is known at once.
    let output = Output::parse(&args.output)?;
    let (decision, mut options, left_out, host) = match &args.from {
        Some(file) => {
            let (decision, options) = saved(file, args.repo.as_deref())?;
            (decision, options, Vec::new(), None)
        }
        None => {
            let (decision, options, left_out, host) = live(&args, &output).await?;
            (decision, options, left_out, Some(host))
        }
    };
    options.category = args.category;
    options.pretty = args.pretty;
    let not_run = decision.not_run();
    // Converting reads workspace files (line hashes) and writing a large log takes a while: both run
    // off the async executor, while the host, whose part is done, stops (the command ends only once
    // it has). The log is written as it is produced, its results one at a time.
    let exported = tokio::task::spawn_blocking(move || {
        let export = sarif_export::export(&decision, &options);
        output
            .write(|out| export.write_to(out))
            .map(|written| (written, export.summary().clone(), output))
    });
    let stopped = async {
        if let Some(host) = host {
            host.shutdown().await;
        }
    };
    let (exported, ()) = tokio::join!(exported, stopped);
    let (written, summary, output) = exported.context("the SARIF conversion stopped")??;
    if written == Written::ReaderGone {
        return Ok(());
    }
    tracing::info!(
        results = summary.results,
        rules = summary.rules,
        notifications = summary.notifications,
        "SARIF log written"
    );
    // Stderr may be closed too; the log is written, so that is no failure.
    let _ = writeln!(
        std::io::stderr(),
        "{}",
        success_line(&summary, &not_run, &left_out, &output)
    );
    Ok(())
}

/// Longest success line, in characters.
const LINE_MAX: usize = 600;
/// Most not-run entries named on the success line.
const NOT_RUN_NAMED: usize = 3;

/// `asp-bridge: sarif: wrote N results to FILE (host decision D; …)`, on one line, host text
/// filtered: what a person or a CI log sees of a run that worked.
fn success_line(
    summary: &sarif_export::Summary,
    not_run: &[NotRun],
    left_out: &[Skipped],
    output: &Output,
) -> String {
    let mut line = format!(
        "asp-bridge: sarif: wrote {} result(s) to {output} (host decision {}",
        summary.results, summary.decision
    );
    // The paths the host's configuration excluded are said apart from the special files.
    let chosen: Vec<&NotRun> = not_run.iter().filter(|n| n.is_left_out()).collect();
    let (by_host, special): (Vec<&Skipped>, Vec<&Skipped>) = left_out
        .iter()
        .partition(|s| chosen.iter().any(|n| n.source == s.path));
    // What the host left out by its own rule (a symbolic link) is not said to be excluded.
    let (excluded, by_rule): (Vec<&Skipped>, Vec<&Skipped>) = by_host
        .iter()
        .partition(|s| s.why.starts_with("excluded by"));
    for (paths, what) in [
        (&special, "left out, not regular files"),
        (
            &excluded,
            "excluded by the host's configuration, not checked",
        ),
        (&by_rule, "left out by the host, not checked"),
    ] {
        if paths.is_empty() {
            continue;
        }
        let named: Vec<&str> = paths
            .iter()
            .take(NOT_RUN_NAMED)
            .map(|s| s.path.as_str())
            .collect();
        let more = paths.len().saturating_sub(NOT_RUN_NAMED);
        line.push_str(&format!(
            "; {} path(s) {what}: {}",
            paths.len(),
            named.join(", ")
        ));
        if more > 0 {
            line.push_str(&format!(" and {more} more"));
        }
    }
    let configured: Vec<&str> = chosen
        .iter()
        .filter(|n| by_host.iter().all(|s| s.path != n.source))
        .map(|n| {
            n.detail
                .strip_prefix(LEFT_OUT_BY_CONFIGURATION)
                .unwrap_or(&n.detail)
        })
        .collect();
    if !configured.is_empty() {
        line.push_str(&format!(
            "; left out by the host's configuration: {}",
            configured.join("; ")
        ));
    }
    let not_run: Vec<&NotRun> = not_run.iter().filter(|n| !n.is_left_out()).collect();
    if summary.omitted_results > 0 {
        line.push_str(&format!(
            "; {} result(s) left out past the limits",
            summary.omitted_results
        ));
    }
    if not_run.is_empty() {
        line.push_str("; everything required ran)");
    } else {
        let named: Vec<String> = not_run
            .iter()
            .take(NOT_RUN_NAMED)
            .map(|n| format!("{} ({})", n.source, n.reason))
            .collect();
        let more = not_run.len().saturating_sub(NOT_RUN_NAMED);
        line.push_str(&format!(
            "; incomplete or did not run: {}",
            named.join(", ")
        ));
        if more > 0 {
            line.push_str(&format!(" and {more} more"));
        }
        line.push(')');
    }
    asp_wire::text::one_line(&line, LINE_MAX).into_owned()
}

/// A saved host answer, converted with the workspace given by `--repo` (if any).
fn saved(file: &Path, repo: Option<&Path>) -> anyhow::Result<(Decision, Options)> {
    let reader = std::fs::File::open(file)
        .with_context(|| format!("--from {}: cannot read it", file.display()))?;
    let decision = sarif_export::read_saved_from(reader)
        .with_context(|| format!("--from {}", file.display()))?;
    let repo = repo
        .map(|r| crate::setup::workspace_root(Some(r)))
        .transpose()?;
    Ok((
        decision,
        Options {
            repo,
            ..Options::default()
        },
    ))
}

/// Asks the host: status (the handshake, for the baseline), then the evaluation of the working tree
/// at the `sweep` call site (in batches past `--batch-files` or `--batch-bytes`, with a progress
/// line per batch). Gives the decision, the log's options, what was left out, and the host, its
/// part done, for the caller to stop; on an error the host is stopped here.
async fn live(
    args: &SarifArgs,
    output: &Output,
) -> anyhow::Result<(Decision, Options, Vec<Skipped>, HostProcess)> {
    let repo = crate::setup::workspace_root(args.repo.as_deref())?;
    let mut config = crate::setup::one_shot_config(&args.host, &repo)?;
    config.client.max_frame = config.client.max_frame.max(SWEEP_MAX_FRAME);
    let started_at = SystemTime::now();
    let mut request = args.sweep.apply(Evaluate {
        comparison: args.comparison,
        // A log written inside the workspace is this command's own output, not a change: the
        // next run would evaluate it (and find a key in the last run's findings).
        leave_out: output.inside(&repo).into_iter().collect(),
        ..Evaluate::at(AdvisoryCallSite::Sweep)
    });
    let worktree = Worktree::new(repo.clone());
    // The evaluation is planned (the working tree read and hashed) while the host starts: a sweep
    // with a baseline of its own (every file, or a branch against its base) against that; the
    // working tree's changes against HEAD's tree, the baseline the embedded host names, a plan
    // kept only if the host's status names that tree (else planned again).
    let (started, planned) = if request.own_baseline() {
        let (started, planned) = tokio::join!(HostProcess::start(&config), worktree.plan(&request));
        (started, Some(planned))
    } else {
        let (started, guessed) =
            tokio::join!(HostProcess::start(&config), worktree.plan_at_head(&request));
        (started, guessed.ok().flatten().map(Ok))
    };
    let (process, status) = started?;
    let baseline = status.value.workspace.baseline.clone();
    let planned = match planned {
        Some(Ok(plan)) if !request.own_baseline() => plan.for_baseline(&baseline).map(Ok),
        planned => planned,
    };
    request.baseline = Some(baseline);
    let skipped_before = process.client().stats().skipped_frames;
    let progress = |p: bridge_core::worktree::Progress| {
        if p.batches > 1 {
            // Stderr may be closed; progress is no reason to fail.
            let _ = writeln!(
                std::io::stderr(),
                "asp-bridge: sarif: batch {} of {} evaluated ({} of {} files)",
                p.batch,
                p.batches,
                p.sent_files,
                p.files
            );
        }
    };
    let client = process.client();
    let outcome = match planned {
        Some(Ok(plan)) => {
            worktree
                .evaluate_plan(client, &request, plan, CallOptions::default(), progress)
                .await
        }
        Some(Err(error)) => Err(error),
        None => {
            worktree
                .evaluate_with(client, request, CallOptions::default(), progress)
                .await
        }
    };
    let skipped = process.client().stats().skipped_frames > skipped_before;
    let evaluation = match outcome {
        Ok(evaluation) => evaluation,
        Err(error) => {
            process.shutdown().await;
            return Err(failed(args, error, skipped));
        }
    };
    if evaluation.changed_files == 0 {
        let _ = writeln!(
            std::io::stderr(),
            "{}",
            empty_line(
                &args.sweep,
                evaluation.merge_base.as_ref(),
                &evaluation.skipped
            )
        );
    }
    let host = &status.value.host;
    let options = Options {
        repo: Some(repo),
        host: Some(HostIdentity {
            name: host.name.clone(),
            version: host.version.clone(),
        }),
        started_at: Some(started_at),
        ended_at: Some(SystemTime::now()),
        left_out: evaluation.skipped.clone(),
        ..Options::default()
    };
    Ok((evaluation.decision, options, evaluation.skipped, process))
}

/// The command's error for an evaluation that failed: an answer too large to read says the cap
/// that applied (not the host's health); an input error, or a baseline the host refused, names
/// the option that chose what was evaluated.
fn failed(args: &SarifArgs, error: bridge_core::Error, skipped: bool) -> anyhow::Error {
    if let bridge_core::Error::Peer(rpc_peer::Error::Timeout { method, .. }) = &error
        && skipped
    {
        return anyhow::anyhow!(
            "the host's answer to {method} was larger than {} MiB, the limit of a host answer; \
             it was skipped; --batch-files N sends fewer files per request",
            SWEEP_MAX_FRAME / (1024 * 1024)
        );
    }
    let about_the_option = error.fail_class() == FailClass::Input
        || matches!(
            error,
            bridge_core::Error::Peer(rpc_peer::Error::Refused {
                code: asp_wire::code::STALE_BASELINE,
                ..
            })
        );
    match args.sweep.option() {
        Some(option) if about_the_option => anyhow::Error::new(error).context(option),
        _ => error.into(),
    }
}

/// The line that says an evaluation had nothing to send, and what to do about it.
fn empty_line(
    sweep: &SweepArgs,
    merge_base: Option<&MergeBase>,
    skipped: &[bridge_core::changeset::Skipped],
) -> String {
    let line = match (merge_base, sweep.all_files) {
        // What was left out (a submodule, a name that is not UTF-8) may hold anything.
        (None, false) if !skipped.is_empty() => format!(
            "asp-bridge: sarif: the changeset is empty: nothing else changed against the host's \
             baseline, and {} path(s) were left out, not evaluated: {} ({})",
            skipped.len(),
            skipped[0].path,
            skipped[0].why
        ),
        (Some(found), _) => format!(
            "asp-bridge: sarif: the changeset is empty: nothing changed since {}, the merge base \
             of {} and HEAD",
            found.base.get(..12).unwrap_or(&found.base),
            found.rev
        ),
        (None, true) => "asp-bridge: sarif: the changeset is empty: the repository tracks no file \
                         here"
            .to_owned(),
        (None, false) => "asp-bridge: sarif: the changeset is empty: the working tree equals the \
                          host's baseline (HEAD on a clean checkout), so nothing was evaluated; \
                          use --base REV for the changes of a branch since REV (a pull request's \
                          base), or --all-files for every tracked file"
            .to_owned(),
    };
    asp_wire::text::one_line(&line, LINE_MAX).into_owned()
}

/// Where the log goes: a file (written whole, once the log is complete) or stdout.
enum Output {
    Stdout,
    File(PathBuf),
}

impl Output {
    /// The output as given; a file must be in a folder that exists.
    fn parse(value: &str) -> anyhow::Result<Output> {
        let path = match value {
            "-" => return Ok(Output::Stdout),
            "" => anyhow::bail!("--output must be a file or `-`"),
            path => PathBuf::from(path),
        };
        let folder = match path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => folder,
            _ => Path::new("."),
        };
        if !std::fs::metadata(folder).is_ok_and(|m| m.is_dir()) {
            anyhow::bail!(
                "--output {}: the folder {} does not exist; create it first",
                path.display(),
                folder.display()
            );
        }
        Ok(Output::File(path))
    }

    /// The file's path relative to `repo` when it is inside it (`/`-separated), by its folder's
    /// canonical path.
    fn inside(&self, repo: &Path) -> Option<String> {
        let Output::File(path) = self else {
            return None;
        };
        let folder = match path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => folder,
            _ => Path::new("."),
        };
        let folder = folder.canonicalize().ok()?;
        let relative = folder.strip_prefix(repo).ok()?.join(path.file_name()?);
        let parts: Vec<&str> = relative
            .components()
            .map(|c| c.as_os_str().to_str())
            .collect::<Option<_>>()?;
        Some(parts.join("/"))
    }

    /// Writes the log with `write`: to stdout as it comes; to a file through a temporary file
    /// beside it, renamed once the log is whole (and removed if it is not). Anything but a plain file
    /// (a device, a FIFO, a symlink) is written in place, never replaced.
    fn write(
        &self,
        write: impl FnOnce(&mut dyn std::io::Write) -> sarif_export::Result<u64>,
    ) -> anyhow::Result<Written> {
        let path = match self {
            Output::Stdout => {
                let mut stdout = std::io::stdout().lock();
                let written = write(&mut stdout)
                    .map_err(anyhow::Error::from)
                    .and_then(|_| Ok(stdout.flush()?));
                return match written {
                    Ok(()) => Ok(Written::Whole),
                    // The reader took what it wanted and left (`| head`): not a failure.
                    Err(e) if e.chain().any(broken_pipe) => Ok(Written::ReaderGone),
                    Err(e) => Err(e).context("cannot write the SARIF log to stdout"),
                };
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
        written
            .map(|()| Written::Whole)
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// How a write ended.
#[derive(Debug, PartialEq, Eq)]
enum Written {
    Whole,
    /// Stdout was closed by its reader before the log was through.
    ReaderGone,
}

/// Whether `error` is a write to a pipe whose reader has gone.
fn broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(results: usize, omitted: usize) -> sarif_export::Summary {
        sarif_export::Summary {
            decision: "deny".into(),
            results,
            omitted_results: omitted,
            rules: 1,
            notifications: 0,
        }
    }

    #[test]
    fn the_success_line_names_results_file_decision_and_what_did_not_run() {
        let out = Output::File(PathBuf::from("out.sarif"));
        assert_eq!(
            success_line(&summary(2, 0), &[], &[], &out),
            "asp-bridge: sarif: wrote 2 result(s) to out.sarif (host decision deny; everything required ran)"
        );
        let not_run: Vec<NotRun> = (0..5)
            .map(|i| NotRun {
                source: format!("p{i}\n\u{1b}[2Kasp-bridge: ok"),
                reason: "missing".into(),
                detail: String::new(),
            })
            .collect();
        let left_out = [Skipped {
            path: "pipe\u{1b}]0;x".into(),
            why: "a FIFO".into(),
        }];
        let line = success_line(&summary(1, 4), &not_run, &left_out, &out);
        assert!(
            line.contains("; 1 path(s) left out, not regular files: pipe]0;x;"),
            "{line}"
        );
        assert!(line.contains("4 result(s) left out"), "{line}");
        assert!(
            line.contains("did not run: p0 [2Kasp-bridge: ok (missing)"),
            "{line}"
        );
        assert!(line.ends_with("and 2 more)"), "{line}");
        assert!(!line.contains(['\n', '\u{1b}']), "{line:?}");
    }
}
