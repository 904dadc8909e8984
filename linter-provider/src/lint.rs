//! One batch of files linted: the files and their configuration files written into a fresh
//! scratch tree (off the async threads), the linter run there once (or once per file, for a
//! command with `{path}`) within the evaluation's deadline, and what it printed read as SARIF (or
//! shellcheck's json1) and mapped back to the files. A run that prints more than the output cap is
//! stopped and its files linted again in halves, down to one file, which is then reported as not
//! checked: so a flood of findings costs time, never memory past the cap, and never the rest of
//! the batch. Every other way a run can fail is an error that says why, with the end of the tool's
//! stderr, filtered; the scratch tree is gone however it ended.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use provider_kit::{Blob, MAX_DIAGNOSTICS};

use crate::error::{Error, Result};
use crate::from_sarif::{self, Context, Mapped};
use crate::from_shellcheck;
use crate::preset::{Linter, Output, Placeholders};
use crate::scratch::Scratch;
use crate::tool::{self, Limits, Ran};

/// Most bytes of output one run may print (or write to `{out}`); past them it is stopped.
pub(crate) const MAX_OUTPUT: usize = 16 << 20;
/// Bytes of a run's stderr kept for the error it causes: its last ones.
const MAX_STDERR: usize = 8 << 10;
/// Of which this many characters, the last, are said.
const STDERR_SAID: usize = 600;

/// What a batch gave: the findings of each file, by repository path, and what was dropped.
#[derive(Debug, Default)]
pub(crate) struct Linted {
    pub(crate) found: HashMap<String, Vec<from_sarif::Finding>>,
    /// Findings past the cap.
    pub(crate) cut: usize,
    /// What was dropped and why (results on other files or outside the tree).
    pub(crate) notes: Vec<String>,
    /// Files not checked, by repository path, and why (alone, the linter printed past the cap).
    pub(crate) unchecked: HashMap<String, String>,
}

/// What a finished run gave.
enum Printed {
    Output(Vec<u8>),
    /// More than [`MAX_OUTPUT`] bytes: the run was stopped.
    TooMuch,
}

/// Lints `files` (repository path, bytes) with `configs` beside them, by `deadline`.
pub(crate) async fn lint(
    linter: &Linter,
    files: Vec<(String, Blob)>,
    configs: Vec<(String, Blob)>,
    deadline: Instant,
) -> Result<Linted, String> {
    let wants_out = linter.command.iter().any(|a| a.contains("{out}"));
    let written = {
        let files = files.clone();
        tokio::task::spawn_blocking(move || materialise(&files, &configs, wants_out))
    };
    let (scratch, out_dir) = written
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("{}: {e}", linter.id))?;
    let linted = run_all(linter, &files, &scratch, out_dir.as_ref(), deadline).await;
    // Removing the tree is blocking work too, and is waited for: once the answer is sent, the
    // tree is gone. (A cancelled evaluation drops the tree where it is.)
    let _ = tokio::task::spawn_blocking(move || drop((scratch, out_dir))).await;
    linted
}

/// A scratch tree holding `configs` then `files`, and the private folder for `{out}`.
fn materialise(
    files: &[(String, Blob)],
    configs: &[(String, Blob)],
    wants_out: bool,
) -> Result<(Scratch, Option<tempfile::TempDir>)> {
    let scratch = Scratch::new()?;
    for (path, bytes) in configs {
        // A configuration file that is also linted is written once, as the file.
        if !files.iter().any(|(p, _)| p == path) {
            scratch.write(path, bytes)?;
        }
    }
    for (path, bytes) in files {
        scratch.write(path, bytes)?;
    }
    let out = if wants_out {
        Some(
            tempfile::Builder::new()
                .prefix("asp-bridge-lint-out-")
                .tempdir_in(crate::scratch::base())
                .map_err(Error::Scratch)?,
        )
    } else {
        None
    };
    Ok((scratch, out))
}

