//! Fuzz target: a host answer as the `structuredContent` of `asp_diagnostics` (every page, by
//! cursor), `asp_status` and `asp_inspect`, at the default byte budget and at a small one.
//!
//! Nothing panics; a result is JSON within the budget, advisory, and free of hidden characters, or
//! the tool's oversize error; the pages of a decision follow each other without a gap or a repeat
//! and always move on.
#![no_main]

use asp_bridge_fuzz::{answer, split};
use asp_wire::proto::{Decision, Inspection, Status};
use asp_wire::text::is_hidden;
use libfuzzer_sys::fuzz_target;
use mcp_adapter::fuzzing;
use mcp_adapter::{DEFAULT_BUDGET_BYTES, Error};
use serde_json::Value;

const BUDGETS: [usize; 2] = [DEFAULT_BUDGET_BYTES, 2_048];
const LIMIT: usize = 7;

fn visible(value: &Value) {
    match value {
        Value::String(s) => assert!(!s.chars().any(is_hidden), "hidden characters: {s:?}"),
        Value::Array(items) => items.iter().for_each(visible),
        Value::Object(map) => {
            for (key, item) in map {
                assert!(!key.chars().any(is_hidden), "hidden characters: {key:?}");
                visible(item);
            }
        }
        _ => {}
    }
}

/// The result's content when it fits, `None` on the oversize error; anything else fails.
fn check(result: Result<Value, Error>, budget: usize) -> Option<Value> {
    match result {
        Ok(value) => {
            let bytes = serde_json::to_vec(&value).expect("JSON");
            assert!(bytes.len() <= budget, "{} bytes over {budget}", bytes.len());
            assert_eq!(value["authoritative"], false);
            visible(&value);
            Some(value)
        }
        Err(Error::Oversize { .. }) => None,
        Err(error) => panic!("unexpected error: {error}"),
    }
}

fn pages(decision: &Decision, budget: usize) {
    let total = decision.findings.len();
    let mut expected_offset = 0;
    let pages = fuzzing::decision_pages(decision, LIMIT, budget, total + 2);
    let count = pages.len();
    for (n, page) in pages.into_iter().enumerate() {
        let Some(page) = check(page, budget) else {
            assert_eq!(n + 1, count, "nothing follows an error");
            return;
        };
        let shown = page["findings"].as_array().expect("findings").len();
        assert!(shown <= LIMIT);
        assert_eq!(page["totalFindings"], total);
        assert_eq!(page["offset"], expected_offset, "pages follow each other");
        expected_offset += shown;
        match page["nextCursor"].as_str() {
            Some(_) => {
                assert!(shown > 0, "a page with a cursor moves on");
                assert_eq!(page["truncated"], true);
            }
            None => {
                assert_eq!(n + 1, count, "the last page has no cursor");
                assert_eq!(expected_offset, total, "every finding is shown");
            }
        }
    }
    assert_eq!(expected_offset, total, "the pages end");
}

fuzz_target!(|data: &[u8]| {
    let (json, _) = split(data);
    for budget in BUDGETS {
        if let Some(decision) = answer::<Decision>(json) {
            pages(&decision, budget);
        }
        if let Some(status) = answer::<Status>(json) {
            check(fuzzing::status(&status, budget), budget);
        }
        if let Some(inspection) = answer::<Inspection>(json) {
            check(fuzzing::inspection(&inspection, budget), budget);
        }
    }
});
