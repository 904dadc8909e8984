//! The one way the project runs git, for the bridge and the embedded host alike: a deadline, a cap
//! on what is read whole, and no program that the repository names.
//!
//! A workspace's `.git` is hostile (an unpacked archive, a shared checkout): its configuration can
//! name programs that git runs on its own, `core.fsmonitor` through every `git status`, the
//! `filter.<driver>.clean` of a path whose attributes name the driver, hooks, pagers, credential
//! helpers, external diff drivers. Every command built here overrides them from the command-line
//! scope (`GIT_CONFIG_PARAMETERS`, which git reads last and passes on to any git it starts): the
//! fixed settings of [`HARDENING`], and every filter driver the configuration defines, each
//! neutralised unless the trusted configuration allows it by name ([`filters`]), whose programs
//! then come from the user's and the system's configuration only, never the repository's. Paths are
//! data (`--literal-pathspecs`) and nothing writes the index (`--no-optional-locks`).

mod filters;
mod output;

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

pub use filters::{FilterCache, Filters, trust_filters};
pub use output::MAX_LISTING;

use crate::error::{Error, Result};

/// Settings that override whatever the repository's configuration says, for every command.
pub const HARDENING: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("core.sshCommand", "false"),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
];

/// Environment variables that name programs or prompts, removed from git's environment.
const REMOVED_ENV: &[&str] = &[
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PROXY_COMMAND",
];

/// Commands that may read working-tree content, and so run a clean filter: they never run without
/// the filter overrides ([`Git::filters`]).
const READS_CONTENT: &[&str] = &["status", "diff-index", "diff-files", "hash-object"];

/// git in one directory, until one deadline.
#[derive(Clone, Copy, Debug)]
pub struct Git<'a> {
    pub dir: &'a Path,
    pub deadline: Instant,
    /// Counts the processes started, when given.
    pub runs: Option<&'a AtomicU64>,
    /// The filter overrides, when already known; a command that reads content looks them up
    /// itself otherwise.
    pub filters: Option<&'a Filters>,
}

