//! Benchmark: a saved decision with 100,000 findings read and exported as a SARIF log, timed against
//! a floor measured in the same run: serde_json parsing the same answer and writing it back (both
//! pretty-printed). Prints `sarif_export_100k: X ms; serde_json floor: Y ms; ratio Z` (best of
//! several interleaved rounds), then the peak memory of each, measured in a child process of its
//! own (this binary again): the peak resident set above the input text, while it runs once (Linux
//! `/proc`; the peak is reset with `/proc/self/clear_refs` after the input is read). Run with
//! `cargo bench -p sarif-export`.

use std::hint::black_box;
use std::io::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const FINDINGS: usize = 100_000;
const ROUNDS: usize = 5;
/// Set in the child that measures one peak: `export` or `floor`, and the file holding the input.
const PEAK_OF: &str = "SARIF_BENCH_PEAK_OF";
const PEAK_INPUT: &str = "SARIF_BENCH_PEAK_INPUT";

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

/// `VmRSS` or `VmHWM` of this process, in KiB.
fn memory_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| {
            v.trim_start_matches(':')
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// In the child: runs `what` once on the input and prints its peak above the input, in KiB.
fn peak_child(what: &str, input: &str) {
    let text = std::fs::read_to_string(input).expect("input");
    std::fs::write("/proc/self/clear_refs", "5").expect("reset the peak RSS");
    let before = memory_kib("VmRSS");
    black_box(match what {
        "export" => export(black_box(&text)),
        _ => floor(black_box(&text)),
    });
    let peak = memory_kib("VmHWM").saturating_sub(before);
    let _ = writeln!(std::io::stdout().lock(), "{peak}");
}

/// The peak of `what` above the input, in a child process of its own.
fn peak(what: &str, input: &std::path::Path) -> f64 {
    let out = Command::new(std::env::current_exe().expect("this bench"))
        .env(PEAK_OF, what)
        .env(PEAK_INPUT, input)
        .output()
        .expect("the peak child");
    assert!(out.status.success(), "peak child: {out:?}");
    let kib: u64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("KiB");
    kib as f64 / 1024.0
}

fn main() {
    if let (Some(what), Some(input)) = (std::env::var_os(PEAK_OF), std::env::var_os(PEAK_INPUT)) {
        return peak_child(&what.to_string_lossy(), &input.to_string_lossy());
    }
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
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("answer.json");
    std::fs::write(&input, &text).expect("input file");
    drop(text);
    let (export_peak, floor_peak) = (peak("export", &input), peak("floor", &input));
    let _ = writeln!(
        out,
        "sarif_export_100k peak RSS above the input: {export_peak:.0} MiB; serde_json floor: {floor_peak:.0} MiB; ratio {:.2}",
        export_peak / floor_peak,
    );
}
