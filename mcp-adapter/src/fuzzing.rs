//! Exists for `fuzz/` (the cargo-fuzz crate outside the workspace), behind the `fuzzing` feature:
//! the client's lines through the checker, and the conversions of host answers into the tools'
//! structuredContent, budget included, without a host or a session. Not for other callers.

use asp_wire::proto::{Comparison, Decision, Inspection, Status};
use serde_json::Value;

use crate::Error;
use crate::tools::run::fit;
use crate::tools::{diagnostics, inspect, status};

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
        let page =
            diagnostics::page(&answer, offset, limit).and_then(|mut page| fit(&mut page, budget));
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
