//! Validation of a log against the OASIS SARIF 2.1.0 schema (draft-04, bundled, nothing fetched):
//! for tests, here and in the CLI's end-to-end tests.

use std::sync::OnceLock;

use serde_json::Value;

/// The OASIS SARIF 2.1.0 schema (errata01), as copied into the repository.
const SCHEMA: &str = include_str!("../../schemas/sarif-schema-2.1.0.json");

fn validator() -> &'static Result<jsonschema::Validator, String> {
    static VALIDATOR: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA).map_err(|e| e.to_string())?;
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft4)
            .should_validate_formats(true)
            .build(&schema)
            .map_err(|e| e.to_string())
    })
}

/// Every schema error in `log`, one line each (`<instance path>: <error>`); empty when valid.
pub fn errors(log: &Value) -> Vec<String> {
    match validator() {
        Ok(validator) => validator
            .iter_errors(log)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect(),
        Err(e) => vec![format!("the bundled SARIF schema does not compile: {e}")],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_schema_catches_what_github_rejects() {
        let bad = json!({
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {"name": "x"}},
                "results": [{
                    "message": {"text": "m"},
                    "level": "fatal",
                    "locations": [{"physicalLocation": {
                        "artifactLocation": {"uri": "a"},
                        "region": {"startLine": 0}
                    }}]
                }]
            }]
        });
        let errors = errors(&bad);
        assert!(errors.iter().any(|e| e.contains("/level")), "{errors:?}");
        assert!(
            errors.iter().any(|e| e.contains("/startLine")),
            "{errors:?}"
        );
    }

    #[test]
    fn a_minimal_log_is_valid() {
        let ok = json!({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": []}]});
        assert_eq!(errors(&ok), Vec::<String>::new());
    }
}
