//! The LSP cells of the fault matrix: `asp-bridge lsp` over its stdio with `Content-Length` frames,
//! a client that pulls diagnostics. A failed evaluation is published as an Information notice
//! (`not-run/<class>`) and said once with `window/showMessage`; after a crash the host is restarted
//! and the failed evaluation re-run on its own; a pull after the fault gets the published set.

use serde_json::{Value, json};

use super::session::{Framing, Session};
use super::{
    DEADLINE_MS, Host, LATE_LOGGED, LATE_MS, Row, UNSUPPORTED, UNSUPPORTED_FLAGS, assert_stderr,
    logged, workspace,
};
use crate::support::Scratch;

#[derive(Clone, Debug)]
enum Step {
    /// `didOpen` of `src/api.ts`, version 1.
    Open,
    /// `didSave` of it: evaluate again.
    Save,
    /// The next publish holds the host's finding and no notice.
    Findings,
    /// The next publish starts with the notice `not-run/<class>` naming this cause.
    Failed(&'static str, String),
    /// The next `window/showMessage` contains this text.
    Shown(String),
    /// Wait until the bridge logs this line.
    AwaitStderr(&'static str),
    /// The next publish is the bent decision: an `incomplete` notice and both findings.
    Bent,
}

struct Case {
    host: Host,
    args: Vec<String>,
    steps: Vec<Step>,
}

fn case(host: Host, args: &[String], steps: Vec<Step>) -> Case {
    Case {
        host,
        args: args.to_vec(),
        steps,
    }
}

fn failed(class: &'static str, cause: impl Into<String>) -> Step {
    Step::Failed(class, cause.into())
}

fn shown(class: &str) -> Step {
    Step::Shown(format!("the ASP host check did not run ({class})"))
}

/// A crash the bridge recovers from, after the client opened the file and `first` happened: the
/// notice and the message, then the finding after the restart.
fn recovers(flags: &str, first: &[Step], cause: &'static str) -> Vec<Case> {
    let steps = [
        &[Step::Open],
        first,
        &[failed("health", cause), shown("health"), Step::Findings],
    ];
    vec![case(Host::first_only(flags), &[], steps.concat())]
}

fn cases(row: Row) -> Vec<Case> {
    let timeout = ["--timeout-ms".to_owned(), DEADLINE_MS.to_string()];
    let within = format!("host did not answer host/evaluateChangeset within {DEADLINE_MS} ms");
    if let Some(host) = super::harmless(row) {
        return vec![case(host, &[], vec![Step::Open, Step::Findings])];
    }
    match row {
        Row::CrashBeforeFirstAnswer => {
            recovers("--crash-on host/status", &[], "crashing on host/status")
        }
        Row::CrashMidRequest => recovers(
            "--crash-on host/evaluateChangeset",
            &[],
            "crashing on host/evaluateChangeset",
        ),
        // Handshake, status and the first evaluation answered; the host dies on the next request.
        Row::CrashBetweenRequests => recovers(
            "--crash-after 3",
            &[Step::Findings, Step::Save],
            "host exited with status 3",
        ),
        // A hung host is not a crashed one: every evaluation says so, the server goes on.
        Row::Hangs => vec![case(
            Host::with("--hang-on host/evaluateChangeset"),
            &timeout,
            vec![
                Step::Open,
                failed("health", within.clone()),
                shown("health"),
                Step::Save,
                failed("health", within),
            ],
        )],
        Row::AnswersAfterTheDeadline => vec![case(
            Host::with(format!("--delay-ms host/evaluateChangeset={LATE_MS}")),
            &timeout,
            vec![
                Step::Open,
                failed("health", within),
                shown("health"),
                Step::AwaitStderr(LATE_LOGGED),
            ],
        )],
        Row::ClosesStdoutKeepsRunning => recovers(
            "--close-stdout-on host/evaluateChangeset",
            &[],
            "host closed its stdout but is still running",
        ),
        Row::RefusesWithEachFailClass => super::refusing("host/evaluateChangeset")
            .map(|(host, class, _)| {
                let cause = format!("fake host refuses: {class}");
                case(
                    host,
                    &[],
                    vec![Step::Open, failed(class, cause), shown(class)],
                )
            })
            .collect(),
        // The contract failure is final: a later evaluation says the same, not "health".
        Row::UnsupportedOuterProtocol => vec![case(
            Host::with(UNSUPPORTED_FLAGS),
            &[],
            vec![
                Step::Open,
                failed("contract", UNSUPPORTED),
                shown("contract"),
                Step::Save,
                failed("contract", UNSUPPORTED),
            ],
        )],
        Row::BendsTheSchema => vec![case(
            super::bent_evaluate(),
            &[],
            vec![
                Step::Open,
                Step::Bent,
                Step::Shown("the ASP host check is incomplete (decision: escalate)".into()),
            ],
        )],
        row => unreachable!("{row:?} is harmless"),
    }
}

/// The client's view of one session: where it is in the publishes and messages it has read.
struct Client {
    session: Session,
    uri: String,
    publishes: usize,
    shows: usize,
    /// The last set of diagnostics published for the document.
    last: Option<Value>,
}

impl Client {
    fn start(scratch: &Scratch, host: &Host, extra: &[String]) -> Client {
        let mut args = vec![
            "lsp".to_owned(),
            "--debounce-ms".to_owned(),
            "0".to_owned(),
            "--restart-delay-ms".to_owned(),
            "0".to_owned(),
            "--host-command".to_owned(),
            host.command(scratch),
        ];
        args.extend_from_slice(extra);
        let mut session = Session::start(scratch, &args, Framing::Headers);
        let root = scratch.path().canonicalize().unwrap();
        let params = json!({
            "processId": null,
            "rootUri": format!("file://{}", root.display()),
            "capabilities": {"textDocument": {"diagnostic": {}}},
        });
        let init = session.request("initialize", params);
        assert!(init.get("result").is_some(), "{init}");
        session.notify("initialized", json!({}));
        Client {
            session,
            uri: format!("file://{}/src/api.ts", root.display()),
            publishes: 0,
            shows: 0,
            last: None,
        }
    }

    /// The diagnostics of the next publish for the document.
    fn published(&mut self) -> Vec<Value> {
        let uri = self.uri.clone();
        let frame = self.session.next_frame(
            &mut self.publishes,
            "textDocument/publishDiagnostics",
            |f| f["method"] == "textDocument/publishDiagnostics" && f["params"]["uri"] == uri,
        );
        assert_eq!(frame["params"]["version"], 1, "{frame}");
        self.last = Some(frame["params"]["diagnostics"].clone());
        frame["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn run(&mut self, row: Row, step: &Step) {
        match step {
            Step::Open => {
                let document = json!({"uri": self.uri, "languageId": "typescript", "version": 1,
                                      "text": crate::lsp::api_ts()});
                self.session
                    .notify("textDocument/didOpen", json!({"textDocument": document}));
            }
            Step::Save => self.session.notify(
                "textDocument/didSave",
                json!({"textDocument": {"uri": self.uri}}),
            ),
            Step::Findings => {
                let items = self.published();
                assert!(
                    items.iter().all(|d| d["source"] != "asp-bridge"),
                    "{row:?}: no notice once the check ran: {items:#?}"
                );
                assert_finding(&items);
            }
            Step::Failed(class, cause) => {
                let items = self.published();
                let notice = &items[0];
                assert_eq!(notice["source"], "asp-bridge", "{row:?}: {items:#?}");
                assert_eq!(notice["severity"], 3, "an Information notice");
                assert_eq!(notice["code"], format!("not-run/{class}"), "{notice:#}");
                assert_eq!(notice["data"]["failClass"], *class);
                let message = notice["message"].as_str().unwrap();
                assert!(
                    message.contains(cause.as_str()),
                    "{row:?}: expected {cause:?} in {message:?}"
                );
            }
            Step::Shown(text) => {
                let frame = self
                    .session
                    .next_frame(&mut self.shows, "window/showMessage", |f| {
                        f["method"] == "window/showMessage"
                    });
                let message = frame["params"]["message"].as_str().unwrap();
                assert!(message.contains(text.as_str()), "{row:?}: {message:?}");
            }
            Step::AwaitStderr(line) => self.session.await_stderr(line),
            Step::Bent => {
                let items = self.published();
                assert_eq!(items.len(), 3, "a notice and two findings: {items:#?}");
                assert_eq!(items[0]["code"], "incomplete", "{:#}", items[0]);
                assert_eq!(items[0]["severity"], 3);
                let message = items[0]["message"].as_str().unwrap();
                assert!(message.contains("decision: escalate"), "{message}");
                assert!(message.contains("sentinel"), "{message}");
                assert_finding(&items);
                let secret = items.iter().find(|d| d["code"] == "lattice/secrets");
                assert_eq!(secret.unwrap()["severity"], 2, "unknown severity: warning");
                assert!(items.iter().any(|d| d["code"] == "lattice/style"));
            }
        }
    }

    /// Still serving: a pull gets the set last published; then `shutdown` and `exit`.
    fn finish(mut self, row: Row, scratch: &Scratch) {
        let pulled = self.session.request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": self.uri}}),
        );
        assert_eq!(pulled["result"]["kind"], "full", "{pulled}");
        if let Some(last) = &self.last {
            assert_eq!(&pulled["result"]["items"], last, "{row:?}");
        }
        let shutdown = self.session.request("shutdown", Value::Null);
        assert!(shutdown.get("error").is_none(), "{shutdown}");
        self.session.notify("exit", Value::Null);
        let ended = self.session.wait();
        assert_eq!(ended.code, Some(0), "{row:?}: {}", ended.stderr);
        ended.assert_answered_once();
        assert_stderr(&ended.stderr, &logged(row));
        scratch.assert_no_orphans();
    }
}

/// The fixture's finding, where the host put it.
fn assert_finding(items: &[Value]) {
    let finding = items
        .iter()
        .find(|d| d["code"] == "lattice/secrets")
        .unwrap_or_else(|| panic!("the host's finding: {items:#?}"));
    crate::lsp::assert_at_the_fixture_finding(finding);
}

pub(super) fn cell(row: Row) {
    for case in cases(row) {
        let scratch = workspace();
        let mut client = Client::start(&scratch, &case.host, &case.args);
        for step in &case.steps {
            client.run(row, step);
        }
        client.finish(row, &scratch);
    }
}
