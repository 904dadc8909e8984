//! `check/evaluate` params as every checker reads them: the changeset, the scope, the comparison,
//! the diagnostic sources and rules asked for (what is out of reach is reported, not an error), and
//! the configuration, which the checker reads, with its digest.

pub use asp_wire::inner::Comparison;
use asp_wire::reason::Reason;
use serde_json::{Value, json};

use crate::checker::Checker;
use crate::digest::canonical_digest;
use crate::wire::{CAPABILITY_VERSION, Change, CoveragePart, Degradation};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    Changeset,
    Workspace,
    Paths(Vec<String>),
}

impl Scope {
    /// Whether `path` is in a `paths` scope (the path itself or below it).
    pub fn covers(&self, path: &str) -> bool {
        match self {
            Scope::Paths(paths) => paths.iter().any(|p| {
                let p = p.trim_end_matches('/');
                path == p
                    || path
                        .strip_prefix(p)
                        .is_some_and(|rest| rest.starts_with('/'))
            }),
            _ => true,
        }
    }
}

/// A request ready to evaluate, with the rules (`R`) and settings (`S`) of its checker.
#[derive(Debug)]
pub struct Request<R, S> {
    pub baseline: Value,
    pub changeset_digest: String,
    pub changes: Vec<Change>,
    pub scope: Scope,
    pub comparison: Comparison,
    pub rules: Vec<R>,
    pub settings: S,
    pub config_digest: String,
    pub requested: CoveragePart,
    /// What was asked for that this provider does not support (reported, not an error).
    pub unsupported: Vec<Degradation>,
    /// The scope, comparison or diagnostic sources asked for are not this provider's.
    pub out_of_reach: bool,
}

/// Why a request cannot be evaluated at all: an `input` error for the caller.
pub type Invalid = String;

