//! `asp-bridge lsp`: a language server on stdio (lsp-adapter). The workspace root comes from the
//! client's `initialize`; the host is built for it then, supervised, and started lazily. Stdout
//! carries LSP frames only; logs go to stderr.

use std::path::Path;
use std::time::Duration;

use bridge_core::RestartPolicy;
use lsp_adapter::Options;
// The language server owns this process's stdin and stdout: they are its transport.
use tokio::io::{stdin, stdout};

use crate::flags::LspArgs;

pub(crate) async fn run(args: LspArgs) -> anyhow::Result<()> {
    let host = args.host.clone();
    let restart_delay = Duration::from_millis(args.supervise.restart_delay_ms);
    let policy = RestartPolicy {
        initial_delay: restart_delay,
        ..RestartPolicy::default()
    };
    let factory = lsp_adapter::supervised(
        move |root: &Path| {
            crate::host_config(&host, root).map_err(|e| match e.downcast::<bridge_core::Error>() {
                Ok(error) => error,
                Err(other) => bridge_core::Error::HostCommand(format!("{other:#}")),
            })
        },
        policy,
    );
    let mut options = Options::new(factory);
    options.debounce = Duration::from_millis(args.debounce_ms);
    options.retry_delay = restart_delay;
    let outcome = lsp_adapter::serve(stdin(), stdout(), options).await;
    tracing::debug!(?outcome, "language server stopped");
    if outcome.exit_code() != 0 {
        // LSP: `exit` without `shutdown` first ends with status 1. The host is already shut down and
        // every frame written, so nothing is lost by leaving here.
        std::process::exit(outcome.exit_code());
    }
    Ok(())
}
