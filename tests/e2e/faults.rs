//! The fault matrix: every host fault against every front end (status, sarif, mcp, lsp).
//!
//! One row per fault ([`Row`]); each row is one test per front end, named `faults::<row>::<front
//! end>`, so `cargo test -p asp-bridge --test e2e faults` runs the whole table. What each cell
//! expects is data in the front end's own file ([`one_shot`] for `status` and `sarif`, [`mcp`],
//! [`lsp`]); every cell also checks, whatever its fault:
//!
//! - a classed failure or a degraded notice, never a silent empty answer: one-shot commands print one
//!   `asp-bridge: <class>: …` line and exit 3/4/5/6 (or exit 0 with a whole document when the fault
//!   did not cost the answer); MCP answers `isError: true` with the `failClass`; LSP publishes an
//!   Information notice (`not-run/<class>`, `incomplete`) and says it once with `window/showMessage`;
//! - bounded time: every run and every wait has a limit, and nothing sleeps (waits are on messages);
//! - no panic (`panicked` never appears on the bridge's stderr) and nothing but frames on stdout in the
//!   long-running modes;
//! - no orphaned process ([`crate::support::Scratch::assert_no_orphans`]) once the bridge is gone;
//! - nothing lost: every request of the client is answered exactly once (counted per id);
//! - the long-running adapter still serves afterwards: a following request gets a normal answer
//!   (after a crash, once the host is restarted with `--restart-delay-ms 0`).
//!
//! Short deadlines keep the matrix fast: [`DEADLINE_MS`] for rows that wait on a silent host, an
//! answer [`LATE_MS`] late for the late row. A crash "before the first answer" is a crash on
//! `host/status`, "mid-request" on the evaluate (or inspect) request, "between requests" is
//! `--crash-after N` (the host answers N requests, then dies on the next one). In the long-running
//! modes only the first host process has the fault ([`Host::first_only`]), so the restart recovers.

mod lsp;
mod mcp;
mod one_shot;
mod session;

use std::path::PathBuf;

use crate::support::{Scratch, fake_host_bin, fixtures};

/// The deadline given to the bridge in rows where the host stays silent or answers late; the
/// prompt answers of those rows must still fit in it on a loaded machine.
pub(crate) const DEADLINE_MS: u64 = 2000;
/// How late the host answers in the late row: two deadlines.
pub(crate) const LATE_MS: u64 = 4000;
/// One byte over the frame cap of `status`, `mcp` and `lsp` (16 MiB).
pub(crate) const OVERSIZE: usize = 16 * 1024 * 1024 + 1;
/// One byte over the frame cap of a live `sarif` export (256 MiB: a sweep answer can be large).
pub(crate) const SARIF_OVERSIZE: usize = 256 * 1024 * 1024 + 1;
/// Each ASP failClass with the exit code of the one-shot commands.
pub(crate) const CLASSES: [(&str, i32); 4] =
    [("health", 3), ("contract", 4), ("policy", 5), ("input", 6)];
/// What the bridge logs when it skips junk, invalid UTF-8 and an oversize line.
pub(crate) const JUNK_LOGGED: [&str; 3] = [
    "skipped a host line that is not a JSON-RPC message",
    "skipped a host line that is not valid UTF-8",
    "skipped a host line longer than the frame cap",
];
/// What the bridge logs on replies to ids it never issued (and duplicate replies).
pub(crate) const STRIKES_LOGGED: [&str; 2] = [
    "protocol strike: reply to id \"fake-unknown-1\", never issued",
    "protocol strike: reply to id 999999, never issued",
];
/// What the bridge logs when a host ignores `shutdown` and SIGTERM.
pub(crate) const KILL_LOGGED: [&str; 2] = [
    "host still running after shutdown; sending SIGTERM",
    "host ignored SIGTERM; sending SIGKILL",
];
/// What the bridge logs (with `rpc_peer::peer=debug`) when a late reply arrives.
pub(crate) const LATE_LOGGED: &str = "dropped a late reply to a forgotten request";

/// The faults, one row each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Row {
    CrashBeforeFirstAnswer,
    CrashMidRequest,
    CrashBetweenRequests,
    Hangs,
    AnswersAfterTheDeadline,
    UnknownId,
    JunkInvalidUtf8Oversize,
    FloodsStderr,
    ClosesStdoutKeepsRunning,
    IgnoresShutdown,
    RefusesWithEachFailClass,
    UnsupportedOuterProtocol,
    BendsTheSchema,
}

/// How the fake host of one cell is started.
#[derive(Clone, Debug)]
pub(crate) struct Host {
    /// Fake-host flags, shell words.
    pub(crate) flags: String,
    /// Only the first process started has the fault; later ones (restarts) are well.
    pub(crate) first_only: bool,
}

impl Host {
    /// Every process started has the fault.
    pub(crate) fn with(flags: impl Into<String>) -> Host {
        Host {
            flags: flags.into(),
            first_only: false,
        }
    }

    /// Only the first process has the fault (for the long-running modes, which restart it).
    pub(crate) fn first_only(flags: impl Into<String>) -> Host {
        Host {
            flags: flags.into(),
            first_only: true,
        }
    }

