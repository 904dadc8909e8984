//! Host answers as LSP: findings as diagnostics, and what did not run as a notice at the top.
//!
//! ASP ranges are 0-based `{line, char}` in UTF-16 code units, as LSP's default; for a client that
//! negotiated UTF-8 the columns are converted with the text the evaluation was started for. Severity
//! is always set (error/warning/info → 1/2/3; an unknown one is shown as a warning and kept in
//! `data`). Every host string is untrusted text (`asp_wire::text::untrusted`): invisible, BiDi and
//! control characters are stripped and it is capped, whichever field it lands in (`code`, `source`,
//! `message`, each string of `data`). Only `https:` and `http:` links are relayed as
//! `codeDescription.href`: an editor opens them on a click, and `command:`, `javascript:` or `file:`
//! ones would run or read something there.

use bridge_core::model::NotRunView;
use std::borrow::Cow;
use std::str::FromStr;

use asp_wire::proto::{Decision, Finding, Open, Severity};
use asp_wire::text::untrusted;
use serde_json::{Map, Value, json};
use tower_lsp_server::ls_types::{
    CodeDescription, Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range, Uri,
};

use crate::answer::{self, Checked};
use crate::documents::{Encoding, Text};
use crate::evaluate::Failure;

/// `source` of the diagnostics the bridge itself writes.
pub(crate) const BRIDGE_SOURCE: &str = "asp-bridge";
const MESSAGE_MAX: usize = 4000;
const NEXT_STEP_MAX: usize = 1000;
/// Longest host identifier (code, source, reason, decision, fingerprint, receipt id…).
const ID_MAX: usize = 200;
/// Longest `codeDescription.href` relayed.
const HREF_MAX: usize = 2000;
const NOT_RUN_LISTED: usize = 5;

/// How findings are shown to this client, for this document.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Render<'a> {
    /// The document's repo-relative path: only findings located there are shown.
    pub(crate) path: &'a str,
    /// The text the evaluation was started for.
    pub(crate) text: &'a Text,
    pub(crate) encoding: Encoding,
    pub(crate) code_description: bool,
}

/// The decision's findings located in the document, as diagnostics, in the host's order.
pub(crate) fn findings(decision: &Decision, render: Render<'_>) -> Vec<Diagnostic> {
    decision
        .findings
        .iter()
        .filter(|f| answer::shown_in(&f.diagnostic.location.path, render.path))
        .map(|f| finding(f, decision, render))
        .collect()
}

pub(crate) fn severity(severity: &Open<Severity>) -> DiagnosticSeverity {
    match severity.known() {
        Some(Severity::Error) => DiagnosticSeverity::ERROR,
        Some(Severity::Warning) | None => DiagnosticSeverity::WARNING,
        Some(Severity::Info) => DiagnosticSeverity::INFORMATION,
    }
}

fn range(finding: &Finding, render: Render<'_>) -> Range {
    let location = &finding.diagnostic.location;
    let Some(range) = location.range.as_ref().filter(|_| !location.is_workspace()) else {
        return Range::default();
    };
    let at = |p: &asp_wire::proto::Position| {
        Position::new(
            p.line,
            render
                .text
                .column_from_utf16(p.line, p.char, render.encoding),
        )
    };
    let (start, end) = (at(&range.start), at(&range.end));
    Range::new(start, end.max(start))
}

