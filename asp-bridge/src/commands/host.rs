//! `asp-bridge host serve`: the embedded advisory host (`core-host`) on this process's stdio.

use anyhow::Context as _;

use crate::flags::{EmbeddedHostArgs, EmbeddedHostCommand, HostServeArgs};

pub(crate) async fn run(args: EmbeddedHostArgs) -> anyhow::Result<()> {
    match args.command {
        EmbeddedHostCommand::Serve(args) => serve(args).await,
    }
}

async fn serve(args: HostServeArgs) -> anyhow::Result<()> {
    let repo = crate::setup::workspace_root(args.repo.as_deref())?;
    let exe = std::env::current_exe()
        .context("cannot find this executable to start the hygiene provider")?;
    // Each built-in provider is this executable's `provider <subcommand>` (core-host's table).
    let options = core_host::Options {
        repo,
        config: args.config,
        builtin_launcher: vec![exe.to_string_lossy().into_owned(), "provider".into()],
        check_linter: linter_provider::from_config::check,
    };
    // What a provider starts and leaves behind comes back to this process, which ends it.
    if let Err(error) = rpc_peer::child::strays::adopt() {
        tracing::warn!(%error, "what a provider leaves behind cannot be ended");
    }
    let (input, output) = crate::stdio::pipes();
    core_host::serve(input, output, options).await?;
    Ok(())
}