impl<'a> Git<'a> {
    pub fn new(dir: &'a Path, deadline: Instant) -> Git<'a> {
        Git {
            dir,
            deadline,
            runs: None,
            filters: None,
        }
    }

    /// The hardened `git` command for `args`, its stdin empty (callers may pipe it), without the
    /// filter overrides: for commands that read no working-tree content (the others go through
    /// [`Git::run`], which adds them).
    pub fn command(&self, args: &[&str]) -> std::process::Command {
        self.command_with(args, None)
    }

    fn command_with(&self, args: &[&str], filters: Option<&Filters>) -> std::process::Command {
        let mut command = std::process::Command::new("git");
        command
            .args([
                "--no-pager",
                "--no-optional-locks",
                "--literal-pathspecs",
                "-C",
            ])
            .arg(self.dir)
            .args(args)
            .env("GIT_CONFIG_PARAMETERS", parameters(filters))
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .stdin(Stdio::null());
        for name in REMOVED_ENV {
            command.env_remove(name);
        }
        command
    }

    /// Starts `command`, counting it.
    pub fn spawn(&self, command: &mut std::process::Command) -> Result<std::process::Child> {
        self.count();
        command
            .spawn()
            .map_err(|e| Error::Git(format!("cannot run git: {e}")))
    }

    /// Counts one process started (for a caller that starts git itself from [`Git::command`]).
    pub fn count(&self) {
        if let Some(runs) = self.runs {
            runs.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Looks the filter drivers up with one git process: the overrides for those `allowed`, and
    /// whether the configuration has includes.
    pub(crate) async fn lookup_filters(&self, allowed: &[String]) -> Result<(Filters, bool)> {
        let listing = self
            .exec(&["config", "-z", "--list", "--show-scope"], None)
            .await?;
        Ok(filters::parse(&listing, allowed))
    }

    /// The filter overrides for the repository whose git directory and common directory are
    /// these, through `cache` (looked up again only when a configuration file git reads changed).
    pub async fn filter_overrides(
        &self,
        cache: &FilterCache,
        git_dir: &Path,
        common_dir: &Path,
    ) -> Result<Filters> {
        cache
            .get(
                |allowed| async move { self.lookup_filters(&allowed).await },
                git_dir,
                common_dir,
            )
            .await
    }

    /// The filter overrides for this repository: those given, else looked up now.
    async fn filters_now(&self) -> Result<std::borrow::Cow<'a, Filters>> {
        match self.filters {
            Some(filters) => Ok(std::borrow::Cow::Borrowed(filters)),
            None => Ok(std::borrow::Cow::Owned(
                self.lookup_filters(filters::trusted()).await?.0,
            )),
        }
    }

    /// Runs `git args` and returns its stdout (at most [`MAX_LISTING`] bytes), failing past the
    /// deadline or when git fails.
    pub async fn run(&self, args: &[&str]) -> Result<Vec<u8>> {
        let what = args.first().copied().unwrap_or_default();
        if READS_CONTENT.contains(&what) {
            let filters = self.filters_now().await?;
            return self.exec(args, Some(&filters)).await;
        }
        self.exec(args, None).await
    }

    async fn exec(&self, args: &[&str], filters: Option<&Filters>) -> Result<Vec<u8>> {
        let what = args.first().copied().unwrap_or_default();
        let mut command = tokio::process::Command::from(self.command_with(args, filters));
        command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        self.count();
        let child = command
            .spawn()
            .map_err(|e| Error::Git(format!("cannot run git {what}: {e}")))?;
        let output = tokio::time::timeout_at(self.deadline.into(), output::capped(child))
            .await
            .map_err(|_| timed_out(what))?
            .map_err(|e| Error::Git(format!("git {what}: {e}")))?;
        output.into_result(what)
    }

    /// [`Git::run`] for a caller that may block (off the async threads); git is killed at the
    /// deadline and always reaped.
    pub fn run_blocking(&self, args: &[&str]) -> Result<Vec<u8>> {
        let what = args.first().copied().unwrap_or_default();
        if READS_CONTENT.contains(&what) && self.filters.is_none() {
            return Err(Error::Git(format!(
                "git {what} reads working-tree content and needs the filter overrides"
            )));
        }
        let mut command = self.command_with(args, self.filters);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let child = self.spawn(&mut command)?;
        output::capped_blocking(child, self.deadline)
            .map_err(|e| match e {
                output::Blocking::Late => timed_out(what),
                output::Blocking::Io(e) => Error::Git(format!("git {what}: {e}")),
            })?
            .into_result(what)
    }
}

fn timed_out(what: &str) -> Error {
    Error::Git(format!("git {what} did not finish in time"))
}

/// `GIT_CONFIG_PARAMETERS`: the caller's own (trusted) settings, then [`HARDENING`], then the
/// filter overrides, each quoted as git quotes them (`'key'='value'`), so that a driver's name can
/// hold any character.
fn parameters(filters: Option<&Filters>) -> String {
    let mut out = std::env::var("GIT_CONFIG_PARAMETERS").unwrap_or_default();
    let pairs = HARDENING
        .iter()
        .map(|&(k, v)| (k, v))
        .chain(filters.into_iter().flat_map(Filters::pairs));
    for (key, value) in pairs {
        if !out.is_empty() {
            out.push(' ');
        }
        quote_into(&mut out, key);
        out.push('=');
        quote_into(&mut out, value);
    }
    out
}

/// git's `sq_quote`: in single quotes, each `'` and `!` taken out of them and escaped.
fn quote_into(out: &mut String, text: &str) {
    out.push('\'');
    for c in text.chars() {
        match c {
            '\'' | '!' => {
                out.push('\'');
                out.push('\\');
                out.push(c);
                out.push('\'');
            }
            c => out.push(c),
        }
    }
    out.push('\'');
}

#[cfg(test)]
mod tests;
