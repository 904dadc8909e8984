//! The runner every tool call goes through, and the contract each tool fulfils ([`AspTool`]).
//!
//! The runner does, in order: read the repository policy (a disabled adapter refuses every tool),
//! check and parse the arguments (size-capped, unknown fields refused), run the tool while watching
//! for the client's cancellation, fit the output into the byte budget, and turn the outcome into a
//! tool result: `structuredContent` on success, `isError: true` on any failure (`to_mcp::failure`).
//!
//! A tool that only reads the host ([`AspTool::READS_HOST_ONLY`]) does not wait for the policy
//! read (a file read, off the async threads) when the host is already up: its request goes out
//! while the policy is read, and whatever it got is dropped if the policy refuses. Other tools run
//! once the policy allows them, and no host is started before it does.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bridge_core::{CallOptions, HostClient};
use rmcp::RoleServer;
use rmcp::handler::server::tool::{schema_for_input, schema_for_output};
use rmcp::model::{
    CallToolResult, JsonObject, ProgressNotificationParam, ProgressToken, Tool, ToolAnnotations,
};
use rmcp::schemars::{self, JsonSchema};
use rmcp::service::{Peer, RequestContext};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::watch;

use super::caveats::Budgeted;
use super::state::State;
use crate::error::Error;
use crate::policy::{self, McpPolicy};
use crate::to_mcp;

/// Largest `arguments` object accepted, in bytes of JSON.
const MAX_ARGUMENT_BYTES: usize = 64 * 1024;

/// One tool: its name, description, arguments and output, and what it does. A tool is a value that
/// lives as long as its server, so it may keep what its calls share (`asp_diagnostics` keeps its
/// pages).
pub(crate) trait AspTool: Default + Send + Sync + 'static {
    const NAME: &'static str;
    const TITLE: &'static str;
    const DESCRIPTION: &'static str;
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    type Output: Serialize + JsonSchema + Budgeted + Send + 'static;
    /// Whether the tool only sends read-only requests to the host (no working-tree read, no
    /// evaluation): then, when the host is already up, its request goes out while the policy is
    /// read, and the answer is dropped if the policy refuses.
    const READS_HOST_ONLY: bool = false;

    fn run(
        self: Arc<Self>,
        call: Call,
        args: Self::Args,
    ) -> impl Future<Output = Result<Self::Output, Error>> + Send;
}

/// The arguments of a tool that takes none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Args")]
pub(crate) struct NoArgs {}

/// One call in progress: the shared state, the policy it runs under, and where progress goes.
pub(crate) struct Call {
    pub(crate) state: Arc<State>,
    /// The policy, once read: `Err` is the refusal's text.
    policy: watch::Receiver<Option<Result<McpPolicy, String>>>,
    /// [`AspTool::READS_HOST_ONLY`] of the tool.
    reads_host_only: bool,
    progress: Option<Progress>,
}

/// The client's progress token and the way back to it.
struct Progress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl Call {
    /// A client of the live host (started or restarted when due, once the policy allows the call).
    pub(crate) async fn client(&self) -> Result<HostClient, Error> {
        if self.reads_host_only
            && let Some(client) = self.state.live()
        {
            return Ok(client);
        }
        self.policy().await?;
        let client = self.state.host.client().await?;
        self.state.reached(&client);
        Ok(client)
    }

    /// The repository policy the call runs under; `Err` is the refusal.
    pub(crate) async fn policy(&self) -> Result<McpPolicy, Error> {
        let mut policy = self.policy.clone();
        match policy.wait_for(Option::is_some).await.as_deref() {
            Ok(Some(Ok(policy))) => Ok(policy.clone()),
            Ok(Some(Err(refusal))) => Err(Error::Policy(refusal.clone())),
            Ok(None) | Err(_) => Err(Error::Internal("the policy read was abandoned".into())),
        }
    }

