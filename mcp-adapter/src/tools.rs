//! The tools: the contract each one fulfils ([`AspTool`]), the runner every call goes through, and
//! the router the server dispatches with.
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

mod authority_status;
mod capabilities;
pub(crate) mod diagnostics;
pub(crate) mod inspect;
mod offer;
pub(crate) mod status;

use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_core::{CallOptions, HostClient, HostSource, Worktree};
use rmcp::RoleServer;
use rmcp::handler::server::tool::{
    ToolCallContext, ToolRoute, ToolRouter, schema_for_input, schema_for_output,
};
use rmcp::model::{
    CallToolResult, JsonObject, ProgressNotificationParam, ProgressToken, Tool, ToolAnnotations,
};
use rmcp::schemars;
use rmcp::schemars::JsonSchema;
use rmcp::service::{Peer, RequestContext};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::watch;

use crate::error::Error;
use crate::policy::{self, McpPolicy};
use crate::to_mcp::{self, Advisory, NotRun, Snapshot};

/// The tools, in the order `tools/list` returns them (sorted by name).
pub const TOOL_NAMES: [&str; 5] = [
    authority_status::AspAuthorityStatus::NAME,
    capabilities::AspCapabilities::NAME,
    diagnostics::AspDiagnostics::NAME,
    inspect::AspInspect::NAME,
    status::AspStatus::NAME,
];

/// The tool listed only when the host offers inspect.
pub(crate) const INSPECT: &str = inspect::AspInspect::NAME;

/// Default size limit of one result's `structuredContent`, in bytes of JSON. The text block mirrors
/// it (or, for `asp_diagnostics`, is a shorter summary), so a whole result stays under 48 KiB: far below the ~25k-token cap agents put on a result.
pub const DEFAULT_BUDGET_BYTES: usize = 24 * 1024;

/// Largest `arguments` object accepted, in bytes of JSON.
const MAX_ARGUMENT_BYTES: usize = 64 * 1024;

/// What every call can reach: the host, the workspace, the budget, the diagnostics pages.
pub(crate) struct State {
    pub(crate) host: Arc<dyn HostSource>,
    /// The canonical workspace root.
    pub(crate) repo: PathBuf,
    /// The working tree `asp_diagnostics` evaluates (rooted at `repo`).
    pub(crate) worktree: Worktree,
    pub(crate) budget: usize,
    pub(crate) pages: diagnostics::Pages,
    /// The host client the last call got, to reach a host that is up before the policy is read.
    live: Mutex<Option<HostClient>>,
    /// Whether the host offers inspect, and whether `asp_inspect` was listed.
    offer: Mutex<offer::Offer>,
}

impl State {
    pub(crate) fn new(host: Arc<dyn HostSource>, repo: PathBuf, budget: usize) -> State {
        State {
            host,
            worktree: Worktree::new(repo.clone()),
            repo,
            budget,
            pages: diagnostics::Pages::default(),
            live: Mutex::new(None),
            offer: Mutex::default(),
        }
    }

    /// The client of the host the last call reached, if that host is still up and answering in
    /// time (else the supervisor decides what to do, after the policy is read).
    fn live(&self) -> Option<HostClient> {
        let live = rpc_peer::lock(&self.live);
        live.as_ref()
            .filter(|c| !c.is_closed() && c.missed_deadlines_in_a_row() == 0)
            .cloned()
    }
}

/// One tool: its name, description, arguments and output, and what it does.
pub(crate) trait AspTool: 'static {
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
        call: Call,
        args: Self::Args,
    ) -> impl Future<Output = Result<Self::Output, Error>> + Send;
}

/// The arguments of a tool that takes none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Args")]
pub(crate) struct NoArgs {}

/// What every tool's answer opens with: how to read it (advisory, untrusted text), what did not
/// run, the snapshot and receipt it belongs to, and whether the output budget or the page cut it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Caveats {
    #[serde(flatten)]
    pub(crate) advisory: Advisory,
    /// Everything that did not run or ran degraded, and why. Missing coverage is not a clean result.
    pub(crate) degraded: Vec<NotRun>,
    /// The snapshot the answer is valid for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) valid_as_of: Option<Snapshot>,
    /// The host's receipt for this answer.
    pub(crate) receipt_id: String,
    /// Whether part of the answer was left out to fit the output budget or the page: the
    /// `omitted…` count or `nextCursor` says what.
    pub(crate) truncated: bool,
}

