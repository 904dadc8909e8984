//! Fuzz target: a saved host answer through the SARIF export and writer; the document text after
//! the NUL byte through GitHub's line hash.
//!
//! Whatever the host sent, nothing panics; the written bytes are one JSON document, the same as
//! `to_json`, valid against the OASIS SARIF 2.1.0 schema and advisory (`"authoritative": false`);
//! every line of a text gets one hash.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use asp_bridge_fuzz::{lines, split};
use libfuzzer_sys::fuzz_target;
use sarif_export::{Limits, Options};
use serde_json::Value;

/// A workspace with files to hash, made once per process.
fn repo() -> &'static PathBuf {
    static REPO: OnceLock<PathBuf> = OnceLock::new();
    REPO.get_or_init(|| {
        let root = std::env::temp_dir().join("asp-bridge-fuzz-sarif-repo");
        std::fs::create_dir_all(root.join("src")).expect("workspace");
        let text = "const a = \"😀 naïve\";\r\n\tlet b = 1;  \n\n// 漢字 end\rlast";
        std::fs::write(root.join("src/api.ts"), text).expect("file");
        std::fs::write(root.join("src/core.ts"), "x\n".repeat(40)).expect("file");
        root.canonicalize().expect("canonical root")
    })
}

fn options() -> [Options; 2] {
    let tight = Options {
        repo: Some(repo().clone()),
        category: Some("asp/fuzz".into()),
        limits: Limits {
            results_per_run: 3,
            rules_per_run: 2,
            extensions_per_run: 1,
            gzip_bytes: 2_000,
            ..Limits::GITHUB
        },
        ..Options::default()
    };
    [Options::default(), tight]
}

fuzz_target!(|data: &[u8]| {
    let (json, text) = split(data);
    let hashes = sarif_export::fuzzing::line_hashes(&text);
    assert_eq!(hashes.len(), lines(&text).len(), "one hash per line");

    let Ok(decision) = sarif_export::read_saved(json) else {
        return;
    };
    for options in options() {
        let export = sarif_export::export(&decision, &options);
        let bytes = export.to_bytes().expect("a log serialises");
        let log: Value = serde_json::from_slice(&bytes).expect("the log is JSON");
        assert_eq!(log, export.to_json(), "the bytes are the log");
        let errors = sarif_export::schema::errors(&log);
        assert!(errors.is_empty(), "not SARIF 2.1.0: {errors:?}");
        let run = &log["runs"][0];
        assert_eq!(run["properties"]["authoritative"], false);
        let results = run["results"].as_array().map_or(0, Vec::len);
        assert!(results <= options.limits.results_per_run);
        assert_eq!(results, export.summary().results);
    }
});
