//! The tools, one file each, and the router the server dispatches with: [`run`] is the runner
//! every call goes through and the contract each tool fulfils, [`caveats`] what every answer opens
//! with and how it fits the byte budget, [`state`] what one server's calls share.

mod authority_status;
mod capabilities;
pub(crate) mod caveats;
pub(crate) mod diagnostics;
pub(crate) mod inspect;
pub(crate) mod run;
mod state;
pub(crate) mod status;

use std::sync::Arc;

use rmcp::handler::server::tool::{ToolCallContext, ToolRoute, ToolRouter};

pub(crate) use run::Serves;
use run::{AspTool, definition, invoke};
pub use state::DEFAULT_BUDGET_BYTES;
pub(crate) use state::State;

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

/// The router of all tools, for the server `S`.
pub(crate) fn router<S: Serves>() -> ToolRouter<S> {
    ToolRouter::new()
        .with_route(route::<status::AspStatus, S>())
        .with_route(route::<capabilities::AspCapabilities, S>())
        .with_route(route::<authority_status::AspAuthorityStatus, S>())
        .with_route(route::<inspect::AspInspect, S>())
        .with_route(route::<diagnostics::AspDiagnostics, S>())
}

/// The route of tool `T`, whose one value serves every call of the server.
fn route<T: AspTool, S: Serves>() -> ToolRoute<S> {
    let tool = Arc::new(T::default());
    ToolRoute::new_dyn(definition::<T>(), move |context: ToolCallContext<'_, S>| {
        let ToolCallContext {
            request_context,
            service,
            arguments,
            ..
        } = context;
        let state = service.state();
        let tool = tool.clone();
        Box::pin(async move { Ok(invoke(tool, state, arguments, request_context).await.into()) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::JsonObject;
    use run::{drop_nulls, parse, portable};
    use serde_json::Value;
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
