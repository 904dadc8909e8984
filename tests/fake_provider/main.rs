//! A scriptable ASP check provider for the embedded host's tests: it speaks `asp/1.0` on stdio,
//! reads the changed files through the host's callbacks, reports `FAKE-ERROR` / `FAKE-WARNING`
//! lines as findings, and misbehaves on request (`--fault`).

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::{Parser, ValueEnum};
use rpc_peer::FailClass;
use rpc_peer::jsonrpc::ErrorObject;
use rpc_peer::peer::{
    self, Answer, CallOptions, Handler, IncomingRequest, PeerConfig, error_object, method_not_found,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Fault {
    None,
    /// Exits during `check/evaluate`.
    Crash,
    /// Exits during `initialize`.
    CrashOnInitialize,
    /// Never answers `check/evaluate`.
    Hang,
    /// Never answers `initialize`.
    HangOnInitialize,
    /// Never answers `shutdown`.
    HangOnShutdown,
    /// An assessment without `validAsOf`.
    Malformed,
    /// `decision: "allow"` at the top of the assessment.
    HostOwned,
    /// A `pass` field deep inside a diagnostic's fix arguments.
    NestedHostOwned,
    /// `validAsOf.baseline` names another tree.
    StaleBaseline,
    /// `validAsOf.changesetDigest` is not the host's.
    StaleDigest,
    /// `validAsOf.blobs` omits what was read.
    StaleBlobs,
    /// Refuses `initialize` (protocol asp/1.0) with a contract error.
    RefuseProtocol,
    /// Advertises inspect only.
    NoCheck,
    Incomplete,
    Unsupported,
    ErrorStatus,
    Cancelled,
    /// Answers `check/evaluate` with a JSON-RPC error (failClass health).
    ErrorReply,
    /// Answers `check/evaluate` with the cancelled error (-32016).
    CancelledReply,
    /// Asks for a blob outside the request and a tree path outside its grant.
    ReadOutside,
    /// On `check/evaluate`, sends waves of `workspace/readBlob` for the first changed file and
    /// never reads its input again (no answer, no cancel, nothing).
    FloodReads,
}

/// `--fault flood-reads`: how many waves of how many reads.
const FLOOD_WAVES: usize = 4;
const FLOOD_WAVE: usize = 250;

#[derive(Debug, Parser)]
struct Args {
    #[arg(long, value_enum, default_value = "none")]
    fault: Fault,
    /// `serverInfo.name`.
    #[arg(long, default_value = "fake-provider")]
    name: String,
    /// Read globs it requests.
    #[arg(long = "read", default_values = ["**/*"])]
    read: Vec<String>,
    /// Writes its pid here at start.
    #[arg(long)]
    pid_file: Option<PathBuf>,
    /// Appends one JSON line per message it gets (and per callback answer).
    #[arg(long)]
    record: Option<PathBuf>,
}

struct Fake {
    args: Args,
    record: Mutex<Option<std::fs::File>>,
}

impl Fake {
    fn log(&self, event: &str, data: Value) {
        if let Ok(mut file) = self.record.lock()
            && let Some(file) = file.as_mut()
        {
            let _ = writeln!(file, "{}", json!({"event": event, "data": data}));
        }
    }
}

struct Served(Arc<Fake>);

impl Handler for Served {
    fn request(&self, request: IncomingRequest) -> Answer {
        let fake = self.0.clone();
        Box::pin(async move {
            let params: Value = request.params::<Option<Value>>()?.unwrap_or(Value::Null);
            fake.log(&request.method, params.clone());
            let answer = match request.method.as_str() {
                "initialize" => initialize(&fake).await?,
                "check/evaluate" => evaluate(&fake, &request, params).await?,
                "shutdown" if fake.args.fault == Fault::HangOnShutdown => {
                    std::future::pending().await
                }
                "shutdown" => Value::Null,
                other => return Err(method_not_found(other)),
            };
            Ok(RawValue::from_string(answer.to_string()).expect("json"))
        })
    }

    fn notification(&self, method: &str, params: Option<Box<RawValue>>) {
        let params: Value = params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        self.0.log(method, params);
        if method == "exit" {
            std::process::exit(0);
        }
    }
}

async fn initialize(fake: &Fake) -> Result<Value, ErrorObject> {
    match fake.args.fault {
        Fault::CrashOnInitialize => std::process::exit(7),
        Fault::HangOnInitialize => std::future::pending::<()>().await,
        Fault::RefuseProtocol => {
            return Err(error_object(
                -32014,
                "unsupported_version: this provider speaks asp/0.9".into(),
                FailClass::Contract,
                false,
            ));
        }
        _ => {}
    }
    let families = if fake.args.fault == Fault::NoCheck {
        json!(["inspect"])
    } else {
        json!(["check"])
    };
    let capabilities = if fake.args.fault == Fault::NoCheck {
        json!({"inspect": {"verbs": ["references"]}})
    } else {
        json!({"check": {"capabilityVersion": "check/1.0", "diagnosticSources": ["fake"], "scopes": ["changeset"],
            "comparisons": ["all", "introduced"], "partialResults": false, "incremental": false,
            "unsupportedReporting": "assessment-status"}})
    };
    Ok(json!({
        "serverInfo": {"name": fake.args.name, "version": "1.0.0", "fingerprint": format!("sha256:fake-{}", fake.args.name)},
        "capabilityFamilies": families,
        "capabilities": capabilities,
        "requestedPermissions": {"read": fake.args.read, "write": false, "network": false},
        "provenance": {"publisher": "asp-bridge tests"},
    }))
}

async fn read(
    request: &IncomingRequest,
    fake: &Fake,
    blobs: &[String],
) -> Result<Vec<Value>, ErrorObject> {
    let options = CallOptions {
        timeout: Some(Duration::from_secs(10)),
        progress: None,
    };
    match request
        .peer
        .request_raw(
            "workspace/readBlob",
            Some(&json!({"blobs": blobs})),
            options,
        )
        .await
    {
        Ok(raw) => {
            let answer: Value = serde_json::from_str(raw.get()).unwrap_or_default();
            fake.log("readBlob.ok", json!({"blobs": blobs}));
            Ok(answer["blobs"].as_array().cloned().unwrap_or_default())
        }
        Err(e) => {
            fake.log("readBlob.refused", json!({"blobs": blobs, "error": e.to_string(), "failClass": e.fail_class().as_str()}));
            Err(error_object(
                -32010,
                format!("cannot read: {e}"),
                FailClass::Health,
                false,
            ))
        }
    }
}

/// Runs its closure when dropped.
struct OnDrop<F: FnMut()>(F);

impl<F: FnMut()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        (self.0)();
    }
}

