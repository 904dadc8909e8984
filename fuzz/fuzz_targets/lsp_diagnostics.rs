//! Fuzz target: a host decision as LSP diagnostics, for a document whose text follows the NUL byte,
//! with UTF-16 and with UTF-8 positions. The server decodes only the document's findings; what a
//! whole typed decode reads, it reads too, and shows the same.
//!
//! Nothing panics; every diagnostic has a severity, a non-empty message, a range that does not end
//! before it starts, and says it is not authoritative; every string in it (`code`, `source`,
//! `message`, each one in `data`, at any depth) is free of hidden characters and capped, as is the
//! showMessage text; a `codeDescription.href` is an `https:` or `http:` link; UTF-8 columns that fall
//! inside a line land on a character boundary, and the lines are the host's.
#![no_main]

use asp_bridge_fuzz::{answer, lines, split};
use asp_wire::proto::Decision;
use asp_wire::text::is_hidden;
use libfuzzer_sys::fuzz_target;
use lsp_adapter::fuzzing::{Shown, decision_to_diagnostics, typed_decision_to_diagnostics};
use serde_json::Value;
use serde_json::value::RawValue;

fn position(value: &Value) -> (u64, u64) {
    let n = |key| value[key].as_u64().expect("a position holds numbers");
    (n("line"), n("character"))
}

/// Longest string the server writes into a diagnostic: a message with its next step (4,000 + 1,000
/// characters and the label between them).
const LONGEST: usize = 5_100;

/// Every string in `value`, at any depth, is free of hidden characters and capped.
fn clean(value: &Value) {
    match value {
        Value::String(text) => {
            assert!(!text.chars().any(is_hidden), "hidden characters: {text:?}");
            assert!(text.chars().count() <= LONGEST, "{} characters", text.len());
        }
        Value::Array(items) => items.iter().for_each(clean),
        Value::Object(map) => map.values().for_each(clean),
        _ => {}
    }
}

fn check(diagnostic: &Value) -> ((u64, u64), (u64, u64)) {
    let severity = diagnostic["severity"].as_u64().expect("a severity");
    assert!((1..=3).contains(&severity), "{diagnostic}");
    let message = diagnostic["message"].as_str().expect("a message");
    assert!(!message.trim().is_empty(), "{diagnostic}");
    clean(diagnostic);
    for key in ["code", "source"] {
        let id = diagnostic[key].as_str().expect("a code and a source");
        assert!(
            !id.contains(['\n', '\t']) && id.chars().count() <= 200,
            "{key}: {id:?}"
        );
    }
    if let Some(href) = diagnostic.pointer("/codeDescription/href") {
        let href = href.as_str().expect("a link").to_ascii_lowercase();
        assert!(
            href.starts_with("https:") || href.starts_with("http:"),
            "only web links: {href}"
        );
    }
    assert_eq!(diagnostic["data"]["authoritative"], false);
    let (start, end) = (
        position(&diagnostic["range"]["start"]),
        position(&diagnostic["range"]["end"]),
    );
    assert!(start <= end, "{diagnostic}");
    (start, end)
}

fn on_boundary(lines: &[&str], (line, column): (u64, u64)) {
    if let Some(content) = usize::try_from(line).ok().and_then(|l| lines.get(l))
        && let Ok(column) = usize::try_from(column)
        && column <= content.len()
    {
        assert!(content.is_char_boundary(column), "{content:?} at {column}");
    }
}

/// What one document shows is well-formed (see the module doc).
fn check_shown(shown: &Shown, lines: &[&str]) {
    assert_eq!(shown.utf16.len(), shown.utf8.len());
    for (utf16, utf8) in shown.utf16.iter().zip(&shown.utf8) {
        let (start16, end16) = check(utf16);
        let (start8, end8) = check(utf8);
        assert_eq!((start16.0, end16.0), (start8.0, end8.0), "lines are kept");
        on_boundary(lines, start8);
        on_boundary(lines, end8);
    }
    if let Some(notice) = &shown.notice {
        check(notice);
    }
    let [message, key] = &shown.messages;
    assert!(
        !message.chars().any(is_hidden),
        "hidden characters: {message:?}"
    );
    assert!(!key.is_empty());
}

fuzz_target!(|data: &[u8]| {
    let (json, text) = split(data);
    let Some(result) = answer::<Box<RawValue>>(json) else {
        return;
    };
    let decision = answer::<Decision>(json);
    let lines = lines(&text);
    let mut paths: Vec<&str> = Vec::new();
    for finding in decision.iter().flat_map(|d| &d.findings) {
        let path = finding.diagnostic.location.path.as_str();
        if !paths.contains(&path) && paths.len() < 4 {
            paths.push(path);
        }
    }
    if paths.is_empty() {
        paths.push("src/api.ts");
    }
    for path in paths {
        // The server decodes only the document's findings: never stricter than a whole decode,
        // and showing the same.
        let shown = decision_to_diagnostics(result.get(), path, &text);
        if let Some(decision) = &decision {
            let shown = shown.as_ref().expect("what decodes whole is shown");
            let whole = typed_decision_to_diagnostics(decision, path, &text);
            assert_eq!(shown.utf16, whole.utf16);
            assert_eq!(shown.utf8, whole.utf8);
            assert_eq!(shown.notice, whole.notice);
            assert_eq!(shown.messages, whole.messages);
        }
        if let Some(shown) = &shown {
            check_shown(shown, &lines);
        }
    }
});
