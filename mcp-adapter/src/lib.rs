//! MCP front end of asp-bridge: read-only tools that relay an ASP host's answers to AI agents.
//!
//! One rmcp server serves both MCP eras (the `initialize` handshake of 2025-11-25 and the stateless
//! 2026-07-28 revision) with five tools: `asp_status`, `asp_capabilities`, `asp_authority_status`,
//! `asp_inspect` and `asp_diagnostics`. Every result is advisory (`"authoritative": false`) and
//! satisfies no gate (ADR 0025); a host that is down, slow or refusing becomes a tool result with
//! `isError: true` naming the ASP failClass, never a JSON-RPC error and never an empty clean result.
//!
//! Layout: `frames` (the client's lines checked before rmcp reads them), [`server`] (the
//! `ServerHandler`, thin), `tools` (one file per tool and the runner they
//! share), `to_mcp` (host answers and errors as MCP results), `policy`
//! (`.asp/asp.json`). The host comes from a [`bridge_core::HostSource`]: the supervisor, or anything
//! else that yields a [`bridge_core::HostClient`].

mod error;
mod frames;
mod policy;
mod server;
mod to_mcp;
mod tools;

pub use error::Error;
pub use server::{EXTENSION_ID, serve, serve_lines, serve_stdio};
pub use tools::{DEFAULT_BUDGET_BYTES, TOOL_NAMES};

// Exists for `fuzz/` (the cargo-fuzz crate outside the workspace): the client's lines through the
// checker, and the conversions of host answers into the tools' structuredContent, budget included,
// without a host or a session. Not for other callers.
#[doc(hidden)]
pub mod fuzzing {
    use asp_wire::proto::{Comparison, Decision, Inspection, Status};
    use serde_json::Value;

    use crate::Error;
    use crate::tools::{diagnostics, fit, inspect, status};

    /// The `asp_diagnostics` pages of `decision`, `limit` findings at most each, following
    /// `nextCursor` from the first page for at most `max_pages` pages: each the `structuredContent`
    /// fitted to `budget` bytes, or the error the tool would return instead.
    pub fn decision_pages(
        decision: &Decision,
        limit: usize,
        budget: usize,
        max_pages: usize,
    ) -> Vec<Result<Value, Error>> {
        let answer = diagnostics::answer(decision, Comparison::All, 1, 1, None, Default::default());
        let mut pages = Vec::new();
        let mut offset = 0;
        while pages.len() < max_pages {
            let page = diagnostics::page(&answer, offset, limit)
                .and_then(|mut page| fit(&mut page, budget));
            let next = page
                .as_ref()
                .ok()
                .and_then(|p| p.get("nextCursor")?.as_str().map(diagnostics::parse_cursor));
            pages.push(page);
            match next {
                Some(Ok((_, next))) => offset = next,
                Some(Err(error)) => {
                    pages.push(Err(error));
                    break;
                }
                None => break,
            }
        }
        pages
    }

    /// What the line checker makes of the client bytes `input` when rmcp answers nothing: the bytes
    /// it passes to rmcp, and the replies it writes itself, each as written. Needs a tokio runtime.
    pub async fn checked_lines(input: Vec<u8>) -> (Vec<u8>, Vec<Vec<u8>>) {
        use tokio::io::AsyncReadExt as _;
        let (to_rmcp, mut rmcp) = tokio::io::duplex(64 * 1024);
        let (frames, mut queue) = tokio::sync::mpsc::channel(16);
        let check = crate::frames::check(
            tokio::io::BufReader::new(input.as_slice()),
            to_rmcp,
            frames,
            crate::frames::Inflight::default(),
        );
        let passed = async {
            let mut passed = Vec::new();
            rmcp.read_to_end(&mut passed)
                .await
                .expect("in-memory reads cannot fail");
            passed
        };
        let replies = async {
            let mut replies = Vec::new();
            while let Some(reply) = queue.recv().await {
                replies.push(reply);
            }
            replies
        };
        let ((), passed, replies) = tokio::join!(check, passed, replies);
        (passed, replies)
    }

    /// The `asp_status` `structuredContent` of `status`, fitted to `budget` bytes.
    pub fn status(status: &Status, budget: usize) -> Result<Value, Error> {
        fit(&mut status::output(status, None), budget)
    }

    /// The `asp_inspect` `structuredContent` of `inspection`, fitted to `budget` bytes.
    pub fn inspection(inspection: &Inspection, budget: usize) -> Result<Value, Error> {
        fit(&mut inspect::output(inspection, budget), budget)
    }
}
