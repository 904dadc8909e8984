//! A scripted ASP host running in-process: the server reaches it through [`HostSource`] over a
//! duplex, supervised by bridge-core's [`Supervisor`] (which restarts it after a crash), the test
//! decides each `host/evaluateChangeset` answer (now, later, or a crash) and sees every request it
//! got.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_core::host::{HostLaunch, Launch, StartFailure};
use bridge_core::source::BoxFuture;
use bridge_core::{ClientConfig, HostClient, HostSource, RestartPolicy, Supervisor};
use lsp_adapter::HostFactory;
use rpc_peer::{ExitStatus, Peer};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

/// How the host answers one `host/evaluateChangeset`.
pub(crate) enum Answer {
    /// This decision, at once.
    Decision(Value),
    /// This decision once the test sends on the other end of the channel (or drops it).
    Held(oneshot::Receiver<()>, Value),
    /// `$/progress` values with the request id as token, then the decision.
    WithProgress(Vec<Value>, Value),
    /// The host dies without answering.
    Crash,
}

#[derive(Default)]
struct Inner {
    plan: Mutex<VecDeque<Answer>>,
    fallback: Mutex<Option<Value>>,
    down: AtomicBool,
    evaluations: Mutex<Vec<Value>>,
    evaluated: watch::Sender<usize>,
    shutdowns: AtomicU64,
}

/// The test's handle on the host; clones share it.
#[derive(Clone)]
pub(crate) struct TestHost {
    inner: Arc<Inner>,
    supervisor: Arc<Supervisor<TestLaunch>>,
}

impl TestHost {
    /// A host whose evaluations answer `decision` unless planned otherwise.
    pub(crate) fn new(decision: Value) -> TestHost {
        let inner = Arc::new(Inner::default());
        *inner.fallback.lock().unwrap() = Some(decision);
        // Quick restarts, and a test host held down is never given up on.
        let policy = RestartPolicy {
            initial_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(20),
            max_failures: u32::MAX,
            ..RestartPolicy::default()
        };
        let supervisor = Supervisor::new(TestLaunch(inner.clone()), policy);
        TestHost {
            inner,
            supervisor: Arc::new(supervisor),
        }
    }

    /// The answer to the next evaluation not yet planned for.
    pub(crate) fn plan(&self, answer: Answer) {
        self.inner.plan.lock().unwrap().push_back(answer);
    }

    /// While down, the host cannot be started: its starts fail with a health error.
    pub(crate) fn set_down(&self, down: bool) {
        self.inner.down.store(down, Ordering::SeqCst);
    }

    /// The params of every `host/evaluateChangeset` received so far.
    pub(crate) fn evaluations(&self) -> Vec<Value> {
        self.inner.evaluations.lock().unwrap().clone()
    }

    /// Waits until the host has received `n` evaluations.
    pub(crate) async fn wait_evaluations(&self, n: usize) {
        let mut seen = self.inner.evaluated.subscribe();
        seen.wait_for(|count| *count >= n).await.unwrap();
    }

    pub(crate) fn starts(&self) -> u64 {
        *self.supervisor.starts().borrow()
    }

    pub(crate) fn shutdowns(&self) -> u64 {
        self.inner.shutdowns.load(Ordering::SeqCst)
    }

    pub(crate) fn factory(&self) -> HostFactory {
        let host = self.clone();
        Box::new(move |_root| {
            let source: Arc<dyn HostSource> = Arc::new(host);
            Ok(source)
        })
    }
}

/// How the supervisor starts the in-process host.
struct TestLaunch(Arc<Inner>);

impl Launch for TestLaunch {
    type Process = HostClient;
    type Client = HostClient;
    type Status = ();
    type Error = bridge_core::Error;

    fn launch(&self) -> BoxFuture<'static, bridge_core::Result<(HostClient, ())>> {
        let inner = self.0.clone();
        Box::pin(async move {
            if inner.down.load(Ordering::SeqCst) {
                return Err(bridge_core::Error::Unavailable(
                    "the test host is down".into(),
                ));
            }
            let (bridge_end, host_end) = tokio::io::duplex(1 << 20);
            let (reader, writer) = tokio::io::split(bridge_end);
            let probe: bridge_core::host::ExitProbe =
                Box::new(|| Box::pin(async { (ExitStatus::Unknown, "test host died".to_owned()) }));
            let client = HostClient::connect(
                BufReader::new(reader),
                writer,
                ClientConfig::default(),
                probe,
            );
            tokio::spawn(serve(inner, host_end));
            Ok((client, ()))
        })
    }

    fn client(process: &HostClient) -> HostClient {
        process.clone()
    }

    fn peer(process: &HostClient) -> &Peer {
        process.peer()
    }

    fn shutdown(process: HostClient) -> BoxFuture<'static, ExitStatus> {
        Box::pin(async move {
            process.close_input();
            ExitStatus::Unknown
        })
    }

    fn start_failure(error: &bridge_core::Error) -> StartFailure {
        HostLaunch::start_failure(error)
    }
}

impl HostSource for TestHost {
    fn client(&self) -> BoxFuture<'_, bridge_core::Result<HostClient>> {
        Box::pin(self.supervisor.client())
    }

    fn starts(&self) -> watch::Receiver<u64> {
        self.supervisor.starts()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.inner.shutdowns.fetch_add(1, Ordering::SeqCst);
            self.supervisor.shutdown().await;
        })
    }
}

/// The host's side of one connection: reads requests, answers them through a writer task.
async fn serve(inner: Arc<Inner>, end: tokio::io::DuplexStream) {
    let (reader, mut writer) = tokio::io::split(end);
    let (out, mut frames) = mpsc::unbounded_channel::<Value>();
    let write = tokio::spawn(async move {
        while let Some(frame) = frames.recv().await {
            let mut line = serde_json::to_vec(&frame).unwrap();
            line.push(b'\n');
            if writer.write_all(&line).await.is_err() {
                return;
            }
        }
    });
    let mut lines = BufReader::new(reader).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (request.get("id").cloned(), request["method"].as_str())
        else {
            continue;
        };
        let reply = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        match method {
            "host/status" => {
                let _ = out.send(reply(crate::support::fixture("outer/status.response.json")));
            }
            "shutdown" => {
                let _ = out.send(reply(Value::Null));
            }
            "host/evaluateChangeset" => {
                let answer = inner.plan.lock().unwrap().pop_front();
                let answer = answer.unwrap_or_else(|| {
                    Answer::Decision(inner.fallback.lock().unwrap().clone().unwrap_or_default())
                });
                inner
                    .evaluations
                    .lock()
                    .unwrap()
                    .push(request["params"].clone());
                inner.evaluated.send_modify(|n| *n += 1);
                match answer {
                    Answer::Decision(decision) => {
                        let _ = out.send(reply(decision));
                    }
                    Answer::Held(gate, decision) => {
                        let out = out.clone();
                        let answer = reply(decision);
                        tokio::spawn(async move {
                            let _ = gate.await;
                            let _ = out.send(answer);
                        });
                    }
                    Answer::WithProgress(values, decision) => {
                        for value in values {
                            let _ = out.send(json!({"jsonrpc": "2.0", "method": "$/progress",
                                "params": {"token": id, "value": value}}));
                        }
                        let _ = out.send(reply(decision));
                    }
                    Answer::Crash => break,
                }
            }
            _ => {
                let _ = out.send(json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "method not found"}}));
            }
        }
    }
    // Ending both halves closes the bridge's side: every pending request fails at once.
    write.abort();
}
