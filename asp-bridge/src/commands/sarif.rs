//! `asp-bridge sarif`: not built yet.

use crate::flags::SarifArgs;

pub(crate) async fn run(_args: SarifArgs) -> anyhow::Result<()> {
    anyhow::bail!("`asp-bridge sarif` is not built yet")
}
