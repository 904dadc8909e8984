//! The pages of `asp_diagnostics` answers: the last few answers kept by key (capped in count and
//! bytes), pages cut from them, and the cursors that point into them.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::{KEPT_ANSWERS, KEPT_MAX_BYTES, MAX_CURSOR_BYTES, Output};
use crate::error::Error;

/// One page of `answer`, from `offset`, at most `limit` findings.
pub(crate) fn page(answer: &Output, offset: usize, limit: usize) -> Result<Output, Error> {
    let total = answer.findings.len();
    if offset > total {
        return Err(Error::Input(
            "cursor points past the last finding".to_owned(),
        ));
    }
    let end = (offset + limit).min(total);
    let mut out = Output {
        findings: Vec::new(),
        kept_bytes: 0,
        ..answer.clone()
    };
    out.findings = answer.findings[offset..end].to_vec();
    out.offset = offset;
    out.caveats.truncated = end < total;
    out.next_cursor = (end < total).then(|| cursor(answer.page_key, end));
    Ok(out)
}

pub(super) fn cursor(key: u64, offset: usize) -> String {
    format!("d{key}.{offset}")
}

pub(crate) fn parse_cursor(raw: &str) -> Result<(u64, usize), Error> {
    let parsed = (raw.len() <= MAX_CURSOR_BYTES)
        .then(|| raw.strip_prefix('d')?.split_once('.'))
        .flatten()
        .and_then(|(key, offset)| Some((key.parse().ok()?, offset.parse().ok()?)));
    parsed.ok_or_else(|| {
        Error::Input(format!(
            "cursor {} is not one this server issued",
            asp_wire::text::untrusted(raw, 80)
        ))
    })
}

/// The last few answers, by key, for their cursors.
#[derive(Debug, Default)]
pub(crate) struct Pages {
    pub(super) inner: Mutex<PagesInner>,
}

#[derive(Debug, Default)]
pub(super) struct PagesInner {
    next: u64,
    pub(super) kept: VecDeque<(u64, Arc<Output>)>,
    /// Sum of the kept answers' `kept_bytes`.
    pub(super) bytes: usize,
}

impl Pages {
    /// Keeps the answer `build` makes for a fresh key; the oldest answers go when more than
    /// [`KEPT_ANSWERS`] or [`KEPT_MAX_BYTES`] are kept (the newest always stays).
    pub(super) fn keep(&self, build: impl FnOnce(u64) -> Output) -> Arc<Output> {
        let key = {
            let mut inner = rpc_peer::lock(&self.inner);
            inner.next += 1;
            inner.next
        };
        let answer = Arc::new(build(key));
        let mut inner = rpc_peer::lock(&self.inner);
        inner.bytes += answer.kept_bytes;
        inner.kept.push_back((key, answer.clone()));
        while inner.kept.len() > KEPT_ANSWERS
            || (inner.bytes > KEPT_MAX_BYTES && inner.kept.len() > 1)
        {
            if let Some((_, old)) = inner.kept.pop_front() {
                inner.bytes -= old.kept_bytes;
            }
        }
        answer
    }

    pub(super) fn get(&self, key: u64) -> Option<Arc<Output>> {
        let inner = rpc_peer::lock(&self.inner);
        inner
            .kept
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, a)| a.clone())
    }
}
