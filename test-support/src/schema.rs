//! The ASP JSON Schemas of `schemas/asp/`, with every file registered under its `$id` so that
//! references between them resolve offline.

use serde_json::{Value, json};

use crate::workspace_dir;

/// A validator for `$defs/def` of the ASP schema file `file` (e.g. `outer-host.schema.json`).
pub fn asp_validator(file: &str, def: &str) -> jsonschema::Validator {
    let dir = workspace_dir().join("schemas/asp");
    let mut registry = jsonschema::Registry::new();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let id = schema["$id"]
            .as_str()
            .expect("every ASP schema has an $id")
            .to_owned();
        registry = registry.add(id, schema).expect("a schema");
    }
    let registry = registry.prepare().expect("the ASP schemas resolve");
    let id = format!("https://covibes.dev/asp/schemas/{file}#/$defs/{def}");
    jsonschema::options()
        .with_registry(&registry)
        .build(&json!({"$ref": id}))
        .unwrap_or_else(|e| panic!("{file}#/$defs/{def}: {e}"))
}

/// What is wrong with `instance` against `$defs/def` of `file`, one line per error with its path;
/// empty when it conforms.
pub fn asp_errors(file: &str, def: &str, instance: &Value) -> Vec<String> {
    asp_validator(file, def)
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Fails the test unless `instance` conforms to `$defs/def` of `file`.
pub fn assert_asp_valid(file: &str, def: &str, instance: &Value) {
    let errors = asp_errors(file, def, instance);
    assert!(
        errors.is_empty(),
        "{file}#/$defs/{def}: {errors:#?}\n{instance:#}"
    );
}
