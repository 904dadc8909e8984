//! What the workspace's tests share, so that no crate keeps its own copy: temporary git repositories
//! ([`git`]), LSP frames and clients ([`lsp`]), NDJSON JSON-RPC clients ([`ndjson`]), child
//! processes waited for with a deadline ([`process`]), a runtime for tests of sync code ([`runtime`]), the ASP fixtures ([`fixture`]) and schemas
//! ([`schema`]), MCP clients ([`mcp`]), external test tools that skip loudly and are recorded ([`external_tool`], [`skip`]), the
//! opcore bundle and its TypeScript repository ([`opcore`]), the side-by-side comparison with
//! pre-commit-hooks ([`precommit`]), and the path of the scriptable fake host
//! ([`fake_host_bin`], built from `tests/fake_host/`).
//!
//! A dev-dependency only: it depends on no crate of the workspace, so any of them can use it.

mod bins;
mod files;
pub mod git;
pub mod lsp;
pub mod mcp;
pub mod ndjson;
pub mod opcore;
pub mod precommit;
pub mod process;
pub mod runtime;
pub mod schema;
pub mod skip;

pub use bins::{fake_host_bin, fake_provider_bin};
pub use files::{fixture, fixtures_dir, strs, tree, workspace_dir};
pub use skip::external_tool;
