//! The command line: one subcommand per front end, with the host options they share.

use std::path::PathBuf;

use asp_wire::proto::Comparison;
use bridge_core::worktree::{Base, Evaluate, Scope};
use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "asp-bridge",
    version,
    about = "Relays an ASP host to MCP agents, LSP editors and SARIF dashboards. Advisory only: it never decides and never gates."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Ask the host for its status and print it.
    Status(StatusArgs),
    /// Export the host's decision on the working tree (or a saved answer) as SARIF 2.1.0.
    Sarif(SarifArgs),
    /// Serve read-only MCP tools over stdio for AI agents.
    Mcp(McpArgs),
    /// Serve host diagnostics as a language server over stdio.
    Lsp(LspArgs),
    /// The embedded advisory ASP host (used when no other host is installed).
    Host(EmbeddedHostArgs),
    /// Run a built-in ASP provider on stdio (the embedded host starts it).
    Provider(ProviderArgs),
}

#[derive(Debug, Args)]
pub(crate) struct ProviderArgs {
    #[command(subcommand)]
    pub(crate) provider: ProviderKind,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ProviderKind {
    /// Repository hygiene checks (`asp/1.0` check provider): conflict markers, private keys,
    /// JSON/TOML/YAML syntax, large added files, line endings and whitespace on changed lines.
    #[command(name = core_host::builtin::HYGIENE.subcommand)]
    Hygiene,
    /// A linter that writes SARIF (ruff, shellcheck, hadolint…) as an `asp/1.0` check provider:
    /// one `[[linter]]` of the host's configuration, as the host hands it over.
    #[command(name = core_host::builtin::LINTERS.subcommand)]
    Linters {
        /// The `[[linter]]` entry, as a JSON object (`{"preset": "ruff"}`).
        #[arg(long, value_name = "JSON")]
        linter: String,
    },
}

/// How to reach the host.
#[derive(Debug, Args, Clone)]
pub(crate) struct HostArgs {
    /// Host command line, split like a shell; `{repo}` becomes the absolute workspace root.
    /// `embedded` names the embedded host. Default: `asp host serve --repo {repo}` when `asp` is on
    /// PATH, else the embedded host.
    #[arg(long, env = "ASP_BRIDGE_HOST_COMMAND", value_name = "COMMAND|embedded")]
    pub(crate) host_command: Option<String>,
    /// Configuration file of the embedded host (providers to enroll); default: its own search
    /// (`$XDG_CONFIG_HOME/asp-bridge/host.toml`, then `~/.config/asp-bridge/host.toml`).
    #[arg(long, env = "ASP_BRIDGE_CONFIG", value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Deadline of each host request, in milliseconds.
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) timeout_ms: u64,
    /// Deadline of the first `host/status`, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) handshake_timeout_ms: u64,
}

/// Supervision of a long-running host.
#[derive(Debug, Args, Clone)]
pub(crate) struct SuperviseArgs {
    /// Delay before the first restart of a crashed host, in milliseconds; it doubles up to 30 s.
    #[arg(long, default_value_t = 500)]
    pub(crate) restart_delay_ms: u64,
}

#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// Workspace root (default: the current directory).
    #[arg(long)]
    pub(crate) repo: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) host: HostArgs,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) sweep: SweepArgs,
}

/// What a live evaluation covers (`sarif`, and `status`'s summary of what would be evaluated).
#[derive(Debug, Args, Clone)]
pub(crate) struct SweepArgs {
    /// Evaluate the changes since the merge base of REV and HEAD, commits included (e.g. a pull
    /// request's base commit or `origin/main`; a shallow clone needs the history: fetch-depth 0).
    #[arg(long, value_name = "REV", conflicts_with = "all_files")]
    pub(crate) base: Option<String>,
    /// Evaluate every tracked file as it is now (against the empty tree), in batches.
    #[arg(long)]
    pub(crate) all_files: bool,
    /// Most files in one host request; larger changesets are sent in batches and merged.
    #[arg(long, value_name = "N", default_value_t = bridge_core::worktree::BATCH_FILES as u32,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(crate) batch_files: u32,
    /// Most bytes of working-tree content in one host request (64 MiB by default); larger
    /// changesets are sent in batches and merged, a larger file alone.
    #[arg(long, value_name = "BYTES", default_value_t = bridge_core::worktree::BATCH_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) batch_bytes: u64,
}