impl Caveats {
    /// The caveats of an answer that is whole so far.
    pub(crate) fn new(
        degraded: Vec<NotRun>,
        valid_as_of: Option<Snapshot>,
        receipt_id: String,
    ) -> Caveats {
        Caveats {
            advisory: Advisory::new(),
            degraded,
            valid_as_of,
            receipt_id,
            truncated: false,
        }
    }

    /// The caveats of a host's answer to `method` that is whole so far, read from its receipt; a
    /// result without a receipt is no answer (a `contract` error, see [`to_mcp::answered`]).
    pub(crate) fn of_answer(
        method: &str,
        receipt: &asp_wire::proto::Receipt,
        not_run: &[bridge_core::model::NotRun],
    ) -> Result<Caveats, Error> {
        to_mcp::answered(method, receipt)?;
        Ok(Caveats::new(
            to_mcp::not_run(not_run),
            to_mcp::snapshot_value(receipt.raw.get("validAsOf")),
            to_mcp::id(&receipt.receipt_id),
        ))
    }

    /// Drops the tail of `list`, the list that makes the answer large, to about `keep` (0..1) of its
    /// length, adding what was dropped to `omitted` and marking the answer truncated; false when
    /// there is nothing left to drop.
    pub(crate) fn cut<T>(&mut self, list: &mut Vec<T>, omitted: &mut usize, keep: f64) -> bool {
        if list.is_empty() {
            return false;
        }
        let kept = shrunk_len(list.len(), keep);
        *omitted += list.len() - kept;
        list.truncate(kept);
        self.truncated = true;
        true
    }
}

/// An output that can give up list items to fit the byte budget.
pub(crate) trait Budgeted {
    /// Keeps about `keep` (0..1) of the items of the list that makes the output large, marks the
    /// output truncated, and says whether anything was dropped.
    fn shrink(&mut self, keep: f64) -> bool;

    /// Whether the JSON text of the output keeps its fields in their declared order (a summary line
    /// first) rather than sorted; it is serialised from the output instead of the value, at the
    /// same cost.
    const ORDERED_TEXT: bool = false;

    /// The result's text block, given the JSON of `structuredContent` as measured: by default that
    /// JSON; an output whose JSON reads poorly gives a compact summary instead, which must still
    /// say every caveat (advisory, degraded coverage, what was not checked, truncation and how to
    /// continue).
    fn text(&self, json: String) -> String {
        json
    }
}

/// [`Budgeted`] for a tool output whose one long list is the field `$list`, with the count of the
/// items left out in `$omitted`: [`Caveats::cut`] on them.
macro_rules! cut_to_budget {
    ($output:ty, $list:ident, $omitted:ident) => {
        impl $crate::tools::Budgeted for $output {
            fn shrink(&mut self, keep: f64) -> bool {
                self.caveats.cut(&mut self.$list, &mut self.$omitted, keep)
            }
        }
    };
}
use cut_to_budget;

/// How many of `len` items to keep for a `keep` ratio: always at least one fewer.
pub(crate) fn shrunk_len(len: usize, keep: f64) -> usize {
    let target = (len as f64 * keep.clamp(0.0, 1.0) * 0.95).floor() as usize;
    target.min(len.saturating_sub(1))
}

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
        *rpc_peer::lock(&self.state.live) = Some(client.clone());
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

/// The router of all tools, for the server `S`.
pub(crate) fn router<S: Serves>() -> ToolRouter<S> {
    ToolRouter::new()
        .with_route(route::<status::AspStatus, S>())
        .with_route(route::<capabilities::AspCapabilities, S>())
        .with_route(route::<authority_status::AspAuthorityStatus, S>())
        .with_route(route::<inspect::AspInspect, S>())
        .with_route(route::<diagnostics::AspDiagnostics, S>())
}

fn route<T: AspTool, S: Serves>() -> ToolRoute<S> {
    ToolRoute::new_dyn(definition::<T>(), |context: ToolCallContext<'_, S>| {
        let ToolCallContext {
            request_context,
            service,
            arguments,
            ..
        } = context;
        let state = service.state();
        Box::pin(async move { Ok(invoke::<T>(state, arguments, request_context).await.into()) })
    })
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
fn portable(schema: &JsonObject) -> Arc<JsonObject> {
    let mut value = Value::Object(schema.clone());
    drop_nulls(&mut value);
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(schema.clone()),
    }
}

