//! The `asp/0.1` compatibility layer: what a provider enrolled with `protocol = "asp/0.1"` (such as
//! opcore-asp-provider 0.2.1) is sent and what its answers become before the host checks them
//! against the v1.0 schemas. Every difference is one row of [`TABLE`]; each function says which rows
//! it applied, and the tests replay the provider's own recorded messages
//! (`tests/fixtures/opcore/`) until every row has been applied.
//!
//! What v1.0 cannot express is kept visible rather than dropped: a project-level finding (no path)
//! stays a finding on the workspace as a whole (`path: ""`), which every front end shows.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::config::CallSite;

/// The version sent in `initialize`.
pub(crate) const PROTOCOL_VERSION: &str = "asp/0.1";
/// The `capabilityVersion` an asp/0.1 check capability is taken to have (what its assessments say).
const CAPABILITY_VERSION: &str = "check/0.1";
/// The keys a v1.0 check capability may have (`capabilities.schema.json#/$defs/checkCapability`).
const CHECK_CAPABILITY_KEYS: &[&str] = &[
    "capabilityVersion",
    "diagnosticSources",
    "scopes",
    "comparisons",
    "partialResults",
    "incremental",
    "unsupportedReporting",
    "fixes",
];
/// The scopes a v1.0 check capability may list.
const CAPABILITY_SCOPES: &[&str] = &["changeset", "workspace"];
/// The evidence kinds of v1.0 (`check-assessment.schema.json#/$defs/evidence`).
const EVIDENCE_KINDS: &[&str] = &["trace", "artifact", "metric", "message", "reference"];
/// `check/evaluate` params the host sets itself; a configuration key never replaces one.
const HOST_PARAMS: &[&str] = &[
    "changeset",
    "scope",
    "comparison",
    "changesetDigest",
    "callSite",
];

/// One difference between asp/0.1 and asp/1.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Mapping {
    Handshake,
    CapabilityFields,
    CapabilityExtras,
    PathsScope,
    CallSite,
    Checks,
    ChangesetDigest,
    ColumnPositions,
    PathlessLocation,
    Timing,
    EvidenceKind,
}

/// Every mapping: its name (as logged), what asp/0.1 says, and what the host makes of it.
pub(crate) const TABLE: &[(Mapping, &str, &str, &str)] = &[
    (
        Mapping::Handshake,
        "handshake",
        "initialize accepts protocolVersion \"asp/0.1\" only (asp/1.0 is refused with unsupported_version)",
        "the host asks for asp/0.1 and checks the result as a v1.0 initialize result after the rows below",
    ),
    (
        Mapping::CapabilityFields,
        "capability-fields",
        "capabilities.check has no capabilityVersion, partialResults, incremental, unsupportedReporting",
        "capabilityVersion \"check/0.1\", partialResults false, incremental false, unsupportedReporting \"assessment-status\"",
    ),
    (
        Mapping::CapabilityExtras,
        "capability-extras",
        "capabilities.check carries manifest, rules, pythonProjectContext",
        "left out of the capability the host records (the rule ids stay the provider's; configuration selects them)",
    ),
    (
        Mapping::PathsScope,
        "paths-scope",
        "capabilities.check.scopes lists \"paths\"",
        "left out of the capability's scopes; a coverage scope {\"paths\": [...]} is v1.0 already and is kept",
    ),
    (
        Mapping::CallSite,
        "call-site",
        "check/evaluate requires callSite (interactive, gate or sweep)",
        "the call site of the outer request is sent",
    ),
    (
        Mapping::Checks,
        "checks",
        "check/evaluate takes provider options as top-level params (checks: rule ids; without it every rule runs)",
        "the configuration's keys become top-level params (configuration = { checks = [...] } sends checks); no configuration param is sent",
    ),
    (
        Mapping::ChangesetDigest,
        "changeset-digest",
        "validAsOf.changesetDigest is the changesetDigest param, else sha256 of the key-sorted compact JSON of the changeset",
        "the host sends its digest (the same algorithm) and compares validAsOf by equality",
    ),
    (
        Mapping::ColumnPositions,
        "column-positions",
        "a range's positions are {line, column}, both 1-based, the end or the column possibly absent",
        "{line: line - 1, char: column - 1} (a missing column is 0, a missing end is the start)",
    ),
    (
        Mapping::PathlessLocation,
        "pathless-location",
        "a diagnostic's location can be empty: a project-level finding (e.g. a tsconfig error)",
        "location {\"path\": \"\"}: a finding on the workspace as a whole, never dropped",
    ),
    (
        Mapping::Timing,
        "timing",
        "timing is {durationMs, phases, processState}",
        "{elapsedMs: durationMs}; phases and processState are left out",
    ),
    (
        Mapping::EvidenceKind,
        "evidence-kind",
        "evidence kinds outside v1.0's (e.g. python_project_context)",
        "kind \"message\", the original kind kept as data.evidenceKind",
    ),
];

impl Mapping {
    pub(crate) fn name(self) -> &'static str {
        TABLE
            .iter()
            .find(|row| row.0 == self)
            .map_or("unnamed", |row| row.1)
    }
}

/// The mappings one conversion applied.
pub(crate) type Applied = BTreeSet<Mapping>;

/// Logs which mappings a conversion applied (debug level).
pub(crate) fn log(provider: &str, message: &str, applied: &Applied) {
    if !applied.is_empty() {
        let names: Vec<&str> = applied.iter().map(|m| m.name()).collect();
        tracing::debug!(provider, message, mappings = ?names, "asp/0.1 message mapped to asp/1.0");
    }
}

