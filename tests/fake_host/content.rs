//! Canned content of the fake host: generated findings, sample data and the oversize line.

use serde_json::{Value, json};

use crate::set;

/// A valid JSON notification line of exactly `bytes` bytes (at least its fixed part), plus `\n`.
pub(crate) fn oversize_line(bytes: usize) -> Vec<u8> {
    let head = br#"{"jsonrpc":"2.0","method":"x","params":""#;
    let tail = br#""}"#;
    let pad = bytes.saturating_sub(head.len() + tail.len());
    let mut line = Vec::with_capacity(head.len() + pad + tail.len() + 1);
    line.extend_from_slice(head);
    line.resize(head.len() + pad, b'a');
    line.extend_from_slice(tail);
    line.push(b'\n');
    line
}

pub(crate) fn generated_finding(i: usize, fixed_path: Option<&str>, authority: &Value) -> Value {
    let severity = ["error", "warning", "info"][i % 3];
    let gating = severity == "error";
    let line = if fixed_path.is_some() { i % 5 } else { i % 50 };
    let path = fixed_path.map_or_else(|| format!("src/ünï/файл-{i} 😀.ts"), str::to_owned);
    let rule = i % 7;
    let mut finding = json!({
        "diagnostic": {
            "code": format!("fake/rule-{rule}"),
            "severity": severity,
            "source": "fake-check",
            "message": format!("naïve 漢字 😀 \u{202E}rtl\u{202C} finding {i}"),
            "location": {
                "path": path,
                "range": {"start": {"line": line, "char": 2}, "end": {"line": line, "char": 9}},
            },
            "fingerprint": format!("sha256:fake{i}"),
            "introduced": i.is_multiple_of(2),
            "help": format!("see fake rule {rule} for finding {i}"),
            "codeDescription": {"href": format!("https://example.test/rules/{rule}")},
        },
        "authority": authority,
        "disposition": if gating { "gating" } else { "advisory" },
    });
    if gating {
        set(&mut finding, "nextStep", json!(format!("fix {i}")));
        set(&mut finding, "nextStepOrigin", json!("synthesized"));
    }
    finding
}

pub(crate) fn sample_authority() -> Value {
    json!({
        "identity": "fake-check",
        "integrity": "sha256:fake",
        "conformance": "fake-check",
        "isolation": "gated",
        "authority": {"granted": true, "requirement": "fake-check"},
    })
}

/// The diagnostic of `judge/progress.notification.json`.
pub(crate) fn sample_diagnostic() -> Value {
    json!({
        "code": "acme-secrets/aws-key",
        "severity": "error",
        "source": "acme-secrets",
        "message": "hardcoded AWS access key",
        "location": {
            "path": "src/api.ts",
            "range": {"start": {"line": 41, "char": 2}, "end": {"line": 41, "char": 40}},
        },
        "fingerprint": "sha256:7c5e",
        "introduced": true,
    })
}
