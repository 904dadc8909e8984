//! `asp-bridge lsp`: a language server on stdio (lsp-adapter). The workspace root comes from the
//! client's `initialize`; the host is built for it then, supervised, and started lazily (with the
//! embedded host, a root outside git is an `input` failure shown to the user at once). Stdout
//! carries LSP frames only; logs go to stderr.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use bridge_core::RestartPolicy;
use lsp_adapter::Options;
// The language server owns this process's stdin and stdout: they are its transport.
use tokio::io::{stdin, stdout};

use crate::flags::LspArgs;

/// Serves until `exit` or the end of stdin; the exit code is the one LSP asks for: 0 after
/// `shutdown`, 1 otherwise (`exit` without `shutdown`, stdin closed first, even before `initialize`).
pub(crate) async fn run(args: LspArgs) -> anyhow::Result<ExitCode> {
    // The host is chosen (and the choice announced) now, though it starts only once a client
    // names the workspace.
    crate::host_choice::choose(&args.host)?;
    let host = args.host.clone();
    // The supervisor brings a crashed host back by itself, first after `--restart-delay-ms`.
    let policy = RestartPolicy {
        initial_delay: Duration::from_millis(args.supervise.restart_delay_ms),
        ..RestartPolicy::default()
    };
    let factory = lsp_adapter::supervised(
        move |root: &Path| {
            let config = crate::setup::host_config(&host, root).map_err(|e| {
                match e.downcast::<bridge_core::Error>() {
                    Ok(error) => error,
                    Err(other) => bridge_core::Error::HostCommand(format!("{other:#}")),
                }
            })?;
            // The embedded host cannot serve a root outside git: say so as the `input` error it
            // is, once, instead of a host that exits at every start.
            crate::host_choice::check_embedded_root(root).map_err(|e| match e {
                core_host::Error::Repo(error) => error.into(),
                other => bridge_core::Error::Input(other.to_string()),
            })?;
            Ok(config)
        },
        policy,
    );
    let mut options = Options::new(factory);
    options.debounce = Duration::from_millis(args.debounce_ms);
    let outcome = lsp_adapter::serve(stdin(), stdout(), options).await;
    tracing::debug!(?outcome, "language server stopped");
    // The host is already shut down and every frame written: the runtime ends as for any command.
    Ok(ExitCode::from(
        u8::try_from(outcome.exit_code()).unwrap_or(1),
    ))
}