impl SweepArgs {
    /// The option that changed what is evaluated, as typed (for error messages).
    pub(crate) fn option(&self) -> Option<String> {
        match (&self.base, self.all_files) {
            (Some(rev), _) => Some(format!("--base {rev}")),
            (None, true) => Some("--all-files".to_owned()),
            (None, false) => None,
        }
    }

    /// `request` with this scope, base and batch sizes.
    pub(crate) fn apply(&self, mut request: Evaluate) -> Evaluate {
        if self.all_files {
            request.scope = Scope::AllFiles;
        } else if let Some(rev) = &self.base {
            request.base = Base::Rev(rev.clone());
        }
        request.batch_files = self.batch_files as usize;
        request.batch_bytes = self.batch_bytes;
        request
    }
}

#[derive(Debug, Args)]
pub(crate) struct SarifArgs {
    /// Workspace root (default: the current directory); artifact URIs are relative to it.
    #[arg(long)]
    pub(crate) repo: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) host: HostArgs,
    /// Convert a saved host answer (a JSON-RPC response or a bare decision) instead of asking the host.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["base", "all_files"])]
    pub(crate) from: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) sweep: SweepArgs,
    /// Where to write the SARIF log; `-` is stdout.
    #[arg(long, short, value_name = "FILE|-", default_value = "-")]
    pub(crate) output: String,
    /// Indent the log for people to read (compact JSON by default).
    #[arg(long)]
    pub(crate) pretty: bool,
    /// Which findings the host reports: all, or only those introduced by the working tree.
    #[arg(long, value_enum, default_value = "all", conflicts_with = "from")]
    pub(crate) comparison: Comparison,
    /// `runAutomationDetails.id` of the run: a GitHub code-scanning category (`/` is appended when
    /// missing, so GitHub reads all of it as the category). Unset by default, so the upload action's
    /// own `category` applies.
    #[arg(long, value_name = "ID")]
    pub(crate) category: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// Workspace root (default: the current directory); tool paths are confined to it.
    #[arg(long)]
    pub(crate) repo: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) host: HostArgs,
    #[command(flatten)]
    pub(crate) supervise: SuperviseArgs,
    /// Largest `structuredContent` of one tool result, in bytes of JSON (its text copy doubles it);
    /// longer outputs are truncated or paginated.
    #[arg(long, default_value_t = mcp_adapter::DEFAULT_BUDGET_BYTES as u32,
          value_parser = clap::value_parser!(u32).range(4096..=1_048_576))]
    pub(crate) max_output_bytes: u32,
}

#[derive(Debug, Args)]
pub(crate) struct LspArgs {
    #[command(flatten)]
    pub(crate) host: HostArgs,
    #[command(flatten)]
    pub(crate) supervise: SuperviseArgs,
    /// Accepted for editors that always pass it; the language server always speaks stdio.
    #[arg(long, hide = true)]
    pub(crate) stdio: bool,
    /// How long a document's open and save events settle before the host is asked, in milliseconds.
    #[arg(long, default_value_t = 250)]
    pub(crate) debounce_ms: u64,
}

#[derive(Debug, Args)]
pub(crate) struct EmbeddedHostArgs {
    #[command(subcommand)]
    pub(crate) command: EmbeddedHostCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum EmbeddedHostCommand {
    /// Serve the ASP outer seam (Core profile, advisory only) on stdio for the workspace.
    Serve(HostServeArgs),
}

#[derive(Debug, Args)]
pub(crate) struct HostServeArgs {
    /// Workspace root, inside a git repository (default: the current directory).
    #[arg(long)]
    pub(crate) repo: Option<PathBuf>,
    /// Trusted configuration naming the providers to run (default:
    /// `$XDG_CONFIG_HOME/asp-bridge/host.toml`, else `~/.config/asp-bridge/host.toml`).
    #[arg(long, env = "ASP_BRIDGE_CONFIG", value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
}
