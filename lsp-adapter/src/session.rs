//! The language server's state and what each message does to it.
//!
//! The document store is a std `Mutex`: every `did*` handler takes it, applies the change and
//! enqueues what to push, without an `.await` in between, so the handlers' concurrency (tower-lsp runs
//! up to four at once) cannot reorder changes. Host work runs in the documents' workers
//! ([`crate::scheduler`]); its results are settled under the same lock. Failures are shown, never
//! hidden: a notice at the top of the document, and one `window/showMessage` per outage. Bringing
//! the host back is the host source's job (its supervisor restarts it by itself); the session
//! re-runs the failed evaluations when [`HostSource::starts`] says a host came up.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bridge_core::{HostSource, Worktree};
use rpc_peer::lock;
use tokio::task::{AbortHandle, JoinHandle};
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{
    DiagnosticOptions, DiagnosticServerCapabilities, DidChangeTextDocumentParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams,
    DocumentDiagnosticParams, DocumentDiagnosticReport, DocumentDiagnosticReportResult,
    FullDocumentDiagnosticReport, InitializeParams, InitializeResult, MessageType,
    RelatedFullDocumentDiagnosticReport, RelatedUnchangedDocumentDiagnosticReport, SaveOptions,
    ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, UnchangedDocumentDiagnosticReport, Uri,
};

use crate::answer::Checked;
use crate::documents::{Doc, Documents, Job};
use crate::error::Error;
use crate::evaluate::{self, Failure};
use crate::from_lsp::{self, Negotiated};
use crate::host::HostFactory;
use crate::outbox::{Outbox, Queue};
use crate::progress;
use crate::scheduler::Worker;
use crate::to_lsp::{self, Render};

/// Timing settings of a session.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub(crate) debounce: Duration,
    pub(crate) timeout: Option<Duration>,
}

/// What `initialize` settled: the workspace, the host, the client's capabilities.
struct Setup {
    worktree: Option<Worktree>,
    host: Result<Arc<dyn HostSource>, Failure>,
    caps: Negotiated,
}

#[derive(Default)]
struct State {
    docs: Documents,
    workers: HashMap<Uri, Worker>,
    /// Set by `shutdown`: no more work starts.
    stopping: bool,
}

/// How a settled evaluation bears on the outage the user was told about.
enum Report {
    Complete,
    Incomplete { key: String, text: String },
    Failed(Failure),
}

pub(crate) struct Session {
    client: Client,
    settings: Settings,
    outbox: Outbox,
    factory: Mutex<Option<HostFactory>>,
    setup: OnceLock<Setup>,
    state: Mutex<State>,
    /// What the user was last told is wrong (`None` once a complete result came back).
    outage: Mutex<Option<String>>,
    shutdown_requested: AtomicBool,
    background: Mutex<Vec<AbortHandle>>,
    host_stop: Mutex<Option<JoinHandle<()>>>,
}

impl Session {
    /// A session whose pushes go to `queue` (see [`crate::outbox::write`]).
    pub(crate) fn new(
        client: Client,
        settings: Settings,
        factory: HostFactory,
        queue: Queue,
    ) -> Arc<Session> {
        Arc::new(Session {
            outbox: Outbox::new(client.clone(), queue),
            client,
            settings,
            factory: Mutex::new(Some(factory)),
            setup: OnceLock::new(),
            state: Mutex::default(),
            outage: Mutex::new(None),
            shutdown_requested: AtomicBool::new(false),
            background: Mutex::default(),
            host_stop: Mutex::new(None),
        })
    }

    fn caps(&self) -> Option<Negotiated> {
        self.setup.get().map(|s| s.caps)
    }

    fn spawn_background(&self, task: JoinHandle<()>) {
        let mut background = lock(&self.background);
        background.retain(|t| !t.is_finished());
        background.push(task.abort_handle());
    }

    // ---- lifecycle -------------------------------------------------------------------------------

