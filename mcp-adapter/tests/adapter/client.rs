//! The client side of the adapter tests: an rmcp client talking to `mcp_adapter::serve` over an
//! in-memory duplex, in either MCP era, recording progress notifications.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ProgressNotificationParam, ProtocolVersion, Tool,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceError};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::fake_host::{FakeHost, Script};

/// The two MCP eras rmcp 3.11 serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Era {
    /// `initialize` handshake, protocol 2025-11-25.
    Legacy,
    /// `server/discover` and per-request `_meta`, protocol 2026-07-28.
    Modern,
}

pub(crate) const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

/// Sends every progress notification it receives to the test.
pub(crate) struct Recorder {
    progress: mpsc::UnboundedSender<ProgressNotificationParam>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params);
    }
}

/// One MCP session against the adapter.
pub(crate) struct Session {
    pub(crate) client: RunningService<RoleClient, Recorder>,
    pub(crate) progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
    server: JoinHandle<Result<(), mcp_adapter::Error>>,
}

/// Starts the adapter for `repo` on `host` and connects a client in `era`.
pub(crate) async fn open(host: Arc<FakeHost>, repo: &Path, era: Era) -> Session {
    open_with_budget(host, repo, era, mcp_adapter::DEFAULT_BUDGET_BYTES).await
}

/// [`open`] on a well host (every call answered with its fixture): the host, to see what it was
/// asked, and the session.
pub(crate) async fn open_well(repo: &Path, era: Era) -> (Arc<FakeHost>, Session) {
    let host = FakeHost::new(Script::default());
    (host.clone(), open(host, repo, era).await)
}

pub(crate) async fn open_with_budget(
    host: Arc<FakeHost>,
    repo: &Path,
    era: Era,
    budget: usize,
) -> Session {
    let (server_side, client_side) = tokio::io::duplex(1 << 20);
    let repo = repo.to_path_buf();
    let server =
        tokio::spawn(async move { mcp_adapter::serve(host, &repo, budget, server_side).await });
    let (sender, progress) = mpsc::unbounded_channel();
    let recorder = Recorder { progress: sender };
    let lifecycle = match era {
        Era::Legacy => ClientLifecycleMode::Initialize,
        Era::Modern => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    };
    let client = recorder
        .serve_with_lifecycle(client_side, lifecycle)
        .await
        .expect("client connects");
    Session {
        client,
        progress,
        server,
    }
}

impl Session {
    pub(crate) async fn tools(&self) -> Vec<Tool> {
        self.client.list_all_tools().await.expect("tools/list")
    }

    /// Calls `tool` with `arguments` (a JSON object); protocol errors are returned as `Err`.
    pub(crate) async fn try_call(
        &self,
        tool: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ServiceError> {
        self.client.call_tool(params(tool, arguments)).await
    }

    pub(crate) async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        self.try_call(tool, arguments).await.expect("tools/call")
    }

    /// The next progress notification, waiting for it (at most 5 s).
    pub(crate) async fn next_progress(&mut self) -> ProgressNotificationParam {
        tokio::time::timeout(Duration::from_secs(5), self.progress.recv())
            .await
            .expect("a progress notification within 5 s")
            .expect("progress channel open")
    }

    /// Ends the session as a client that goes away does, and waits for the server to finish.
    pub(crate) async fn close(self) -> Result<(), mcp_adapter::Error> {
        let _ = self.client.cancel().await;
        tokio::time::timeout(Duration::from_secs(10), self.server)
            .await
            .expect("the server ends once the client is gone")
            .expect("server task")
    }
}

fn params(tool: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)
}

/// The structured content of a result, which every result of these tools has.
pub(crate) fn content(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .expect("structuredContent")
}
