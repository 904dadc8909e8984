//! What every tool's answer opens with ([`Caveats`]: advisory, degraded coverage, snapshot,
//! receipt, truncation) and how an answer gives up list items to fit the byte budget
//! ([`Budgeted`]).

use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

use crate::error::Error;
use crate::to_mcp::{self, Advisory, NotRun, Snapshot};

/// What every tool's answer opens with: how to read it (advisory, untrusted text), what did not
/// run, the snapshot and receipt it belongs to, and whether the output budget or the page cut it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Caveats {
    #[serde(flatten)]
    pub(crate) advisory: Advisory,
    /// Everything that did not run or ran degraded, and why. Missing coverage is not a clean result.
    pub(crate) degraded: Vec<NotRun>,
    /// The snapshot the answer is valid for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) valid_as_of: Option<Snapshot>,
    /// The host's receipt for this answer.
    pub(crate) receipt_id: String,
    /// Whether part of the answer was left out to fit the output budget or the page: the
    /// `omitted…` count or `nextCursor` says what.
    pub(crate) truncated: bool,
}

impl Caveats {
    /// The caveats of an answer that is whole so far.
    pub(crate) fn new(
        degraded: Vec<NotRun>,
        valid_as_of: Option<Snapshot>,
        receipt_id: String,
    ) -> Caveats {
        Caveats {
            advisory: Advisory::new(),
            degraded,
            valid_as_of,
            receipt_id,
            truncated: false,
        }
    }

    /// The caveats of a host's answer to `method` that is whole so far, read from its receipt; a
    /// result without a receipt is no answer (a `contract` error, see [`to_mcp::answered`]).
    pub(crate) fn of_answer(
        method: &str,
        receipt: &asp_wire::proto::Receipt,
        not_run: &[bridge_core::model::NotRun],
    ) -> Result<Caveats, Error> {
        to_mcp::answered(method, receipt)?;
        Ok(Caveats::new(
            to_mcp::not_run(not_run),
            to_mcp::snapshot_value(receipt.raw.get("validAsOf")),
            to_mcp::id(&receipt.receipt_id),
        ))
    }

    /// Drops the tail of `list`, the list that makes the answer large, to about `keep` (0..1) of its
    /// length, adding what was dropped to `omitted` and marking the answer truncated; false when
    /// there is nothing left to drop.
    pub(crate) fn cut<T>(&mut self, list: &mut Vec<T>, omitted: &mut usize, keep: f64) -> bool {
        if list.is_empty() {
            return false;
        }
        let kept = shrunk_len(list.len(), keep);
        *omitted += list.len() - kept;
        list.truncate(kept);
        self.truncated = true;
        true
    }
}

/// An output that can give up list items to fit the byte budget.
pub(crate) trait Budgeted {
    /// Keeps about `keep` (0..1) of the items of the list that makes the output large, marks the
    /// output truncated, and says whether anything was dropped.
    fn shrink(&mut self, keep: f64) -> bool;

    /// Whether the JSON text of the output keeps its fields in their declared order (a summary line
    /// first) rather than sorted; it is serialised from the output instead of the value, at the
    /// same cost.
    const ORDERED_TEXT: bool = false;

    /// The result's text block, given the JSON of `structuredContent` as measured: by default that
    /// JSON; an output whose JSON reads poorly gives a compact summary instead, which must still
    /// say every caveat (advisory, degraded coverage, what was not checked, truncation and how to
    /// continue).
    fn text(&self, json: String) -> String {
        json
    }
}

/// [`Budgeted`] for a tool output whose one long list is the field `$list`, with the count of the
/// items left out in `$omitted`: [`Caveats::cut`] on them.
macro_rules! cut_to_budget {
    ($output:ty, $list:ident, $omitted:ident) => {
        impl $crate::tools::caveats::Budgeted for $output {
            fn shrink(&mut self, keep: f64) -> bool {
                self.caveats.cut(&mut self.$list, &mut self.$omitted, keep)
            }
        }
    };
}
pub(crate) use cut_to_budget;

/// How many of `len` items to keep for a `keep` ratio: always at least one fewer.
pub(crate) fn shrunk_len(len: usize, keep: f64) -> usize {
    let target = (len as f64 * keep.clamp(0.0, 1.0) * 0.95).floor() as usize;
    target.min(len.saturating_sub(1))
}