/// The `initialize` params: the v1.0 ones with the asp/0.1 version.
pub(crate) fn initialize_params(mut params: Value, applied: &mut Applied) -> Value {
    params["protocolVersion"] = json!(PROTOCOL_VERSION);
    applied.insert(Mapping::Handshake);
    params
}

/// An asp/0.1 `initialize` result as v1.0.
pub(crate) fn initialize_result(mut result: Value, applied: &mut Applied) -> Value {
    let Some(check) = result
        .pointer_mut("/capabilities/check")
        .and_then(Value::as_object_mut)
    else {
        return result;
    };
    for (key, default) in [
        ("capabilityVersion", json!(CAPABILITY_VERSION)),
        ("partialResults", json!(false)),
        ("incremental", json!(false)),
        ("unsupportedReporting", json!("assessment-status")),
    ] {
        if !check.contains_key(key) {
            check.insert(key.to_owned(), default);
            applied.insert(Mapping::CapabilityFields);
        }
    }
    let before = check.len();
    check.retain(|key, _| CHECK_CAPABILITY_KEYS.contains(&key.as_str()));
    if check.len() != before {
        applied.insert(Mapping::CapabilityExtras);
    }
    if let Some(scopes) = check.get_mut("scopes").and_then(Value::as_array_mut) {
        let before = scopes.len();
        scopes.retain(|s| s.as_str().is_some_and(|s| CAPABILITY_SCOPES.contains(&s)));
        if scopes.len() != before {
            applied.insert(Mapping::PathsScope);
        }
    }
    result
}

/// The asp/0.1 `check/evaluate` params for the v1.0 ones the host built.
pub(crate) fn evaluate_params(
    mut params: Value,
    call_site: CallSite,
    changeset_digest: &str,
    applied: &mut Applied,
) -> Value {
    let Some(object) = params.as_object_mut() else {
        return params;
    };
    object.insert("callSite".into(), json!(call_site.as_str()));
    applied.insert(Mapping::CallSite);
    object.insert("changesetDigest".into(), json!(changeset_digest));
    applied.insert(Mapping::ChangesetDigest);
    if let Some(Value::Object(configuration)) = object.remove("configuration") {
        for (key, value) in configuration {
            if HOST_PARAMS.contains(&key.as_str()) {
                tracing::warn!(
                    key,
                    "a provider configuration key names a host parameter and is not sent"
                );
                continue;
            }
            object.insert(key, value);
            applied.insert(Mapping::Checks);
        }
    }
    params
}

/// An asp/0.1 Assessment as v1.0, before the host checks it like any other.
pub(crate) fn assessment(mut answer: Value, applied: &mut Applied) -> Value {
    if let Some(diagnostics) = answer.get_mut("diagnostics").and_then(Value::as_array_mut) {
        for diagnostic in diagnostics {
            if let Some(location) = diagnostic.get_mut("location") {
                *location = self::location(location.take(), applied);
            } else if let Some(object) = diagnostic.as_object_mut() {
                object.insert("location".into(), json!({"path": ""}));
                applied.insert(Mapping::PathlessLocation);
            }
        }
    }
    if let Some(timing) = answer.get_mut("timing").and_then(Value::as_object_mut)
        && !timing.contains_key("elapsedMs")
        && let Some(duration) = timing.get("durationMs").cloned()
    {
        timing.retain(|key, _| matches!(key.as_str(), "startedAt" | "endedAt"));
        timing.insert("elapsedMs".into(), duration);
        applied.insert(Mapping::Timing);
    }
    if let Some(evidence) = answer.get_mut("evidence").and_then(Value::as_array_mut) {
        for item in evidence {
            let Some(kind) = item["kind"].as_str().map(str::to_owned) else {
                continue;
            };
            if EVIDENCE_KINDS.contains(&kind.as_str()) {
                continue;
            }
            let data = match item.get_mut("data").map(Value::take) {
                Some(Value::Object(data)) => data,
                Some(Value::Null) | None => Map::new(),
                Some(other) => Map::from_iter([("value".to_owned(), other)]),
            };
            let mut data = data;
            data.insert("evidenceKind".into(), json!(kind));
            item["kind"] = json!("message");
            item["data"] = Value::Object(data);
            applied.insert(Mapping::EvidenceKind);
        }
    }
    answer
}

/// A diagnostic location: `{}` becomes the workspace (`path: ""`), `column` positions become `char`.
fn location(location: Value, applied: &mut Applied) -> Value {
    let Value::Object(mut location) = location else {
        applied.insert(Mapping::PathlessLocation);
        return json!({"path": ""});
    };
    if !location.get("path").is_some_and(Value::is_string) {
        applied.insert(Mapping::PathlessLocation);
        return json!({"path": ""});
    }
    let v1 = |at: &str| location["range"][at]["char"].is_u64();
    if location.contains_key("range") && !(v1("start") && v1("end")) {
        applied.insert(Mapping::ColumnPositions);
        let range = &location["range"];
        let (start, end) = (
            range.get("start").and_then(position),
            range.get("end").and_then(position),
        );
        match start {
            Some(start) => {
                let end = end.unwrap_or(start).max(start);
                location.insert(
                    "range".into(),
                    json!({
                        "start": {"line": start.0, "char": start.1},
                        "end": {"line": end.0, "char": end.1},
                    }),
                );
            }
            None => {
                location.remove("range");
            }
        }
    }
    Value::Object(location)
}

/// A 1-based `{line, column}` as a 0-based `(line, char)`; no column is the start of the line.
fn position(value: &Value) -> Option<(u64, u64)> {
    let line = value.get("line")?.as_u64()?;
    let column = value.get("column").and_then(Value::as_u64).unwrap_or(1);
    Some((line.saturating_sub(1), column.saturating_sub(1)))
}

#[cfg(test)]
mod tests;