    /// Runs one host request started by `start`, forwarding the host's `$/progress` to the client as
    /// MCP progress notifications when it sent a progress token. Every notification is sent before
    /// this returns, so none follows the result.
    pub(crate) async fn with_progress<T, F>(
        &self,
        timeout: Option<Duration>,
        start: impl FnOnce(CallOptions) -> F,
    ) -> Result<T, Error>
    where
        F: Future<Output = bridge_core::Result<T>>,
    {
        let (sender, mut receiver) = rpc_peer::peer::progress_channel();
        let options = CallOptions {
            timeout,
            progress: self.progress.is_some().then_some(sender),
        };
        let answer = start(options);
        let forward = async {
            let Some(progress) = &self.progress else {
                return;
            };
            let mut count = 0u32;
            // Ends when the host client drops the sender: once the request is answered or abandoned.
            while let Some(value) = receiver.recv().await {
                count += 1;
                let param =
                    ProgressNotificationParam::new(progress.token.clone(), f64::from(count))
                        .with_message(to_mcp::progress_message(&value));
                if let Err(error) = progress.peer.notify_progress(param).await {
                    tracing::debug!(%error, "could not forward host progress");
                }
            }
        };
        let (answer, ()) = tokio::join!(answer, forward);
        Ok(answer?)
    }
}

/// The server a tool call comes through: it hands each call the session's state.
pub(crate) trait Serves: Send + Sync + 'static {
    fn state(&self) -> Arc<State>;
}

/// The `tools/list` entry of a tool: read-only, closed-world, idempotent, never destructive.
pub(crate) fn definition<T: AspTool>() -> Tool {
    let input = schema_for_input::<T::Args>().unwrap_or_else(|e| {
        tracing::error!(tool = T::NAME, error = %e, "input schema is not an object");
        rmcp::handler::server::common::schema_for_empty_input()
    });
    Tool::new(T::NAME, T::DESCRIPTION, portable(&input))
        .with_title(T::TITLE)
        .with_raw_output_schema(portable(&output_schema::<T::Output>()))
        .with_annotations(ToolAnnotations::from_raw(
            Some(T::TITLE.to_owned()),
            Some(true),
            Some(false),
            Some(true),
            Some(false),
        ))
}

/// The outputSchema of a tool: its answer or, on a result with `isError: true`, a failure. Clients
/// such as the TypeScript SDK check `structuredContent` against it even on errors.
fn output_schema<O: JsonSchema + 'static>() -> JsonObject {
    let mut defs = JsonObject::new();
    let mut branch = |schema: &JsonObject| {
        let mut schema = schema.clone();
        schema.remove("$schema");
        if let Some(Value::Object(more)) = schema.remove("$defs") {
            defs.extend(more);
        }
        Value::Object(schema)
    };
    let answer = branch(&schema_for_output::<O>());
    let failure = branch(&schema_for_output::<to_mcp::Failure>());
    defs.insert("answer".to_owned(), answer);
    defs.insert("failure".to_owned(), failure);
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "anyOf": [
            {"$ref": "#/$defs/answer", "description": "The host's answer (isError false)."},
            {"$ref": "#/$defs/failure", "description": "No answer (isError true): failClass and cause."}
        ],
        "$defs": defs,
    });
    match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// A schema without the nullable forms some clients reject as unportable: a property that is not
/// required loses its `null` alternative (the tools leave such a property out rather than write
/// `null`), and `"default": null` goes.
pub(super) fn portable(schema: &JsonObject) -> Arc<JsonObject> {
    let mut value = Value::Object(schema.clone());
    drop_nulls(&mut value);
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(schema.clone()),
    }
}

pub(super) fn drop_nulls(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        Value::Object(map) => {
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            standard_format(map);
            let required: Vec<String> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            if let Some(Value::Object(properties)) = map.get_mut("properties") {
                for (name, property) in properties.iter_mut() {
                    if !required.contains(name) {
                        not_null(property);
                    }
                }
            }
            map.values_mut().for_each(drop_nulls);
        }
        _ => {}
    }
}

/// schemars' numeric formats (`uint`, `uint32`, `int64`, `double`…) are no JSON Schema formats, and
/// strict validators warn on each: they go, and an unsigned one becomes `minimum: 0`.
fn standard_format(map: &mut JsonObject) {
    let Some(Value::String(format)) = map.get("format") else {
        return;
    };
    let numeric = ["int", "uint", "float", "double"].iter().any(|prefix| {
        format
            .strip_prefix(prefix)
            .is_some_and(|bits| bits.chars().all(|c| c.is_ascii_digit()))
    });
    if !numeric {
        return;
    }
    if format.starts_with("uint") {
        map.entry("minimum").or_insert(Value::from(0));
    }
    map.remove("format");
}