fn drop_nulls(value: &mut Value) {
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

async fn invoke<T: AspTool>(
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
    let tool = async {
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
        let mut output = T::run(call, args).await?;
        fit_with_text(&mut output, budget)
    };
    // A refusal wins over whatever the tool did meanwhile (bad arguments included), and ends it.
    let run = async {
        tokio::pin!(read_policy, tool);
        tokio::select! {
            refused = &mut read_policy => match refused {
                Some(refusal) => Err(Error::Policy(refusal)),
                None => tool.await,
            },
            outcome = &mut tool => match read_policy.await {
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
fn parse<A: DeserializeOwned>(arguments: Option<JsonObject>) -> Result<A, Error> {
    let value = Value::Object(arguments.unwrap_or_default());
    let size = serde_json::to_vec(&value).map_or(usize::MAX, |bytes| bytes.len());
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The router the server dispatches with.
    fn router() -> ToolRouter<crate::server::AspServer> {
        super::router()
    }

    #[test]
    fn every_tool_is_read_only_closed_world_and_has_an_object_output_schema() {
        for tool in router().list_all() {
            let a = tool.annotations.as_ref().expect("annotations");
            assert_eq!(a.read_only_hint, Some(true), "{}", tool.name);
            assert_eq!(a.destructive_hint, Some(false), "{}", tool.name);
            assert_eq!(a.idempotent_hint, Some(true), "{}", tool.name);
            assert_eq!(a.open_world_hint, Some(false), "{}", tool.name);
            let output = tool.output_schema.as_ref().expect("outputSchema");
            assert_eq!(output["type"], "object", "{}", tool.name);
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        }
        let names: Vec<_> = router().list_all().into_iter().map(|t| t.name).collect();
        assert_eq!(names, TOOL_NAMES);
    }

    #[test]
    fn arguments_are_capped_and_checked() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Args {
            #[allow(dead_code)]
            limit: Option<u32>,
        }
        let big: JsonObject =
            serde_json::from_value(json!({"limit": 1, "x": "y".repeat(70_000)})).unwrap();
        let err = parse::<Args>(Some(big)).unwrap_err();
        assert!(err.to_string().contains("limit is 65536"), "{err}");
        let unknown: JsonObject = serde_json::from_value(json!({"limits": 1})).unwrap();
        assert!(
            parse::<Args>(Some(unknown))
                .unwrap_err()
                .to_string()
                .contains("unknown field")
        );
        assert!(parse::<Args>(None).is_ok());
    }

    #[test]
    fn schemas_use_standard_json_schema_only() {
        for tool in router().list_all() {
            let schemas = [
                Value::Object(tool.input_schema.as_ref().clone()),
                Value::Object(tool.output_schema.as_deref().cloned().unwrap_or_default()),
            ];
            for schema in schemas {
                let text = schema.to_string();
                assert!(!text.contains(r#""format":"uint"#), "{}: {text}", tool.name);
                assert!(!text.contains(r#""format":"int"#), "{}: {text}", tool.name);
                assert!(
                    !text.contains(r#""format":"double"#),
                    "{}: {text}",
                    tool.name
                );
            }
        }
        let mut unsigned = json!({"type": "integer", "format": "uint32", "minimum": 1});
        drop_nulls(&mut unsigned);
        assert_eq!(unsigned, json!({"type": "integer", "minimum": 1}));
        let mut count = json!({"type": "integer", "format": "uint"});
        drop_nulls(&mut count);
        assert_eq!(count, json!({"type": "integer", "minimum": 0}));
        let mut date = json!({"type": "string", "format": "date-time"});
        drop_nulls(&mut date);
        assert_eq!(date["format"], "date-time");
    }

    #[test]
    fn schemas_lose_null_only_where_the_property_may_be_left_out() {
        let schema: JsonObject = serde_json::from_value(json!({
            "type": "object",
            "required": ["kept"],
            "properties": {
                "kept": {"type": ["string", "null"]},
                "optional": {"type": ["string", "null"], "default": null},
                "nested": {"anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}], "description": "d"}
            }
        }))
        .unwrap();
        let out = Value::Object(portable(&schema).as_ref().clone());
        assert_eq!(out["properties"]["kept"]["type"], json!(["string", "null"]));
        assert_eq!(out["properties"]["optional"], json!({"type": "string"}));
        assert_eq!(
            out["properties"]["nested"],
            json!({"$ref": "#/$defs/X", "description": "d"})
        );
    }
}
