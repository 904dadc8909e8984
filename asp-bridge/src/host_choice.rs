//! Which host the commands talk to (in this order): the command line of `--host-command` /
//! `ASP_BRIDGE_HOST_COMMAND`; else `asp host serve --repo {repo}` when an `asp` executable is on
//! `PATH`; else the embedded host, this executable's `host serve --repo {repo}` (with `--config`
//! when one is given). `--host-command embedded` names the embedded host explicitly. The choice is
//! printed once on stderr, as one line. The embedded host's configuration is checked here too, so
//! that an invalid one is this command's `input` error (exit 6), as a missing one is, and not the
//! `health` error of a host that exits at start.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::Context as _;
use bridge_core::HostCommand;

use crate::flags::HostArgs;

/// The `--host-command` value that names the embedded host.
const EMBEDDED: &str = "embedded";

#[derive(Clone, Debug)]
enum Source {
    /// A command line given by `--host-command` or `ASP_BRIDGE_HOST_COMMAND`.
    Given(String),
    /// `asp` found on `PATH`, at this path.
    OnPath(PathBuf),
    /// This executable; `named` when `--host-command embedded` asked for it.
    Embedded { exe: PathBuf, named: bool },
}

#[derive(Clone, Debug)]
pub(crate) struct HostChoice {
    source: Source,
    /// The configuration file passed to the embedded host (absolute).
    config: Option<PathBuf>,
}

impl HostChoice {
    /// Resolves the choice from the flags, the environment and `PATH`.
    pub(crate) fn resolve(args: &HostArgs) -> anyhow::Result<HostChoice> {
        let config = match &args.config {
            None => None,
            Some(file) => Some(config_file(file)?),
        };
        let given = args.host_command.as_deref().map(str::trim);
        let source = match given {
            Some(EMBEDDED) => Source::Embedded {
                exe: current_exe()?,
                named: true,
            },
            Some(line) => Source::Given(line.to_owned()),
            None => match rpc_peer::child::program::resolve("asp", Path::new("/")) {
                Some(asp) => Source::OnPath(asp),
                None => Source::Embedded {
                    exe: current_exe()?,
                    named: false,
                },
            },
        };
        // The trusted configuration also names the git filter drivers the user allows (`[git]
        // filters`), for the bridge's own git commands whichever host is used; it must be valid
        // only when it is the embedded host's.
        let launcher = core_host::builtin::Launcher {
            command: &[],
            check_linter: linter_provider::from_config::check,
        };
        let trusted = core_host::config::Config::load(config.as_deref(), launcher);
        let trusted = match (&source, trusted) {
            (Source::Embedded { .. }, trusted) => {
                Some(trusted.context("the embedded host's configuration")?)
            }
            (_, trusted) => trusted.ok(),
        };
        if let Some(trusted) = trusted {
            bridge_core::git::trust_filters(trusted.git_filters);
        }
        Ok(HostChoice { source, config })
    }

    /// The command that starts the host for workspace `repo`.
    pub(crate) fn command(&self, repo: &Path) -> bridge_core::Result<HostCommand> {
        let repo_text = repo.to_string_lossy().into_owned();
        match &self.source {
            Source::Given(line) => HostCommand::parse(line, repo),
            Source::OnPath(asp) => Ok(HostCommand {
                program: asp.to_string_lossy().into_owned(),
                args: vec!["host".into(), "serve".into(), "--repo".into(), repo_text],
            }),
            Source::Embedded { exe, .. } => {
                let mut args = vec!["host".into(), "serve".into(), "--repo".into(), repo_text];
                if let Some(config) = &self.config {
                    args.push("--config".into());
                    args.push(config.to_string_lossy().into_owned());
                }
                Ok(HostCommand {
                    program: exe.to_string_lossy().into_owned(),
                    args,
                })
            }
        }
    }

    /// The one stderr line that says which host is used and why.
    pub(crate) fn describe(&self) -> String {
        let line = match self.command(Path::new("{repo}")) {
            Ok(command) => std::iter::once(command.program.as_str())
                .chain(command.args.iter().map(String::as_str))
                .map(|word| shlex::try_quote(word).map_or_else(|_| word.into(), |q| q.into_owned()))
                .collect::<Vec<String>>()
                .join(" ")
                .replace("'{repo}'", "{repo}"),
            Err(_) => match &self.source {
                Source::Given(line) => line.clone(),
                _ => String::new(),
            },
        };
        let why = match &self.source {
            Source::Given(_) => "the host given by --host-command or ASP_BRIDGE_HOST_COMMAND",
            Source::OnPath(_) => "the host `asp` found on PATH",
            Source::Embedded { named: true, .. } => "the embedded host (--host-command embedded)",
            Source::Embedded { named: false, .. } => {
                "the embedded host (no host command given and no `asp` on PATH)"
            }
        };
        let ignored = match (&self.source, &self.config) {
            (Source::Embedded { .. }, _) | (_, None) => "",
            _ => "; --config applies to the embedded host only and is not passed on",
        };
        format!("asp-bridge uses {why}: {line}{ignored}")
    }
}

/// Whether this process chose the embedded host (whose exit codes are this executable's own).
pub(crate) fn embedded_in_use() -> bool {
    CHOICE
        .get()
        .is_some_and(|choice| matches!(choice.source, Source::Embedded { .. }))
}

/// With the embedded host, checks that it can serve `root` (inside git), with the error it would
/// exit with at every start; with any other host, nothing. Blocking: one `git rev-parse`.
pub(crate) fn check_embedded_root(root: &Path) -> core_host::Result<()> {
    if embedded_in_use() {
        core_host::check_workspace(root)
    } else {
        Ok(())
    }
}

static CHOICE: OnceLock<HostChoice> = OnceLock::new();

/// The choice for this process: resolved once, and announced on stderr the first time.
pub(crate) fn choose(args: &HostArgs) -> anyhow::Result<&'static HostChoice> {
    if let Some(choice) = CHOICE.get() {
        return Ok(choice);
    }
    let choice = HostChoice::resolve(args)?;
    let mut announced = false;
    let choice = CHOICE.get_or_init(|| {
        announced = true;
        choice
    });
    if announced {
        eprintln!("{}", choice.describe());
    }
    Ok(choice)
}

fn current_exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe().context("cannot locate this executable to start the embedded host")
}

/// The configuration file, absolute (the host runs in the workspace), and present.
fn config_file(file: &Path) -> anyhow::Result<PathBuf> {
    let absolute =
        std::path::absolute(file).with_context(|| format!("--config {}", file.display()))?;
    let metadata = std::fs::metadata(&absolute)
        .with_context(|| format!("cannot read the configuration file {}", absolute.display()))?;
    anyhow::ensure!(
        metadata.is_file(),
        "the configuration file {} is not a file",
        absolute.display()
    );
    Ok(absolute)
}
