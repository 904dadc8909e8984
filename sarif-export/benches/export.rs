//! Benchmark: a saved decision with 100,000 findings read and exported as a SARIF log, timed against
//! a floor measured in the same run: serde_json parsing the same answer and writing it back (both
//! pretty-printed). Prints `sarif_export_100k: X ms; serde_json floor: Y ms; ratio Z` (best of
//! several interleaved rounds). Run with `cargo bench -p sarif-export`.

use std::hint::black_box;
use std::io::Write as _;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const FINDINGS: usize = 100_000;
const ROUNDS: usize = 5;

/// A JSON-RPC response with `n` findings shaped like a real host's (non-ASCII text, ranges, help,
/// authority evidence, next steps on gating findings).
fn saved_answer(n: usize) -> String {
    let authority = json!({
        "identity": "fake-check", "integrity": "sha256:fake", "conformance": "fake-check",
        "isolation": "gated", "authority": {"granted": true, "requirement": "fake-check"},
    });
    let findings: Vec<Value> = (0..n)
        .map(|i| {
            let severity = ["error", "warning", "info"][i % 3];
            let line = i % 50;
            let mut finding = json!({
                "diagnostic": {
                    "code": format!("fake/rule-{}", i % 7),
                    "severity": severity,
                    "source": "fake-check",
                    "message": format!("naïve 漢字 😀 \u{202E}rtl\u{202C} finding {i}"),
                    "location": {
                        "path": format!("src/ünï/файл-{i} 😀.ts"),
                        "range": {"start": {"line": line, "char": 2}, "end": {"line": line, "char": 9}},
                    },
                    "fingerprint": format!("sha256:fake{i}"),
                    "introduced": i % 2 == 0,
                    "help": format!("see fake rule {} for finding {i}", i % 7),
                    "codeDescription": {"href": format!("https://example.test/rules/{}", i % 7)},
                },
                "authority": authority,
                "disposition": if severity == "error" { "gating" } else { "advisory" },
            });
            if severity == "error" {
                finding["nextStep"] = json!(format!("fix {i}"));
                finding["nextStepOrigin"] = json!("synthesized");
            }
            finding
        })
        .collect();
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "pass": false, "decision": "deny", "callSite": "sweep", "findings": findings,
            "coverage": {"exhaustive": true, "required": ["fake-check"], "enrolled": ["fake-check"],
                         "ran": ["fake-check"], "degraded": []},
            "policyDigest": "sha256:policy", "authorityEvidence": [authority],
            "validAsOf": {"rev": "tree:abc"}, "assurance": {"mode": "gated", "transactionGuarantee": "none"},
            "receipt": {"receiptId": "bench", "host": {"name": "bench-host", "version": "1.0.0"},
                        "failures": []},
        },
    })
    .to_string()
}

fn export(text: &str) -> usize {
    let decision = sarif_export::read_saved(text.as_bytes()).expect("a decision");
    // Limits off: the benchmark measures the conversion of every finding.
    let options = sarif_export::Options {
        limits: sarif_export::Limits {
            results_per_run: usize::MAX,
            ..sarif_export::Limits::GITHUB
        },
        ..sarif_export::Options::default()
    };
    let log = sarif_export::export(&decision, &options);
    log.to_bytes().expect("serialised").len()
}

fn floor(text: &str) -> usize {
    let value: Value = serde_json::from_str(text).expect("JSON");
    serde_json::to_vec_pretty(&value).expect("serialised").len()
}

fn time(f: impl Fn() -> usize) -> Duration {
    let start = Instant::now();
    black_box(f());
    start.elapsed()
}

fn main() {
    let text = saved_answer(FINDINGS);
    let mut best_export = Duration::MAX;
    let mut best_floor = Duration::MAX;
    for _ in 0..ROUNDS {
        best_floor = best_floor.min(time(|| floor(black_box(&text))));
        best_export = best_export.min(time(|| export(black_box(&text))));
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "sarif_export_100k: {:.0} ms; serde_json floor: {:.0} ms; ratio {:.2} ({} bytes of input, best of {ROUNDS})",
        ms(best_export),
        ms(best_floor),
        ms(best_export) / ms(best_floor),
        text.len(),
    );
}
