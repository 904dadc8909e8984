//! A `check/evaluate` request read and validated: the changeset, scope, comparison, the rules to
//! run, and the strictly validated configuration with its digest.

use serde_json::{Map, Value, json};

use crate::checks::{Settings, YamlReading};
use crate::digest::canonical_digest;
use crate::rules::{Rule, SOURCE};
use crate::wire::{CAPABILITY_VERSION, Change, CoveragePart, Degradation};

/// Default of `maxAddedFileKb` (pre-commit-hooks' `check-added-large-files`).
const DEFAULT_MAX_ADDED_FILE_KB: u64 = 500;
/// Largest accepted `maxAddedFileKb` (1 GiB).
const MAX_ADDED_FILE_KB: u64 = 1024 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Comparison {
    Introduced,
    All,
    Resolved,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    Changeset,
    Workspace,
    Paths(Vec<String>),
}

impl Scope {
    /// Whether `path` is in a `paths` scope (the path itself or below it).
    pub(crate) fn covers(&self, path: &str) -> bool {
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

/// A request ready to evaluate.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) baseline: Value,
    pub(crate) changeset_digest: String,
    pub(crate) changes: Vec<Change>,
    pub(crate) scope: Scope,
    pub(crate) comparison: Comparison,
    pub(crate) rules: Vec<Rule>,
    pub(crate) settings: Settings,
    pub(crate) config_digest: String,
    pub(crate) requested: CoveragePart,
    /// What was asked for that this provider does not support (reported, not an error).
    pub(crate) unsupported: Vec<Degradation>,
    /// The scope, comparison or diagnostic sources asked for are not this provider's.
    pub(crate) out_of_reach: bool,
}

/// Why a request cannot be evaluated at all: an `input` error for the caller.
pub(crate) type Invalid = String;

impl Request {
    pub(crate) fn parse(params: &Value) -> Result<Request, Invalid> {
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
            .unwrap_or(json!("introduced"));
        let (settings, effective) = configuration(params.get("configuration"))?;
        let config_digest = canonical_digest(&json!({
            "provider": SOURCE,
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
                unsupported.push(unsupported_entry(format!("scope {other} is not supported")));
                Scope::Changeset
            }
        };
        let comparison = match comparison_value.as_str() {
            Some("introduced") => Comparison::Introduced,
            Some("all") => Comparison::All,
            Some("resolved") => Comparison::Resolved,
            _ => {
                out_of_reach = true;
                unsupported.push(unsupported_entry(format!(
                    "comparison {comparison_value} is not supported"
                )));
                Comparison::Introduced
            }
        };
        let sources = strings(params.get("diagnosticSources"), "diagnosticSources")?;
        let asked_rules = strings(params.get("rules"), "rules")?;
        if let Some(sources) = &sources
            && !sources.iter().any(|s| s == SOURCE)
        {
            out_of_reach = true;
            unsupported.push(unsupported_entry(format!(
                "diagnostic sources {sources:?}: this provider's only source is `{SOURCE}`"
            )));
        }
        let rules = match &asked_rules {
            None => Rule::ALL.to_vec(),
            Some(ids) => {
                for id in ids.iter().filter(|id| Rule::parse(id).is_none()) {
                    unsupported.push(unsupported_entry(format!(
                        "rule `{id}` is not a hygiene rule"
                    )));
                }
                ids.iter().filter_map(|id| Rule::parse(id)).collect()
            }
        };
        let requested = CoveragePart {
            scope: scope_value,
            diagnostic_sources: sources.unwrap_or_else(|| vec![SOURCE.to_owned()]),
            rules: asked_rules
                .unwrap_or_else(|| Rule::ALL.iter().map(|r| r.id().to_owned()).collect()),
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
    pub(crate) fn is_unsupported(&self) -> bool {
        self.out_of_reach || self.rules.is_empty()
    }
}

fn unsupported_entry(detail: String) -> Degradation {
    Degradation {
        source: SOURCE,
        reason: "unsupported",
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

/// The provider's configuration: `{ "maxAddedFileKb": 1..=1048576 }` (default 500) and
/// `{ "yaml": "compatible" | "strict" }` (default compatible), nothing else.
/// Returns the settings and the effective configuration (defaults filled in) for the digest.
fn configuration(value: Option<&Value>) -> Result<(Settings, Value), Invalid> {
    let empty = Map::new();
    let map = match value {
        None => &empty,
        Some(Value::Object(map)) => map,
        Some(_) => return Err("`configuration` must be an object".into()),
    };
    if let Some(key) = map
        .keys()
        .find(|k| !["maxAddedFileKb", "yaml"].contains(&k.as_str()))
    {
        return Err(format!(
            "unknown configuration field `{key}` (the hygiene provider accepts `maxAddedFileKb` and `yaml`)"
        ));
    }
    let yaml = match map.get("yaml").map(|v| (v, v.as_str())) {
        None | Some((_, Some("compatible"))) => YamlReading::Compatible,
        Some((_, Some("strict"))) => YamlReading::Strict,
        Some((v, _)) => {
            return Err(format!(
                "`yaml` must be \"compatible\" or \"strict\", not {v}"
            ));
        }
    };
    let kb = match map.get("maxAddedFileKb") {
        None => DEFAULT_MAX_ADDED_FILE_KB,
        Some(v) => v
            .as_u64()
            .filter(|kb| (1..=MAX_ADDED_FILE_KB).contains(kb))
            .ok_or_else(|| {
                format!(
                    "`maxAddedFileKb` must be an integer from 1 to {MAX_ADDED_FILE_KB}, not {v}"
                )
            })?,
    };
    Ok((
        Settings {
            max_added_file_bytes: kb * 1024,
            yaml,
        },
        json!({
            "maxAddedFileKb": kb,
            "yaml": match yaml {
                YamlReading::Compatible => "compatible",
                YamlReading::Strict => "strict",
            },
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(extra: Value) -> Value {
        let mut p = json!({
            "changeset": {
                "baseline": {"rev": "git:tree:9f3a1c", "stampedAt": "2026-06-16T10:00:00Z"},
                "changes": [
                    {"path": "src/api.ts", "kind": "modify", "before": "blob:sha256:aa01", "after": "blob:sha256:bb02"},
                    {"path": "src/new.ts", "kind": "create", "after": "blob:sha256:cc03"}
                ]
            },
            "scope": "changeset",
            "comparison": "introduced"
        });
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    }

    #[test]
    fn the_spec_example_reads_with_defaults() {
        let r = Request::parse(&params(json!({}))).unwrap();
        assert_eq!(r.changes.len(), 2);
        assert_eq!(r.scope, Scope::Changeset);
        assert_eq!(r.comparison, Comparison::Introduced);
        assert_eq!(r.rules, Rule::ALL);
        assert_eq!(r.settings.max_added_file_bytes, 500 * 1024);
        assert!(r.changeset_digest.starts_with("sha256:"));
        assert!(r.unsupported.is_empty() && !r.is_unsupported());
    }

    #[test]
    fn a_given_changeset_digest_is_echoed_and_equal_changesets_digest_alike() {
        let r = Request::parse(&params(json!({"changesetDigest": "sha256:given"}))).unwrap();
        assert_eq!(r.changeset_digest, "sha256:given");
        let a = Request::parse(&params(json!({}))).unwrap();
        let b = Request::parse(&params(json!({"comparison": "all"}))).unwrap();
        assert_eq!(a.changeset_digest, b.changeset_digest);
    }

    #[test]
    fn configuration_is_strict_and_defaults_share_a_digest() {
        let default = Request::parse(&params(json!({}))).unwrap();
        let explicit =
            Request::parse(&params(json!({"configuration": {"maxAddedFileKb": 500}}))).unwrap();
        assert_eq!(default.config_digest, explicit.config_digest);
        let other =
            Request::parse(&params(json!({"configuration": {"maxAddedFileKb": 64}}))).unwrap();
        assert_ne!(default.config_digest, other.config_digest);
        assert_eq!(other.settings.max_added_file_bytes, 64 * 1024);
        for bad in [
            json!(null),
            json!({"x": 1}),
            json!({"maxAddedFileKb": 0}),
            json!({"maxAddedFileKb": "5"}),
        ] {
            assert!(
                Request::parse(&params(json!({"configuration": bad}))).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn unknown_rules_sources_and_comparisons_are_unsupported_not_errors() {
        let r =
            Request::parse(&params(json!({"rules": ["hygiene/private-key", "acme/x"]}))).unwrap();
        assert_eq!(r.rules, [Rule::PrivateKey]);
        assert_eq!(r.unsupported.len(), 1);
        assert!(!r.is_unsupported());
        let r = Request::parse(&params(json!({"diagnosticSources": ["acme"]}))).unwrap();
        assert!(r.is_unsupported());
        let r = Request::parse(&params(json!({"comparison": "sideways"}))).unwrap();
        assert!(r.is_unsupported());
    }

    #[test]
    fn malformed_changes_are_input_errors() {
        let mut p = params(json!({}));
        p["changeset"]["changes"][0]["after"] = Value::Null;
        p["changeset"]["changes"][0]
            .as_object_mut()
            .unwrap()
            .remove("after");
        assert!(Request::parse(&p).unwrap_err().contains("has no `after`"));
        assert!(Request::parse(&json!({"scope": "changeset"})).is_err());
    }

    #[test]
    fn paths_scopes_cover_the_path_and_below() {
        let scope = Scope::Paths(vec!["src".into(), "a.json".into()]);
        assert!(scope.covers("src/x.rs") && scope.covers("a.json"));
        assert!(!scope.covers("srcx/y") && !scope.covers("b.json"));
    }

    #[test]
    fn the_yaml_reading_is_compatible_by_default_and_strict_on_request() {
        let default = Request::parse(&params(json!({}))).unwrap();
        assert_eq!(default.settings.yaml, YamlReading::Compatible);
        let strict = Request::parse(&params(json!({"configuration": {"yaml": "strict"}}))).unwrap();
        assert_eq!(strict.settings.yaml, YamlReading::Strict);
        assert_ne!(default.config_digest, strict.config_digest);
        let explicit =
            Request::parse(&params(json!({"configuration": {"yaml": "compatible"}}))).unwrap();
        assert_eq!(default.config_digest, explicit.config_digest);
        assert!(Request::parse(&params(json!({"configuration": {"yaml": 1}}))).is_err());
    }
}
