//! One module per subcommand; each is a thin call into its front-end crate.

pub(crate) mod host;
pub(crate) mod lsp;
pub(crate) mod mcp;
pub(crate) mod provider;
pub(crate) mod sarif;
pub(crate) mod status;
