//! The ASP schemas the host checks against, compiled into the binary from `schemas/asp/`: provider
//! answers (initialize results, Assessments), callback params, outer-seam params, and the
//! repository policy. Each validator is built once.

use std::sync::OnceLock;

use serde_json::{Value, json};

const BASE: &str = "https://covibes.dev/asp/schemas/";

const SCHEMAS: &[&str] = &[
    include_str!("../../schemas/asp/assurance.schema.json"),
    include_str!("../../schemas/asp/asp-config.schema.json"),
    include_str!("../../schemas/asp/capabilities.schema.json"),
    include_str!("../../schemas/asp/changeset.schema.json"),
    include_str!("../../schemas/asp/check-assessment.schema.json"),
    include_str!("../../schemas/asp/check-evaluate.schema.json"),
    include_str!("../../schemas/asp/diagnostic.schema.json"),
    include_str!("../../schemas/asp/edit-plan.schema.json"),
    include_str!("../../schemas/asp/edit-propose.schema.json"),
    include_str!("../../schemas/asp/error.schema.json"),
    include_str!("../../schemas/asp/host-callbacks.schema.json"),
    include_str!("../../schemas/asp/initialize.schema.json"),
    include_str!("../../schemas/asp/outer-host.schema.json"),
    include_str!("../../schemas/asp/sense-graph.schema.json"),
    include_str!("../../schemas/asp/verdict.schema.json"),
    include_str!("../../schemas/asp/workspace-edit.schema.json"),
];

/// The shapes the host validates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Assessment,
    InitializeResult,
    Policy,
    EvaluateParams,
    ReadBlobParams,
    ListTreeParams,
}

impl Shape {
    fn pointer(self) -> String {
        match self {
            Shape::Assessment => format!("{BASE}check-assessment.schema.json#/$defs/assessment"),
            Shape::InitializeResult => format!("{BASE}initialize.schema.json#/$defs/result"),
            Shape::Policy => format!("{BASE}asp-config.schema.json"),
            Shape::EvaluateParams => {
                format!("{BASE}outer-host.schema.json#/$defs/evaluateChangesetParams")
            }
            Shape::ReadBlobParams => {
                format!("{BASE}host-callbacks.schema.json#/$defs/readBlob.params")
            }
            Shape::ListTreeParams => {
                format!("{BASE}host-callbacks.schema.json#/$defs/listTree.params")
            }
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

const SHAPES: [Shape; 6] = [
    Shape::Assessment,
    Shape::InitializeResult,
    Shape::Policy,
    Shape::EvaluateParams,
    Shape::ReadBlobParams,
    Shape::ListTreeParams,
];

/// A validator for each schema location in `pointers`, all built over one registry of the
/// bundled schemas.
fn compile(pointers: impl Iterator<Item = String>) -> Vec<jsonschema::Validator> {
    let mut registry = jsonschema::Registry::new();
    for text in SCHEMAS {
        let schema: Value = serde_json::from_str(text).expect("bundled schemas are JSON");
        let id = schema["$id"]
            .as_str()
            .expect("bundled schemas have an $id")
            .to_owned();
        registry = registry.add(id, schema).expect("bundled schemas register");
    }
    let registry = registry.prepare().expect("bundled schemas resolve");
    pointers
        .map(|pointer| {
            jsonschema::options()
                .with_registry(&registry)
                .build(&json!({"$ref": pointer}))
                .expect("bundled schemas compile")
        })
        .collect()
}

fn validators() -> &'static [jsonschema::Validator] {
    static VALIDATORS: OnceLock<Vec<jsonschema::Validator>> = OnceLock::new();
    VALIDATORS.get_or_init(|| compile(SHAPES.iter().map(|shape| shape.pointer())))
}

/// `Ok` when `instance` has the shape; else the first few violations, one line each.
pub(crate) fn check(shape: Shape, instance: &Value) -> Result<(), String> {
    let validator = &validators()[shape.index()];
    // The common case, a valid instance, is decided without collecting any error.
    if validator.is_valid(instance) {
        return Ok(());
    }
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .take(3)
        .map(|e| {
            let at = e.instance_path().to_string();
            let text = e.to_string();
            let text: String = text.chars().take(200).collect();
            if at.is_empty() {
                text
            } else {
                format!("{at}: {text}")
            }
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Checks `instance` against a `$defs` entry of `outer-host.schema.json`: for the tests of the
/// host's answers and the fuzz target of provider answers (the host itself trusts its own).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn check_outer(def: &str, instance: &Value) -> Result<(), String> {
    type Cache = std::sync::Mutex<Vec<(String, std::sync::Arc<jsonschema::Validator>)>>;
    static CACHE: Cache = std::sync::Mutex::new(Vec::new());
    let validator = {
        let mut cache = rpc_peer::lock(&CACHE);
        match cache.iter().find(|(d, _)| d == def) {
            Some((_, v)) => v.clone(),
            None => {
                let pointer = format!("{BASE}outer-host.schema.json#/$defs/{def}");
                let v = std::sync::Arc::new(compile(std::iter::once(pointer)).remove(0));
                cache.push((def.to_owned(), v.clone()));
                v
            }
        }
    };
    if validator.is_valid(instance) {
        return Ok(());
    }
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{errors:#?}\n{instance:#}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_compiles_and_checks() {
        assert!(check(Shape::ReadBlobParams, &json!({"blobs": ["blob:sha256:00"]})).is_ok());
        let err = check(Shape::ReadBlobParams, &json!({"blobs": ["nope"], "x": 1})).unwrap_err();
        assert!(!err.is_empty());
        assert!(check(Shape::ListTreeParams, &json!({})).is_ok());
        assert!(check(Shape::Policy, &json!({})).is_err());
        assert!(check(Shape::InitializeResult, &json!({})).is_err());
        assert!(check(Shape::EvaluateParams, &json!({"callSite": "gate"})).is_err());
        assert!(check(Shape::Assessment, &json!({"status": "complete"})).is_err());
    }
}
