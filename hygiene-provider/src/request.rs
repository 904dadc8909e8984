//! The hygiene provider's configuration, as `check/evaluate` carries it: the checks' settings and
//! the effective configuration (defaults filled in) that the config digest is taken of.

use serde_json::{Map, Value, json};

use crate::checks::{Settings, YamlReading};

/// Default of `maxAddedFileKb` (pre-commit-hooks' `check-added-large-files`).
const DEFAULT_MAX_ADDED_FILE_KB: u64 = 500;
/// Largest accepted `maxAddedFileKb` (1 GiB).
const MAX_ADDED_FILE_KB: u64 = 1024 * 1024;

/// The provider's configuration: `{ "maxAddedFileKb": 1..=1048576 }` (default 500) and
/// `{ "yaml": "compatible" | "strict" }` (default compatible), nothing else.
/// Returns the settings and the effective configuration (defaults filled in) for the digest.
pub(crate) fn configuration(value: Option<&Value>) -> Result<(Settings, Value), String> {
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
    use provider_kit::{Comparison, Scope};

    use crate::checker::Hygiene;
    use crate::rules::Rule;

    type Request = provider_kit::Request<Rule, Settings>;

    fn parse(params: &Value) -> Result<Request, provider_kit::Invalid> {
        Request::parse(params, &Hygiene)
    }

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
        let r = parse(&params(json!({}))).unwrap();
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
        let r = parse(&params(json!({"changesetDigest": "sha256:given"}))).unwrap();
        assert_eq!(r.changeset_digest, "sha256:given");
        let a = parse(&params(json!({}))).unwrap();
        let b = parse(&params(json!({"comparison": "all"}))).unwrap();
        assert_eq!(a.changeset_digest, b.changeset_digest);
    }

    #[test]
    fn configuration_is_strict_and_defaults_share_a_digest() {
        let default = parse(&params(json!({}))).unwrap();
        let explicit = parse(&params(json!({"configuration": {"maxAddedFileKb": 500}}))).unwrap();
        assert_eq!(default.config_digest, explicit.config_digest);
        let other = parse(&params(json!({"configuration": {"maxAddedFileKb": 64}}))).unwrap();
        assert_ne!(default.config_digest, other.config_digest);
        assert_eq!(other.settings.max_added_file_bytes, 64 * 1024);
        for bad in [
            json!(null),
            json!({"x": 1}),
            json!({"maxAddedFileKb": 0}),
            json!({"maxAddedFileKb": "5"}),
        ] {
            assert!(
                parse(&params(json!({"configuration": bad}))).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn unknown_rules_sources_and_comparisons_are_unsupported_not_errors() {
        let r = parse(&params(json!({"rules": ["hygiene/private-key", "acme/x"]}))).unwrap();
        assert_eq!(r.rules, [Rule::PrivateKey]);
        assert_eq!(r.unsupported.len(), 1);
        assert!(!r.is_unsupported());
        let r = parse(&params(json!({"diagnosticSources": ["acme"]}))).unwrap();
        assert!(r.is_unsupported());
        let r = parse(&params(json!({"comparison": "sideways"}))).unwrap();
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
        assert!(parse(&p).unwrap_err().contains("has no `after`"));
        assert!(parse(&json!({"scope": "changeset"})).is_err());
    }

    #[test]
    fn the_yaml_reading_is_compatible_by_default_and_strict_on_request() {
        let default = parse(&params(json!({}))).unwrap();
        assert_eq!(default.settings.yaml, YamlReading::Compatible);
        let strict = parse(&params(json!({"configuration": {"yaml": "strict"}}))).unwrap();
        assert_eq!(strict.settings.yaml, YamlReading::Strict);
        assert_ne!(default.config_digest, strict.config_digest);
        let explicit = parse(&params(json!({"configuration": {"yaml": "compatible"}}))).unwrap();
        assert_eq!(default.config_digest, explicit.config_digest);
        assert!(parse(&params(json!({"configuration": {"yaml": 1}}))).is_err());
    }
}
