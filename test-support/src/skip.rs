//! Tests that need an external tool: skipped loudly where it is missing, and recorded, so that the
//! test command can end with a summary of every skip and why (a line in the harness's captured
//! output is easily missed); a failure instead where the run requires every tool.
//!
//! `ASP_BRIDGE_REQUIRE_TOOLS` (set by `.ci/run`, not by `CI` alone, so a fork's own CI without the
//! tools is not red from the start) turns a skip into a failure. `ASP_BRIDGE_SKIP_LOG` names the file
//! `scripts/test.sh` reads for its summary: one `test<TAB>why` line per skip.

use std::io::Write as _;
use std::path::Path;

/// The switch that makes a missing tool a failure.
pub const REQUIRE_TOOLS: &str = "ASP_BRIDGE_REQUIRE_TOOLS";
/// The file each skip is appended to.
pub const SKIP_LOG: &str = "ASP_BRIDGE_SKIP_LOG";

/// Whether this run requires every external tool ([`REQUIRE_TOOLS`] set and not empty).
pub fn tools_required() -> bool {
    std::env::var_os(REQUIRE_TOOLS).is_some_and(|v| !v.is_empty())
}

/// Skips the calling test because of `why`: a failure when tools are required, else one loud line
/// on stderr and one line in the skip log. The test is named by its thread (libtest names each
/// test's thread after it).
pub fn skip(why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    if tools_required() {
        panic!("{test}: {why} ({REQUIRE_TOOLS} is set: every external tool is required here)");
    }
    record(
        std::env::var_os(SKIP_LOG).as_deref().map(Path::new),
        test,
        why,
    );
}

/// The loud line, and the line in `log` when there is one.
fn record(log: Option<&Path>, test: &str, why: &str) {
    eprintln!("\n*** SKIPPED {test}: {why} ***\n");
    let Some(log) = log else {
        return;
    };
    let line = format!("{test}\t{}\n", why.replace(['\t', '\n'], " "));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!("could not record the skip in {}: {e}", log.display());
    }
}

/// The path that the environment variable `var` names, or `None` after a recorded skip
/// ([`skip`]; a failure instead where every tool is required).
pub fn external_tool(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(value) if !value.is_empty() => Some(value),
        _ => {
            skip(&format!(
                "{var} is not set; install {what} (scripts/test.sh does) to run it"
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_skip_is_one_line_of_the_log_with_its_test_and_reason() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips.tsv");
        record(Some(&log), "e2e::nvim", "`nvim` is not installed");
        record(
            Some(&log),
            "host::opcore",
            "no bundle\tin shared/providers\n",
        );
        record(None, "not::logged", "nowhere to write");
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "e2e::nvim\t`nvim` is not installed\nhost::opcore\tno bundle in shared/providers \n"
        );
    }
}
