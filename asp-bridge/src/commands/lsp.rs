//! `asp-bridge lsp`: not built yet.

use crate::flags::LspArgs;

pub(crate) async fn run(_args: LspArgs) -> anyhow::Result<()> {
    anyhow::bail!("`asp-bridge lsp` is not built yet")
}