impl<R, S> Request<R, S> {
    /// Reads `params` for `checker`.
    pub fn parse<C>(params: &Value, checker: &C) -> Result<Request<R, S>, Invalid>
    where
        C: Checker<Rule = R, Settings = S>,
    {
        let source = checker.about().source;
        let params = params
            .as_object()
            .ok_or("check/evaluate params must be an object")?;
        let changeset = params.get("changeset").ok_or("missing `changeset`")?;
        let baseline = changeset
            .get("baseline")
            .filter(|b| b.is_object())
            .ok_or("missing `changeset.baseline`")?
            .clone();
        let changes: Vec<Change> = serde_json::from_value(
            changeset
                .get("changes")
                .cloned()
                .ok_or("missing `changeset.changes`")?,
        )
        .map_err(|e| format!("invalid `changeset.changes`: {e}"))?;
        for change in &changes {
            validate_change(change)?;
        }
        let changeset_digest = match params.get("changesetDigest") {
            Some(Value::String(digest)) => digest.clone(),
            Some(_) => return Err("`changesetDigest` must be a string".into()),
            None => canonical_digest(changeset),
        };
        let scope_value = params.get("scope").cloned().unwrap_or(json!("changeset"));
        let comparison_value = params
            .get("comparison")
            .cloned()
            .unwrap_or(json!(Comparison::Introduced.as_str()));
        let (settings, effective) = match params.get("configuration") {
            Some(Value::Object(_)) | None => checker.configure(params.get("configuration"))?,
            Some(_) => return Err("`configuration` must be an object".into()),
        };
        let config_digest = canonical_digest(&json!({
            "provider": source,
            "capabilityVersion": CAPABILITY_VERSION,
            "configuration": effective,
        }));
        let mut unsupported = Vec::new();
        let mut out_of_reach = false;
        let scope = match &scope_value {
            Value::String(s) if s == "changeset" => Scope::Changeset,
            Value::String(s) if s == "workspace" => Scope::Workspace,
            Value::Object(o) => match o.get("paths").and_then(Value::as_array) {
                Some(paths) if !paths.is_empty() => Scope::Paths(
                    paths
                        .iter()
                        .map(|p| {
                            p.as_str()
                                .map(str::to_owned)
                                .ok_or("`scope.paths` must be strings")
                        })
                        .collect::<Result<_, _>>()?,
                ),
                _ => return Err("`scope.paths` must be a non-empty array".into()),
            },
            other => {
                out_of_reach = true;
                unsupported.push(unsupported_entry(
                    source,
                    format!("scope {other} is not supported"),
                ));
                Scope::Changeset
            }
        };
        let comparison = match comparison_value.as_str().and_then(Comparison::from_wire) {
            Some(comparison) => comparison,
            None => {
                out_of_reach = true;
                unsupported.push(unsupported_entry(
                    source,
                    format!("comparison {comparison_value} is not supported"),
                ));
                Comparison::Introduced
            }
        };
        let sources = strings(params.get("diagnosticSources"), "diagnosticSources")?;
        let asked_rules = strings(params.get("rules"), "rules")?;
        if let Some(sources) = &sources
            && !sources.iter().any(|s| s == source)
        {
            out_of_reach = true;
            unsupported.push(unsupported_entry(
                source,
                format!(
                    "diagnostic sources {sources:?}: this provider's only source is `{source}`"
                ),
            ));
        }
        let rules = match &asked_rules {
            None => checker.rules(),
            Some(ids) => {
                for id in ids.iter().filter(|id| checker.parse_rule(id).is_none()) {
                    unsupported.push(unsupported_entry(
                        source,
                        format!("rule `{id}` is not a {source} rule"),
                    ));
                }
                ids.iter().filter_map(|id| checker.parse_rule(id)).collect()
            }
        };
        let requested = CoveragePart {
            scope: scope_value,
            diagnostic_sources: sources.unwrap_or_else(|| vec![source.to_owned()]),
            rules: asked_rules.unwrap_or_else(|| {
                checker
                    .rules()
                    .iter()
                    .map(|r| checker.rule_id(r).to_owned())
                    .collect()
            }),
            comparison: comparison_value
                .as_str()
                .map_or_else(|| comparison_value.to_string(), str::to_owned),
        };
        Ok(Request {
            baseline,
            changeset_digest,
            changes,
            scope,
            comparison,
            rules,
            settings,
            config_digest,
            requested,
            unsupported,
            out_of_reach,
        })
    }

    /// Whether nothing that was asked for can be evaluated.
    pub fn is_unsupported(&self) -> bool {
        self.out_of_reach || self.rules.is_empty()
    }
}

fn unsupported_entry(source: &'static str, detail: String) -> Degradation {
    Degradation {
        source,
        reason: Reason::Unsupported,
        detail,
    }
}

fn validate_change(change: &Change) -> Result<(), Invalid> {
    let needs = |what: &str, present: bool| {
        if present {
            Ok(())
        } else {
            Err(format!(
                "change {:?} ({}) has no `{what}`",
                change.path, change.kind
            ))
        }
    };
    match change.kind.as_str() {
        "create" => needs("after", change.after.is_some()),
        "modify" => {
            needs("before", change.before.is_some()).and(needs("after", change.after.is_some()))
        }
        "delete" => needs("before", change.before.is_some()),
        "rename" => {
            needs("from", change.from.is_some()).and(needs("before", change.before.is_some()))
        }
        other => Err(format!(
            "change {:?} has unknown kind {other:?}",
            change.path
        )),
    }
}

fn strings(value: Option<&Value>, name: &str) -> Result<Option<Vec<String>>, Invalid> {
    match value {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("`{name}` must be strings"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(format!("`{name}` must be an array of strings")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_scopes_cover_the_path_and_below() {
        let scope = Scope::Paths(vec!["src".into(), "a.json".into()]);
        assert!(scope.covers("src/x.rs") && scope.covers("a.json"));
        assert!(!scope.covers("srcx/y") && !scope.covers("b.json"));
    }
}