async fn run_all(
    linter: &Linter,
    files: &[(String, Blob)],
    scratch: &Scratch,
    out_dir: Option<&tempfile::TempDir>,
    deadline: Instant,
) -> Result<Linted, String> {
    let root = scratch.root().to_string_lossy().into_owned();
    let paths: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
    // The runs still to do, the next last; a run that printed too much comes back as its halves.
    let mut runs: Vec<Vec<String>> = if linter.per_file() {
        paths.chunks(1).rev().map(<[String]>::to_vec).collect()
    } else {
        vec![paths]
    };
    let mut linted = Linted::default();
    let mut n = 0;
    while let Some(run_files) = runs.pop() {
        n += 1;
        // The file `{out}` names, in a private folder beside the scratch tree: a new one for each
        // run, so that a run that wrote nothing is never read as the one before it.
        let out = out_dir.map(|d| d.path().join(format!("out-{n}.sarif")));
        let out_text = out
            .as_ref()
            .map_or_else(String::new, |p| p.to_string_lossy().into_owned());
        // A path that starts with `-` is given as `./-…`: no file name reads as an option.
        let as_args: Vec<String> = run_files
            .iter()
            .map(|p| {
                if p.starts_with('-') {
                    format!("./{p}")
                } else {
                    p.clone()
                }
            })
            .collect();
        let argv = linter.argv(&Placeholders {
            files: &as_args,
            root: &root,
            out: &out_text,
        });
        let limits = Limits {
            deadline: deadline.saturating_duration_since(Instant::now()),
            max_stdout: MAX_OUTPUT,
            max_stderr: MAX_STDERR,
        };
        let ran = tool::run(&argv, scratch.root(), limits)
            .await
            .map_err(|e| said(&e.to_string()))?;
        let printed = output_of(linter, ran, out.as_deref()).await;
        if let Some(out) = &out {
            // Read, or past the cap: it is not kept until the tree goes (it may be large).
            let out = out.clone();
            let _ = tokio::task::spawn_blocking(move || std::fs::remove_file(out)).await;
        }
        let output = match printed? {
            Printed::Output(output) => output,
            Printed::TooMuch if run_files.len() > 1 => {
                let (first, second) = run_files.split_at(run_files.len() / 2);
                runs.push(second.to_vec());
                runs.push(first.to_vec());
                continue;
            }
            Printed::TooMuch => {
                let why = format!(
                    "{} printed more than {} MiB for this file alone; it was stopped",
                    linter.command[0],
                    MAX_OUTPUT >> 20
                );
                linted
                    .unchecked
                    .extend(run_files.into_iter().map(|p| (p, why.clone())));
                continue;
            }
        };
        let given: Vec<(String, Blob)> = files
            .iter()
            .filter(|(p, _)| run_files.contains(p))
            .cloned()
            .collect();
        let (owned, root) = (linter.clone(), scratch.root().to_path_buf());
        let mapped = tokio::task::spawn_blocking(move || map(&owned, &root, &given, &output))
            .await
            .map_err(|e| e.to_string())??;
        linted.cut += mapped.cut;
        for finding in mapped.findings {
            linted
                .found
                .entry(finding.path.clone())
                .or_default()
                .push(finding);
        }
        if mapped.outside > 0 {
            linted.notes.push(format!(
                "{}: {} results located outside the files it was given were dropped",
                linter.id, mapped.outside
            ));
        }
        if mapped.not_given > 0 {
            linted.notes.push(format!(
                "{}: {} results on files that are not in the change were dropped",
                linter.id, mapped.not_given
            ));
        }
    }
    Ok(linted)
}

/// What a finished run printed (or wrote to `{out}`), once its exit says it worked.
async fn output_of(linter: &Linter, ran: Ran, out: Option<&Path>) -> Result<Printed, String> {
    let program = &linter.command[0];
    // The stderr of a failed run goes to the log, never into the answer: a repository's own
    // configuration can make a linter read a file outside the repository and print it in its
    // error (ruff's `extend = "/path"` quotes the line it cannot parse), and answers reach
    // agents and code-scanning dashboards.
    let stderr = || {
        let text = String::from_utf8_lossy(&ran.stderr);
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else {
            tracing::warn!(linter = %linter.id, "{program} failed; its stderr ends: {}", tail(text));
            "; its stderr is in the log (ASP_BRIDGE_LOG=debug), not quoted here: a repository's configuration can make a linter print what it reads outside the repository".to_owned()
        }
    };
    if ran.stdout_over {
        return Ok(Printed::TooMuch);
    }
    match ran.code {
        Some(code) if linter.ok_exit.contains(&code) => {}
        Some(code) => {
            return Err(format!(
                "{program} exited with status {code}, which is not one of {:?}{}",
                linter.ok_exit,
                stderr()
            ));
        }
        None => return Err(format!("{program} was ended by a signal{}", stderr())),
    }
    let bytes = match out {
        None => ran.stdout,
        Some(path) => {
            let path = path.to_path_buf();
            let read = tokio::task::spawn_blocking(move || read_out(&path))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("{program} wrote no readable output: {e}"))?;
            match read {
                Some(bytes) => bytes,
                None => return Ok(Printed::TooMuch),
            }
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(format!("{program} printed nothing{}", stderr()));
    }
    Ok(Printed::Output(bytes))
}

/// The `{out}` file: a regular file (never a link or a FIFO) of at most [`MAX_OUTPUT`] bytes
/// (`None`: larger).
fn read_out(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match repo_io::read::Regular::open(path, None)? {
        Some(file) => file.read_capped(MAX_OUTPUT as u64),
        None => Err(std::io::Error::other("it is not a regular file")),
    }
}

/// Reads `output` as the linter's format and maps it to the files it was given.
fn map(
    linter: &Linter,
    root: &Path,
    given: &[(String, Blob)],
    output: &[u8],
) -> Result<Mapped, String> {
    let program = &linter.command[0];
    let files: HashMap<String, &[u8]> = given
        .iter()
        .map(|(p, b)| (p.clone(), b.as_slice()))
        .collect();
    let cx = Context {
        linter: &linter.id,
        root,
        files: &files,
        columns: linter.columns,
        max_results: MAX_DIAGNOSTICS,
        rule_uri: linter.rule_uri.as_deref(),
    };
    let mapped = match linter.output {
        Output::Sarif => from_sarif::read(output, &cx),
        Output::ShellcheckJson1 => from_shellcheck::read(output, &cx),
    }
    .map_err(|e| format!("{program}: {e}"))?;
    if let Some(why) = &mapped.failed {
        return Err(format!("{program} said its run failed: {why}"));
    }
    Ok(mapped)
}

/// The end of a run's stderr as the log says it: its last [`STDERR_SAID`] characters (where a tool
/// says why it failed), filtered, on one line, after `…` when there was more.
pub(crate) fn tail(text: &str) -> String {
    match text.char_indices().rev().nth(STDERR_SAID - 1) {
        Some((at, _)) if at > 0 => format!("…{}", said(&text[at..])),
        _ => said(text),
    }
}

/// Untrusted tool text as it may be said: filtered, on one line, capped.
fn said(text: &str) -> String {
    asp_wire::text::one_line(text, STDERR_SAID).into_owned()
}
