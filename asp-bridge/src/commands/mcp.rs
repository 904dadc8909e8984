//! `asp-bridge mcp`: not built yet.

use crate::flags::McpArgs;

pub(crate) async fn run(_args: McpArgs) -> anyhow::Result<()> {
    anyhow::bail!("`asp-bridge mcp` is not built yet")
}