fn finding(finding: &Finding, decision: &Decision, render: Render<'_>) -> Diagnostic {
    let d = &finding.diagnostic;
    let next_step = finding
        .next_step
        .as_deref()
        .or(d.help.as_deref())
        .map(|s| untrusted(s, NEXT_STEP_MAX))
        .filter(|s| !s.trim().is_empty());
    let mut message = untrusted(&d.message, MESSAGE_MAX).into_owned();
    if message.trim().is_empty() {
        message = format!("{} finding", id(&d.code));
    }
    let workspace = d.location.is_workspace();
    if workspace {
        message.insert_str(0, "Project-level (no file): ");
    }
    if let Some(next) = &next_step {
        message.push_str("\nNext step: ");
        message.push_str(next);
    }
    let code_description = d
        .code_description
        .as_ref()
        .filter(|_| render.code_description)
        .and_then(|c| web_link(&c.href))
        .map(|href| CodeDescription { href });

    let mut data = Map::new();
    data.insert("fingerprint".into(), json!(id(&d.fingerprint)));
    if let Some(disposition) = &finding.disposition {
        data.insert("disposition".into(), json!(id(disposition.as_str())));
    }
    if let Some(introduced) = d.introduced {
        data.insert("introduced".into(), json!(introduced));
    }
    if let Some(next) = &next_step {
        data.insert("nextStep".into(), json!(next));
    }
    if let Some(origin) = &finding.next_step_origin {
        data.insert("nextStepOrigin".into(), json!(id(origin)));
    }
    if let Some(note) = &finding.severity_note {
        data.insert("severityNote".into(), json!(untrusted(note, NEXT_STEP_MAX)));
    }
    if d.severity.known().is_none() {
        data.insert("severity".into(), json!(id(d.severity.as_str())));
    }
    if let Some(authority) = &finding.authority {
        data.insert(
            "authority".into(),
            json!({
                "identity": id(&authority.identity),
                "granted": authority.authority.granted,
                "requirement": id(&authority.authority.requirement),
            }),
        );
    }
    if workspace {
        data.insert("projectLevel".into(), Value::Bool(true));
    }
    data.insert("receiptId".into(), json!(id(&decision.receipt.receipt_id)));
    data.insert("decision".into(), json!(id(decision.decision.as_str())));
    data.insert("assurance".into(), json!(id(&decision.assurance.mode)));
    data.insert("authoritative".into(), Value::Bool(false));

    let source = id(&d.source);
    Diagnostic {
        range: range(finding, render),
        severity: Some(severity(&d.severity)),
        code: Some(NumberOrString::String(id(&d.code).into_owned())),
        code_description,
        source: Some(if source.trim().is_empty() {
            "asp".to_owned()
        } else {
            source.into_owned()
        }),
        message,
        related_information: None,
        tags: None,
        data: Some(Value::Object(data)),
    }
}

/// A link the client may offer to open: `https:` or `http:` only, whole (never cut), free of hidden
/// characters. Anything else (`command:`, `javascript:`, `file:`, `data:`, relative) is dropped.
fn web_link(href: &str) -> Option<Uri> {
    let (scheme, _) = href.split_once(':')?;
    let web = scheme.eq_ignore_ascii_case("https") || scheme.eq_ignore_ascii_case("http");
    if !web || href.len() > HREF_MAX || href.chars().any(asp_wire::text::is_hidden) {
        return None;
    }
    Uri::from_str(href).ok()
}

/// A host identifier (code, source, reason, fingerprint…) made safe to show, on one line.
fn id(value: &str) -> Cow<'_, str> {
    one_line(untrusted(value, ID_MAX))
}