fn decode(blob: &Value) -> String {
    match blob["encoding"].as_str() {
        Some("utf-8") => blob["bytes"].as_str().unwrap_or_default().to_owned(),
        _ => String::new(),
    }
}

async fn evaluate(
    fake: &Fake,
    request: &IncomingRequest,
    params: Value,
) -> Result<Value, ErrorObject> {
    match fake.args.fault {
        Fault::Crash => std::process::exit(9),
        Fault::Hang => {
            // Logged when the host cancels the request (the peer then drops this future).
            let _cancelled = OnDrop(|| fake.log("check/evaluate.cancelled", Value::Null));
            std::future::pending::<()>().await
        }
        Fault::ErrorReply => {
            return Err(error_object(
                -32000,
                "the fake provider failed on purpose".into(),
                FailClass::Health,
                true,
            )
            .with_data("detail", json!("disk quota\u{1b}[2J exceeded")));
        }
        Fault::CancelledReply => {
            return Err(error_object(
                -32016,
                "cancelled".into(),
                FailClass::Health,
                true,
            ));
        }
        _ => {}
    }
    let changes = params["changeset"]["changes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut read_set = BTreeSet::new();
    let mut diagnostics = Vec::new();
    for change in &changes {
        let (Some(path), Some(after)) = (change["path"].as_str(), change["after"].as_str()) else {
            continue;
        };
        let Ok(blobs) = read(request, fake, &[after.to_owned()]).await else {
            continue;
        };
        read_set.insert(after.to_owned());
        let text = blobs.first().map(decode).unwrap_or_default();
        for (line, content) in text.lines().enumerate() {
            for (marker, severity) in [("FAKE-ERROR", "error"), ("FAKE-WARNING", "warning")] {
                if let Some(at) = content.find(marker) {
                    diagnostics.push(json!({
                        "code": format!("fake/{severity}"), "severity": severity, "source": "fake",
                        "message": format!("{marker} marker"),
                        "location": {"path": path, "range": {"start": {"line": line, "char": at}, "end": {"line": line, "char": at + marker.len()}}},
                        "fingerprint": format!("fake:{path}:{marker}"),
                        "help": "remove the marker",
                    }));
                }
            }
        }
    }
    if fake.args.fault == Fault::ReadOutside {
        let outside =
            "blob:sha256:0000000000000000000000000000000000000000000000000000000000000000"
                .to_owned();
        let _ = read(request, fake, std::slice::from_ref(&outside)).await;
        let options = CallOptions {
            timeout: Some(Duration::from_secs(10)),
            progress: None,
        };
        let listed = request
            .peer
            .request_raw(
                "workspace/listTree",
                Some(&json!({"paths": ["secret"]})),
                options,
            )
            .await;
        fake.log("listTree", json!({"ok": listed.is_ok(), "answer": listed.map(|r| r.get().to_owned()).unwrap_or_default()}));
    }
    let status = match fake.args.fault {
        Fault::Incomplete => "incomplete",
        Fault::Unsupported => "unsupported",
        Fault::ErrorStatus => "error",
        Fault::Cancelled => "cancelled",
        _ => "complete",
    };
    let mut baseline = params["changeset"]["baseline"].clone();
    let mut digest = params["changesetDigest"].clone();
    let mut blobs: Vec<String> = read_set.into_iter().collect();
    match fake.args.fault {
        Fault::StaleBaseline => {
            baseline["rev"] = json!("git:tree:0000000000000000000000000000000000000000")
        }
        Fault::StaleDigest => digest = json!("sha256:not-the-changeset"),
        Fault::StaleBlobs => blobs.clear(),
        Fault::NestedHostOwned => {
            for d in &mut diagnostics {
                d["fix"] =
                    json!({"editRef": "fake/fix", "args": {"plan": {"steps": [{"pass": true}]}}});
            }
        }
        _ => {}
    }
    let part = json!({"scope": "changeset", "diagnosticSources": ["fake"], "rules": ["fake/error", "fake/warning"], "comparison": params["comparison"]});
    let mut assessment = json!({
        "status": status,
        "diagnostics": diagnostics,
        "coverage": {"requested": part, "covered": part, "degraded": [], "unsupported": [], "exhaustive": status == "complete", "truncated": false},
        "validAsOf": {"baseline": baseline, "changesetDigest": digest, "blobs": blobs},
        "provider": {"id": "fake", "version": "1.0.0", "configDigest": "sha256:fake-config", "capabilityVersion": "check/1.0", "capabilityFamily": "check"},
        "timing": {"elapsedMs": 1},
        "cache": {"status": "disabled"},
    });
    match fake.args.fault {
        Fault::Malformed => {
            assessment
                .as_object_mut()
                .expect("object")
                .remove("validAsOf");
        }
        Fault::HostOwned => assessment["decision"] = json!("allow"),
        Fault::NestedHostOwned => {
            assessment["evidence"] = json!([{"kind": "trace", "id": "t", "data": {"detail": {"steps": [{"pass": true}]}}}]);
        }
        _ => {}
    }
    Ok(assessment)
}

/// `--fault flood-reads`, on plain stdio (the peer would go on reading): answers `initialize`,
/// then floods reads on `check/evaluate` and stops reading; it never returns.
async fn flood(fake: &Fake) {
    use std::io::BufRead as _;
    let mut input = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line).unwrap_or(0) == 0 {
            std::process::exit(0);
        }
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        fake.log(message["method"].as_str().unwrap_or("reply"), Value::Null);
        match message["method"].as_str() {
            Some("initialize") => {
                let result = initialize(fake).await.unwrap_or_default();
                let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
                let _ = writeln!(out, "{reply}");
                let _ = out.flush();
            }
            Some("check/evaluate") => break,
            _ => {}
        }
    }
    let blob = &message_blob(&line);
    let mut id = 0u64;
    for _ in 0..FLOOD_WAVES {
        for _ in 0..FLOOD_WAVE {
            id += 1;
            let request = json!({"jsonrpc": "2.0", "id": format!("flood-{id}"),
                "method": "workspace/readBlob", "params": {"blobs": [blob]}});
            let _ = writeln!(out, "{request}");
        }
        let _ = out.flush();
        fake.log("flood.wave", json!({"sent": id}));
    }
    std::future::pending::<()>().await;
}

/// The `after` blob of the first change of a `check/evaluate` line.
fn message_blob(line: &str) -> String {
    let message: Value = serde_json::from_str(line).unwrap_or_default();
    message["params"]["changeset"]["changes"][0]["after"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse();
    if let Some(path) = &args.pid_file {
        let _ = std::fs::write(path, std::process::id().to_string());
    }
    let record = args.record.as_ref().and_then(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .ok()
    });
    let fake = Arc::new(Fake {
        args,
        record: Mutex::new(record),
    });
    if fake.args.fault == Fault::FloodReads {
        flood(&fake).await;
    }
    let handler = Arc::new(Served(fake));
    let _ = peer::serve(
        tokio::io::stdin(),
        tokio::io::stdout(),
        PeerConfig::default(),
        handler,
        Duration::from_secs(1),
    )
    .await;
}