/// `{"type": ["string", "null"]}` as `{"type": "string"}`, `{"anyOf": [X, {"type": "null"}]}` as X.
fn not_null(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".to_owned(), only);
        }
    }
    let is_null = |s: &Value| s.get("type").is_some_and(|t| t == "null");
    if let Some(Value::Array(options)) = map.get("anyOf")
        && options.len() == 2
        && let Some(other) = options.iter().find(|o| !is_null(o))
        && options.iter().any(is_null)
        && let Value::Object(other) = other.clone()
    {
        map.remove("anyOf");
        for (key, item) in other {
            map.entry(key).or_insert(item);
        }
    }
}

pub(super) async fn invoke<T: AspTool>(
    tool: Arc<T>,
    state: Arc<State>,
    arguments: Option<JsonObject>,
    context: RequestContext<RoleServer>,
) -> CallToolResult {
    let progress = context.meta.get_progress_token().map(|token| Progress {
        peer: context.peer.clone(),
        token,
    });
    let (told, policy) = watch::channel(None);
    let read_policy = async {
        let read = policy::check(&state.worktree).await;
        let refused = read.as_ref().err().map(ToString::to_string);
        told.send_replace(Some(read.map_err(|e| e.to_string())));
        refused
    };
    let run_tool = async {
        let budget = state.budget;
        let call = Call {
            state: state.clone(),
            policy,
            reads_host_only: T::READS_HOST_ONLY,
            progress,
        };
        if !T::READS_HOST_ONLY {
            call.policy().await?;
        }
        let args = parse::<T::Args>(arguments)?;
        let mut output = tool.run(call, args).await?;
        fit_with_text(&mut output, budget)
    };
    // A refusal wins over whatever the tool did meanwhile (bad arguments included), and ends it.
    let run = async {
        tokio::pin!(read_policy, run_tool);
        tokio::select! {
            refused = &mut read_policy => match refused {
                Some(refusal) => Err(Error::Policy(refusal)),
                None => run_tool.await,
            },
            outcome = &mut run_tool => match read_policy.await {
                Some(refusal) => Err(Error::Policy(refusal)),
                None => outcome,
            },
        }
    };
    let outcome = tokio::select! {
        outcome = run => outcome,
        () = context.ct.cancelled() => Err(Error::Cancelled),
    };
    if state.offer_to_recheck() {
        let (state, peer) = (state.clone(), context.peer.clone());
        tokio::spawn(async move { state.recheck_offer(&peer).await });
    }
    match outcome {
        Ok((payload, text)) => to_mcp::success(payload, text),
        Err(error) => {
            tracing::info!(tool = T::NAME, fail_class = %error.fail_class(), %error, "tool failed");
            to_mcp::failure(T::NAME, &error)
        }
    }
}

/// The arguments as `A`, refusing oversized or malformed ones as `input` errors.
pub(super) fn parse<A: DeserializeOwned>(arguments: Option<JsonObject>) -> Result<A, Error> {
    let value = Value::Object(arguments.unwrap_or_default());
    let size = to_mcp::json_len(&value);
    if size > MAX_ARGUMENT_BYTES {
        return Err(Error::Input(format!(
            "the arguments are {size} bytes of JSON; the limit is {MAX_ARGUMENT_BYTES}"
        )));
    }
    serde_json::from_value(value).map_err(|e| {
        Error::Input(format!(
            "invalid arguments: {}",
            to_mcp::text(&e.to_string())
        ))
    })
}

/// The output as JSON within `budget` bytes, shrinking its lists as needed.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn fit<O: Serialize + Budgeted>(output: &mut O, budget: usize) -> Result<Value, Error> {
    fit_with_text(output, budget).map(|(value, _)| value)
}

/// [`fit`], with the result's text block: the JSON text that was measured (so the output is
/// serialised once for both) or what [`Budgeted::text`] makes of it.
fn fit_with_text<O: Serialize + Budgeted>(
    output: &mut O,
    budget: usize,
) -> Result<(Value, String), Error> {
    for _ in 0..64 {
        let value = serde_json::to_value(&*output)
            .map_err(|e| Error::Internal(format!("cannot encode the result: {e}")))?;
        let text = if O::ORDERED_TEXT {
            serde_json::to_string(&*output)
        } else {
            serde_json::to_string(&value)
        }
        .map_err(|e| Error::Internal(format!("cannot encode the result: {e}")))?;
        let size = text.len();
        if size <= budget {
            return Ok((value, output.text(text)));
        }
        if !output.shrink(budget as f64 / size as f64) {
            break;
        }
    }
    Err(Error::Oversize { budget })
}