/// Text for a one-line summary: line breaks and tabs become spaces.
fn one_line(text: Cow<'_, str>) -> Cow<'_, str> {
    if text.contains(['\n', '\t']) {
        Cow::Owned(text.replace(['\n', '\t'], " "))
    } else {
        text
    }
}

/// A one-line summary of what did not run, for a notice or a message.
fn not_run_summary(decision: &Decision) -> String {
    let not_run = decision.not_run();
    if not_run.is_empty() {
        return format!(
            "the decision is {} with no finding to explain it",
            id(decision.decision.as_str())
        );
    }
    let mut parts: Vec<String> = not_run
        .iter()
        .take(NOT_RUN_LISTED)
        .map(|n| {
            let (source, reason) = (id(&n.source), id(&n.reason));
            let detail = one_line(untrusted(&n.detail, 200));
            if detail.is_empty() {
                format!("{source}: {reason}")
            } else {
                format!("{source}: {reason} ({detail})")
            }
        })
        .collect();
    if not_run.len() > NOT_RUN_LISTED {
        parts.push(format!("and {} more", not_run.len() - NOT_RUN_LISTED));
    }
    format!("not run or degraded: {}", parts.join("; "))
}

fn notice(code: String, message: String, data: Value) -> Diagnostic {
    Diagnostic {
        range: Range::default(),
        severity: Some(DiagnosticSeverity::INFORMATION),
        code: Some(NumberOrString::String(code)),
        code_description: None,
        source: Some(BRIDGE_SOURCE.to_owned()),
        message,
        related_information: None,
        tags: None,
        data: Some(data),
    }
}

/// The notice for a document left out of the changeset: it was not checked, so an empty list says
/// nothing about it.
pub(crate) fn left_out_notice(why: &str) -> Diagnostic {
    notice(
        "left-out".into(),
        format!(
            "ASP host check left this file out ({}): it was not checked",
            untrusted(why, 200)
        ),
        json!({"why": untrusted(why, 200), "authoritative": false}),
    )
}

/// The notice for a decision whose coverage is incomplete; `None` when it is whole.
pub(crate) fn incomplete_notice(checked: &Checked) -> Option<Diagnostic> {
    if !checked.is_incomplete() {
        return None;
    }
    let decision = &checked.decision;
    let not_run: Vec<Value> = decision
        .not_run()
        .iter()
        .map(|n| json!({"source": id(&n.source), "reason": id(&n.reason), "detail": untrusted(&n.detail, 200)}))
        .collect();
    Some(notice(
        "incomplete".into(),
        format!(
            "ASP host check incomplete (decision: {}): {}; an empty list here does not mean no problems",
            id(decision.decision.as_str()),
            not_run_summary(decision)
        ),
        json!({
            "decision": id(decision.decision.as_str()),
            "notRun": not_run,
            "receiptId": id(&decision.receipt.receipt_id),
            "authoritative": false,
        }),
    ))
}

/// The notice for an evaluation that got no answer; `checked`: an earlier check of the document ran,
/// and its findings are still shown.
pub(crate) fn failure_notice(failure: &Failure, checked: bool) -> Diagnostic {
    let shown = if checked {
        "the findings shown are from the last check that ran"
    } else {
        "no check of this document has run yet"
    };
    notice(
        format!("not-run/{}", failure.class),
        format!(
            "ASP host check did not run ({}): {}; {shown}",
            failure.class,
            untrusted(&failure.message, MESSAGE_MAX)
        ),
        json!({"failClass": failure.class.as_str(), "authoritative": false}),
    )
}

/// The `window/showMessage` text for the start of an outage: failed evaluations.
pub(crate) fn failure_message(failure: &Failure) -> String {
    format!(
        "asp-bridge: the ASP host check did not run ({}): {}. Diagnostics stay as last checked until it runs again.",
        failure.class,
        untrusted(&failure.message, MESSAGE_MAX)
    )
}

/// The `window/showMessage` text for incomplete coverage.
pub(crate) fn incomplete_message(decision: &Decision) -> String {
    format!(
        "asp-bridge: the ASP host check is incomplete (decision: {}): {}",
        id(decision.decision.as_str()),
        not_run_summary(decision)
    )
}

/// What makes two incomplete decisions the same outage: the sorted `(source, reason)` pairs.
pub(crate) fn incomplete_key(decision: &Decision) -> String {
    let mut pairs: Vec<String> = decision
        .not_run()
        .iter()
        .map(|n| format!("{}:{}", n.source, n.reason))
        .collect();
    pairs.sort();
    format!(
        "incomplete {} {}",
        decision.decision.as_str(),
        pairs.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpc_peer::FailClass;

    fn fixture(name: &str) -> Decision {
        serde_json::from_value(test_support::fixture(name)).unwrap()
    }

    /// `decision` as `src/api.ts` shows it.
    fn checked(decision: &Decision) -> Checked {
        Checked::new(decision.clone(), "src/api.ts")
    }

    fn render<'a>(text: &'a Text, encoding: Encoding) -> Render<'a> {
        Render {
            path: "src/api.ts",
            text,
            encoding,
            code_description: true,
        }
    }

    #[test]
    fn a_gating_finding_becomes_an_error_with_code_source_next_step_and_data() {
        let decision = fixture("outer/evaluate.deny.gating.json");
        let text = Text::new(String::new());
        let diagnostics = findings(&decision, render(&text, Encoding::Utf16));
        assert_eq!(diagnostics.len(), 1);
        let d = &diagnostics[0];
        assert_eq!(
            d.range,
            Range::new(Position::new(12, 10), Position::new(12, 42))
        );
        assert_eq!(d.severity, Some(DiagnosticSeverity::ERROR));
        assert_eq!(
            d.code,
            Some(NumberOrString::String("lattice/secrets".into()))
        );
        assert_eq!(d.source.as_deref(), Some("lattice"));
        assert_eq!(
            d.message,
            "introduced secret literal\nNext step: Move the secret to runtime configuration."
        );
        let data = d.data.as_ref().unwrap();
        assert_eq!(data["fingerprint"], "sha256:deny0001");
        assert_eq!(data["disposition"], "gating");
        assert_eq!(data["introduced"], true);
        assert_eq!(
            data["nextStep"],
            "Move the secret to runtime configuration."
        );
        assert_eq!(data["receiptId"], "eval-deny-0001");
        assert_eq!(data["authoritative"], false);
        assert!(
            incomplete_notice(&checked(&decision)).is_none(),
            "coverage is whole"
        );
    }

    #[test]
    fn a_project_level_finding_is_shown_at_the_top_of_every_document() {
        let mut decision = fixture("outer/evaluate.deny.gating.json");
        let mut project = decision.findings[0].clone();
        project.diagnostic.location.path = String::new();
        decision.findings = vec![project];
        let text = Text::new("let a = 1;\n".to_owned());
        for path in ["src/api.ts", "src/other.ts"] {
            let shown = findings(
                &decision,
                Render {
                    path,
                    ..render(&text, Encoding::Utf16)
                },
            );
            assert_eq!(shown.len(), 1, "{path}");
            assert_eq!(shown[0].range, Range::default());
            assert_eq!(shown[0].severity, Some(DiagnosticSeverity::ERROR));
            assert!(
                shown[0].message.starts_with("Project-level (no file): "),
                "{}",
                shown[0].message
            );
            assert_eq!(shown[0].data.as_ref().unwrap()["projectLevel"], true);
            let checked = Checked::new(decision.clone(), path);
            assert_eq!((checked.decision.findings.len(), checked.elsewhere), (1, 0));
        }
    }

    #[test]
    fn findings_elsewhere_are_not_shown_in_this_document() {
        let decision = fixture("outer/evaluate.deny.gating.json");
        let text = Text::new(String::new());
        let other = Render {
            path: "src/other.ts",
            ..render(&text, Encoding::Utf16)
        };
        assert!(findings(&decision, other).is_empty());
    }

    #[test]
    fn utf16_columns_become_utf8_columns_with_the_evaluated_text() {
        let mut decision = fixture("outer/evaluate.deny.gating.json");
        let range = decision.findings[0]
            .diagnostic
            .location
            .range
            .as_mut()
            .unwrap();
        range.start = asp_wire::proto::Position { line: 0, char: 5 };
        range.end = asp_wire::proto::Position { line: 0, char: 8 };
        let text = Text::new("😀漢字 key = 1\n".into());
        let d = &findings(&decision, render(&text, Encoding::Utf8))[0];
        assert_eq!(
            d.range,
            Range::new(Position::new(0, 11), Position::new(0, 14))
        );
        let d = &findings(&decision, render(&text, Encoding::Utf16))[0];
        assert_eq!(
            d.range,
            Range::new(Position::new(0, 5), Position::new(0, 8))
        );
    }

    #[test]
    fn an_indeterminate_decision_gets_a_notice_naming_what_did_not_run() {
        let decision = fixture("outer/evaluate.indeterminate.missing-provider.json");
        let notice = incomplete_notice(&checked(&decision)).expect("a notice");
        assert_eq!(notice.severity, Some(DiagnosticSeverity::INFORMATION));
        assert_eq!(notice.range, Range::default());
        assert!(
            notice.message.contains("indeterminate"),
            "{}",
            notice.message
        );
        assert!(
            notice.message.contains("not run or degraded: "),
            "{}",
            notice.message
        );
        assert!(incomplete_message(&decision).contains("incomplete"));
    }

    #[test]
    fn a_failure_notice_names_the_fail_class() {
        let failure = Failure {
            class: FailClass::Health,
            message: "host exited with status 3".into(),
        };
        let notice = failure_notice(&failure, true);
        assert_eq!(
            notice.code,
            Some(NumberOrString::String("not-run/health".into()))
        );
        assert!(
            notice
                .message
                .starts_with("ASP host check did not run (health): host exited")
        );
        assert_eq!(notice.source.as_deref(), Some(BRIDGE_SOURCE));
    }

    /// A fuzz input (`fuzz/`, target `lsp_diagnostics`): a host answer, a NUL byte, the text.
    fn fuzz_input(bytes: &[u8]) -> (Decision, Text) {
        let at = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        let value: Value = serde_json::from_slice(&bytes[..at]).unwrap();
        let result = value.get("result").cloned().unwrap_or(value);
        let text = String::from_utf8_lossy(bytes.get(at + 1..).unwrap_or_default());
        (
            serde_json::from_value(result).unwrap(),
            Text::new(text.into_owned()),
        )
    }

    /// Found by `fuzz/` (exact input kept in the fixture): a receipt failure whose `reason` held a
    /// CR reached the notice and the showMessage text unstripped. Host identifiers (source,
    /// reason, decision, code) written into a message are untrusted text too.
    #[test]
    fn host_identifiers_in_messages_lose_hidden_characters() {
        let (decision, _) = fuzz_input(include_bytes!(
            "../../tests/fixtures/fuzz/lsp_diagnostics/hidden-reason"
        ));
        let notice = incomplete_notice(&checked(&decision)).unwrap();
        for message in [notice.message, incomplete_message(&decision)] {
            assert!(
                !message.chars().any(asp_wire::text::is_hidden),
                "{message:?}"
            );
            assert!(message.contains("lattice: alpha-c heck ("), "{message}");
            assert!(
                !message.contains('\n'),
                "the summary is one line: {message:?}"
            );
        }
        let mut decision = fixture("outer/evaluate.deny.gating.json");
        decision.findings[0].diagnostic.message = String::new();
        decision.findings[0].diagnostic.code = "r\u{202e}ule".into();
        let text = Text::new(String::new());
        let d = &findings(&decision, render(&text, Encoding::Utf16))[0];
        assert!(d.message.starts_with("rule finding"), "{}", d.message);
    }

    /// Reproduced with the `lsp_diagnostics` fuzz target (input kept in the fixture): a column near
    /// `u32::MAX` on a line with a multi-byte character overflowed the UTF-8 conversion.
    #[test]
    fn a_huge_column_saturates_in_utf8() {
        let (decision, text) = fuzz_input(include_bytes!(
            "../../tests/fixtures/fuzz/lsp_diagnostics/column-overflow"
        ));
        let render = Render {
            path: "a.ts",
            ..render(&text, Encoding::Utf8)
        };
        let d = &findings(&decision, render)[0];
        assert_eq!(
            d.range,
            Range::new(Position::new(0, u32::MAX), Position::new(0, u32::MAX))
        );
    }

    /// Every string in `value` (a diagnostic as the client gets it) is free of hidden characters,
    /// and every one but the message is an identifier-sized one.
    fn assert_clean(value: &Value, at: &str) {
        match value {
            Value::String(text) => {
                assert!(
                    !text.chars().any(asp_wire::text::is_hidden),
                    "{at}: {text:?}"
                );
                let max = if at == "/message" {
                    MESSAGE_MAX + NEXT_STEP_MAX + 20
                } else if at.ends_with("/severityNote") || at.ends_with("/nextStep") {
                    NEXT_STEP_MAX
                } else {
                    ID_MAX
                };
                assert!(text.chars().count() <= max, "{at}: {} chars", text.len());
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    assert_clean(item, &format!("{at}/{i}"));
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    assert_clean(item, &format!("{at}/{key}"));
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_host_string_is_filtered_and_only_web_links_are_relayed() {
        let decision = fixture("hostile/evaluate.strings.json");
        let text = Text::new("key = 1\n".into());
        let diagnostics = findings(&decision, render(&text, Encoding::Utf16));
        assert_eq!(diagnostics.len(), 7, "the findings on src/api.ts");
        let mut hrefs = Vec::new();
        for d in &diagnostics {
            let shown = serde_json::to_value(d).unwrap();
            assert_clean(&shown, "");
            assert_eq!(shown["data"]["authoritative"], false);
            if let Some(href) = shown.pointer("/codeDescription/href") {
                hrefs.push(href.as_str().unwrap().to_owned());
            }
        }
        assert_eq!(
            hrefs,
            [
                "https://example.test/rules/ok",
                "HTTP://example.test/rules/upper"
            ],
            "command:, javascript:, file:, data: and relative links are dropped"
        );
        assert!(
            diagnostics[0]
                .source
                .as_deref()
                .unwrap()
                .starts_with("lattice]0;pwned")
        );
        let notice = incomplete_notice(&checked(&decision)).expect("coverage is incomplete");
        assert_clean(&serde_json::to_value(&notice).unwrap(), "");
        assert!(
            !incomplete_message(&decision)
                .chars()
                .any(asp_wire::text::is_hidden)
        );
    }

    #[test]
    fn only_a_web_link_is_a_code_description() {
        for href in [
            "https://example.test/r",
            "http://example.test/r?x=1#y",
            "HTTPS://example.test/r",
        ] {
            assert!(web_link(href).is_some(), "{href}");
        }
        for href in [
            "command:workbench.action.terminal.new",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "vscode://settings",
            "/relative",
            "https://example.test/\u{202e}txt.exe",
            "",
        ] {
            assert!(web_link(href).is_none(), "{href}");
        }
        assert!(web_link(&format!("https://example.test/{}", "a".repeat(HREF_MAX))).is_none());
    }

    #[test]
    fn a_failure_notice_speaks_of_the_last_check_only_when_one_ran() {
        let failure = Failure {
            class: FailClass::Health,
            message: "host exited with status 3".into(),
        };
        let never = failure_notice(&failure, false).message;
        assert!(!never.contains("last check that ran"), "{never}");
        assert!(
            never.ends_with("no check of this document has run yet"),
            "{never}"
        );
        let ran = failure_notice(&failure, true).message;
        assert!(
            ran.ends_with("the findings shown are from the last check that ran"),
            "{ran}"
        );
    }

    #[test]
    fn unknown_severities_show_as_warnings() {
        assert_eq!(
            severity(&Open::Other("critical".into())),
            DiagnosticSeverity::WARNING
        );
        assert_eq!(
            severity(&Open::Known(Severity::Info)),
            DiagnosticSeverity::INFORMATION
        );
    }
}