    /// Negotiates with the client and builds the host for its workspace (started lazily). The
    /// factory runs on the blocking pool: it may look at the workspace first.
    pub(crate) async fn initialize(
        self: &Arc<Self>,
        params: &InitializeParams,
    ) -> InitializeResult {
        let caps = from_lsp::negotiate(&params.capabilities);
        let root = from_lsp::workspace_root(params);
        let factory = lock(&self.factory).take();
        let host = match (&root, factory) {
            (Ok(root), Some(factory)) => {
                let root = root.clone();
                match tokio::task::spawn_blocking(move || factory(&root)).await {
                    Ok(built) => built.map_err(|e| Failure::from(&e)),
                    Err(e) => Err(Failure::from(&Error::Host(
                        bridge_core::Error::Unavailable(format!("the host was not built: {e}")),
                    ))),
                }
            }
            (Err(e), _) => Err(Failure::from(e)),
            (Ok(_), None) => Err(Failure::from(&Error::Host(
                bridge_core::Error::Unavailable("the host was already set up".into()),
            ))),
        };
        if let Err(failure) = &host {
            tracing::error!(message = %failure.message, "no host for this workspace");
        }
        let setup = Setup {
            worktree: root.ok().map(Worktree::new),
            host,
            caps,
        };
        if let Ok(host) = &setup.host {
            self.watch_starts(host.clone(), caps);
        }
        let _ = self.setup.set(setup);
        InitializeResult {
            capabilities: capabilities(caps),
            server_info: Some(ServerInfo {
                name: "asp-bridge".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        }
    }

    /// Tells the user once when there is no host to ask at all.
    pub(crate) fn initialized(&self) {
        if let Some(Setup {
            host: Err(failure), ..
        }) = self.setup.get()
        {
            self.note_outage(
                format!("failed {}", failure.class),
                to_lsp::failure_message(failure),
            );
        }
    }

    /// `shutdown`: stops all work and starts shutting the host down.
    pub(crate) fn shutdown(&self) {
        self.shutdown_requested.store(true, Ordering::SeqCst);
        self.stop_work();
        self.stop_host();
    }

    /// After `exit` (or the end of input): stops everything and waits for the host to be shut down.
    /// Returns whether `shutdown` came first.
    pub(crate) async fn finish(&self) -> bool {
        self.stop_work();
        self.stop_host();
        for task in lock(&self.background).drain(..) {
            task.abort();
        }
        let stopping = lock(&self.host_stop).take();
        if let Some(stopping) = stopping {
            let _ = stopping.await;
        }
        self.shutdown_requested.load(Ordering::SeqCst)
    }

    fn stop_work(&self) {
        let workers = {
            let mut state = lock(&self.state);
            state.stopping = true;
            std::mem::take(&mut state.workers)
        };
        drop(workers);
    }

    fn stop_host(&self) {
        let mut host_stop = lock(&self.host_stop);
        if host_stop.is_some() {
            return;
        }
        if let Some(Setup { host: Ok(host), .. }) = self.setup.get() {
            let host = host.clone();
            *host_stop = Some(tokio::spawn(async move { host.shutdown().await }));
        }
    }

    // ---- documents -------------------------------------------------------------------------------

    /// Asks for an evaluation of `uri` and wakes (or starts) its worker.
    fn request(self: &Arc<Self>, state: &mut State, uri: &Uri) {
        if state.stopping {
            return;
        }
        if let Some(doc) = state.docs.get_mut(uri) {
            doc.begin();
            self.wake(state, uri);
        }
    }

    pub(crate) fn open(self: &Arc<Self>, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        let Some(root) = self
            .setup
            .get()
            .and_then(|s| s.worktree.as_ref().map(Worktree::root))
        else {
            return;
        };
        let path = match from_lsp::confine(root, &document.uri) {
            Ok(path) => path,
            Err(why) => {
                tracing::debug!(%why, "ignored a document");
                return;
            }
        };
        let mut state = lock(&self.state);
        let doc = Doc::new(document.version, document.text, path);
        state.docs.open(document.uri.clone(), doc);
        self.request(&mut state, &document.uri);
    }

    pub(crate) fn change(&self, params: DidChangeTextDocumentParams) {
        let Some(caps) = self.caps() else { return };
        let uri = params.text_document.uri;
        let mut state = lock(&self.state);
        let Some(doc) = state.docs.get_mut(&uri) else {
            return;
        };
        let mut moved = false;
        for change in &params.content_changes {
            moved |= doc.change(change, caps.encoding);
        }
        doc.version = params.text_document.version;
        if moved {
            self.outbox.publish(&uri, doc.shown(), Some(doc.version));
        }
    }

    pub(crate) fn save(self: &Arc<Self>, params: DidSaveTextDocumentParams) {
        let mut state = lock(&self.state);
        self.request(&mut state, &params.text_document.uri);
    }

    pub(crate) fn close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let mut state = lock(&self.state);
        if state.docs.close(&uri).is_some() {
            state.workers.remove(&uri);
            self.outbox.publish(&uri, std::iter::empty(), None);
        }
    }

    /// `textDocument/diagnostic`: the set last published, or `unchanged` if the client has it.
    pub(crate) fn pull(&self, params: &DocumentDiagnosticParams) -> DocumentDiagnosticReportResult {
        let mut state = lock(&self.state);
        let report = match state.docs.get_mut(&params.text_document.uri) {
            None => full(None, Vec::new()),
            Some(doc) => {
                doc.mark_pulled_early();
                let id = doc.result_id();
                if params.previous_result_id.as_deref() == Some(id.as_str()) {
                    DocumentDiagnosticReport::Unchanged(RelatedUnchangedDocumentDiagnosticReport {
                        related_documents: None,
                        unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport {
                            result_id: id,
                        },
                    })
                } else {
                    full(Some(id), doc.diagnostics())
                }
            }
        };
        DocumentDiagnosticReportResult::Report(report)
    }

    // ---- evaluations -----------------------------------------------------------------------------

    /// Runs evaluation `seq` of `uri` (called by its worker) and settles its result.
    pub(crate) async fn evaluate(self: &Arc<Self>, uri: &Uri, seq: u64) {
        let Some(setup) = self.setup.get() else {
            return;
        };
        let Some(job) = lock(&self.state).docs.get(uri).and_then(|d| d.job(seq)) else {
            return;
        };
        // Host starts seen before this evaluation: a failure settled after a later start is retried.
        let starts = setup.host.as_ref().ok().map(|host| *host.starts().borrow());
        let outcome = match (&setup.host, &setup.worktree) {
            (Ok(host), Some(worktree)) => {
                let progress = setup.caps.progress.then(|| {
                    progress::relay(self.client.clone(), format!("ASP check {}", job.path))
                });
                evaluate::evaluate(
                    &**host,
                    worktree,
                    &job.path,
                    self.settings.timeout,
                    progress,
                )
                .await
                .map_err(|e| Failure::from(&e))
            }
            (Err(failure), _) => Err(failure.clone()),
            (Ok(_), None) => Err(Failure::from(&Error::NoWorkspace)),
        };
        self.settle(uri, seq, &job, setup.caps, outcome, starts);
    }

    fn settle(
        self: &Arc<Self>,
        uri: &Uri,
        seq: u64,
        job: &Job,
        caps: Negotiated,
        outcome: Result<Checked, Failure>,
        starts: Option<u64>,
    ) {
        let render = Render {
            path: &job.path,
            text: &job.text,
            encoding: caps.encoding,
            code_description: caps.code_description,
        };
        let (findings, notice, report) = match outcome {
            Ok(checked) => {
                let decision = &checked.decision;
                let report = if checked.is_incomplete() {
                    Report::Incomplete {
                        key: to_lsp::incomplete_key(decision),
                        text: to_lsp::incomplete_message(decision),
                    }
                } else {
                    Report::Complete
                };
                let findings = to_lsp::findings(decision, render);
                let notice = match &checked.left_out {
                    Some(why) => Some(to_lsp::left_out_notice(why)),
                    None => to_lsp::incomplete_notice(&checked),
                };
                (Some(findings), notice, report)
            }
            Err(failure) => (None, None, Report::Failed(failure)),
        };
        {
            let mut state = lock(&self.state);
            let Some(doc) = state.docs.get_mut(uri) else {
                return;
            };
            let (notice, failed) = match &report {
                Report::Failed(failure) => (
                    Some(to_lsp::failure_notice(failure, doc.checked())),
                    failure.is_health(),
                ),
                _ => (notice, false),
            };
            if !doc.settle(seq, findings, notice, failed, caps.encoding) {
                tracing::debug!(uri = uri.as_str(), seq, "dropped a superseded result");
                return;
            }
            self.outbox.publish(uri, doc.shown(), Some(doc.version));
            if doc.take_pulled_early() && caps.pull && caps.refresh {
                self.outbox.refresh();
            }
            // A host came up while this evaluation failed: [`Session::watch_starts`] may have
            // looked for failed documents before this one was marked, so it is re-run now.
            let retry = failed && self.host_started_since(starts) && doc.retry_failed().is_some();
            if retry {
                self.wake(&mut state, uri);
            }
        }
        match report {
            Report::Complete => *lock(&self.outage) = None,
            Report::Incomplete { key, text } => self.note_outage(key, text),
            Report::Failed(failure) => {
                self.note_outage(
                    format!("failed {}", failure.class),
                    to_lsp::failure_message(&failure),
                );
            }
        }
    }

    /// Shows `text` unless the user was already told about this outage.
    fn note_outage(&self, key: String, text: String) {
        let mut outage = lock(&self.outage);
        if outage.as_deref() != Some(key.as_str()) {
            *outage = Some(key);
            self.outbox.show(MessageType::WARNING, text);
        }
    }

    /// Whether the host started since `seen` (its start count then).
    fn host_started_since(&self, seen: Option<u64>) -> bool {
        match (self.setup.get(), seen) {
            (Some(Setup { host: Ok(host), .. }), Some(seen)) => *host.starts().borrow() > seen,
            _ => false,
        }
    }

    /// On every host start: re-runs the evaluations that failed for want of it and, after a restart,
    /// asks a pulling client to pull again.
    fn watch_starts(self: &Arc<Self>, host: Arc<dyn HostSource>, caps: Negotiated) {
        let session = Arc::downgrade(self);
        let mut starts = host.starts();
        self.spawn_background(tokio::spawn(async move {
            while starts.changed().await.is_ok() {
                let count = *starts.borrow_and_update();
                let Some(session) = session.upgrade() else {
                    return;
                };
                if count > 1 && caps.pull && caps.refresh {
                    session.outbox.refresh();
                }
                let mut state = lock(&session.state);
                let failed: Vec<Uri> = state
                    .docs
                    .iter_mut()
                    .filter_map(|(uri, doc)| doc.retry_failed().map(|_| uri.clone()))
                    .collect();
                for uri in failed {
                    session.wake(&mut state, &uri);
                }
            }
        }));
    }

    /// Hands the newest evaluation asked for `uri` to its worker, starting one if needed.
    fn wake(self: &Arc<Self>, state: &mut State, uri: &Uri) {
        if state.stopping {
            return;
        }
        let Some(seq) = state.docs.get(uri).map(Doc::trigger) else {
            return;
        };
        match state.workers.get(uri) {
            Some(worker) => worker.request(seq),
            None => {
                let (session, document) = (self.clone(), uri.clone());
                let evaluate = move |seq| {
                    let (session, document) = (session.clone(), document.clone());
                    async move { session.evaluate(&document, seq).await }
                };
                let worker = Worker::start(evaluate, seq, self.settings.debounce);
                state.workers.insert(uri.clone(), worker);
            }
        }
    }
}

fn full(
    result_id: Option<String>,
    items: Vec<tower_lsp_server::ls_types::Diagnostic>,
) -> DocumentDiagnosticReport {
    DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
        related_documents: None,
        full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id, items },
    })
}

/// What the server offers: incremental sync with save notifications, the negotiated position
/// encoding, and pull diagnostics only for a client that pulls.
fn capabilities(caps: Negotiated) -> ServerCapabilities {
    let sync = TextDocumentSyncOptions {
        open_close: Some(true),
        change: Some(TextDocumentSyncKind::INCREMENTAL),
        will_save: None,
        will_save_wait_until: None,
        save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
            include_text: Some(false),
        })),
    };
    ServerCapabilities {
        position_encoding: Some(caps.encoding_kind()),
        text_document_sync: Some(TextDocumentSyncCapability::Options(sync)),
        diagnostic_provider: caps.pull.then(|| {
            DiagnosticServerCapabilities::Options(DiagnosticOptions {
                identifier: Some("asp".into()),
                inter_file_dependencies: false,
                workspace_diagnostics: false,
                work_done_progress_options: Default::default(),
            })
        }),
        ..ServerCapabilities::default()
    }
}