    /// The `--host-command` line; the host records to the scratch marker, so the orphan check
    /// finds every process started for the cell.
    pub(crate) fn command(&self, scratch: &Scratch) -> String {
        let fake = shlex::try_quote(fake_host_bin()).unwrap().into_owned();
        let record = shlex::try_quote(&scratch.marker().display().to_string())
            .unwrap()
            .into_owned();
        let healthy = format!("exec {fake} --record {record}");
        let script = if self.first_only {
            let gate = scratch.path().join(FIRST_GATE).display().to_string();
            let gate = shlex::try_quote(&gate).unwrap().into_owned();
            format!(
                "if mkdir {gate} 2>/dev/null; then {healthy} {}; else {healthy}; fi",
                self.flags
            )
        } else {
            format!("{healthy} {}", self.flags)
        };
        format!("sh -c {}", shlex::try_quote(&script).unwrap())
    }
}

/// The directory whose creation marks that the first host process was started.
const FIRST_GATE: &str = "first-host-started";

/// The host of a row whose fault must cost no answer in any front end: the cell checks that the
/// answers come as from a well host (and what the bridge logs, [`logged`]).
pub(crate) fn harmless(row: Row) -> Option<Host> {
    match row {
        Row::UnknownId => Some(Host::with("--unknown-id --duplicate")),
        Row::JunkInvalidUtf8Oversize => Some(Host::with(format!("--junk --oversize {OVERSIZE}"))),
        Row::FloodsStderr => Some(Host::with("--stderr-flood 20000")),
        Row::IgnoresShutdown => Some(Host::with("--ignore-shutdown")),
        _ => None,
    }
}

/// A host that refuses `method` with each failClass, with the class and the one-shot exit code.
pub(crate) fn refusing(method: &str) -> impl Iterator<Item = (Host, &'static str, i32)> + '_ {
    CLASSES
        .iter()
        .map(move |&(class, code)| (Host::with(format!("--error {method}={class}")), class, code))
}

/// The host of the unsupported-protocol row, and the cause every front end must name.
pub(crate) const UNSUPPORTED_FLAGS: &str = "--outer-protocol asp-outer/2.0";
pub(crate) const UNSUPPORTED: &str = "unsupported outerProtocol \"asp-outer/2.0\"";

/// A host whose `host/evaluateChangeset` answers with the bent decision (`bent/evaluate.json`).
pub(crate) fn bent_evaluate() -> Host {
    let file = bent("evaluate.json").display().to_string();
    Host::with(format!("--evaluate {}", shlex::try_quote(&file).unwrap()))
}

/// A git repository with one commit, `src/api.ts` (the file of the fixture's finding) as a new file,
/// and git told to ignore what the tests write there (the host's record, the first-start gate).
pub(crate) fn workspace() -> Scratch {
    let scratch = Scratch::git_repo();
    std::fs::write(
        scratch.path().join(".git/info/exclude"),
        format!("host-record.jsonl\n{FIRST_GATE}/\nfixtures/\nout.sarif\n"),
    )
    .unwrap();
    std::fs::create_dir_all(scratch.path().join("src")).unwrap();
    std::fs::write(scratch.path().join("src/api.ts"), crate::lsp::api_ts()).unwrap();
    scratch
}

/// A fixture of `tests/fixtures/asp/bent/`, as an absolute path.
pub(crate) fn bent(name: &str) -> PathBuf {
    fixtures().join("asp/bent").join(name)
}

/// The `receipt.receiptId` of a fixture of `tests/fixtures/asp/`.
pub(crate) fn fixture_receipt(path: &str) -> String {
    let text = std::fs::read_to_string(fixtures().join("asp").join(path)).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["result"]["receipt"]["receiptId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// No panic and everything `wanted` on the bridge's stderr.
pub(crate) fn assert_stderr(stderr: &str, wanted: &[&str]) {
    assert!(
        !stderr.contains("panicked"),
        "the bridge panicked:\n{stderr}"
    );
    for line in wanted {
        assert!(
            stderr.contains(line),
            "missing {line:?} on stderr:\n{stderr}"
        );
    }
}

/// Stderr lines that a row expects from the bridge, whatever the front end.
pub(crate) fn logged(row: Row) -> Vec<&'static str> {
    match row {
        Row::UnknownId => STRIKES_LOGGED.to_vec(),
        Row::JunkInvalidUtf8Oversize => JUNK_LOGGED.to_vec(),
        Row::IgnoresShutdown => KILL_LOGGED.to_vec(),
        _ => Vec::new(),
    }
}

/// One test of a row in one front end.
macro_rules! cell {
    ($front:ident, $run:path, $row:ident) => {
        #[test]
        fn $front() {
            $run(super::Row::$row);
        }
    };
}

/// One module per row, one test per front end.
macro_rules! matrix {
    ($($name:ident => $row:ident),+ $(,)?) => {
        $(
            mod $name {
                cell!(status, super::one_shot::status, $row);
                cell!(sarif, super::one_shot::sarif, $row);
                cell!(mcp, super::mcp::cell, $row);
                cell!(lsp, super::lsp::cell, $row);
            }
        )+
    };
}

matrix! {
    crash_before_first_answer => CrashBeforeFirstAnswer,
    crash_mid_request => CrashMidRequest,
    crash_between_requests => CrashBetweenRequests,
    hangs => Hangs,
    answers_after_the_deadline => AnswersAfterTheDeadline,
    unknown_id => UnknownId,
    junk_invalid_utf8_oversize => JunkInvalidUtf8Oversize,
    floods_stderr => FloodsStderr,
    closes_stdout_keeps_running => ClosesStdoutKeepsRunning,
    ignores_shutdown => IgnoresShutdown,
    refuses_with_each_fail_class => RefusesWithEachFailClass,
    unsupported_outer_protocol => UnsupportedOuterProtocol,
    bends_the_schema => BendsTheSchema,
}
