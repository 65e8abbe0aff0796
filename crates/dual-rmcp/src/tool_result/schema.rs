//! The output schema a dual-response tool declares.

use std::sync::Arc;

use rmcp::model::JsonObject;

/// dual-core's [`output_schema`](dual_core::mcp::output_schema) as rmcp's schema type, ready for
/// [`Tool::with_raw_output_schema`](rmcp::model::Tool::with_raw_output_schema) (or the `output_schema`
/// field). Every result of [`to_call_tool_result`](super::to_call_tool_result) validates against it.
#[must_use]
pub fn output_schema() -> Arc<JsonObject> {
    match dual_core::mcp::output_schema() {
        serde_json::Value::Object(schema) => Arc::new(schema),
        // dual-core builds the schema with `json!({...})`: an object by construction.
        _ => Arc::new(JsonObject::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_the_core_schema_as_an_object() {
        let schema = output_schema();
        assert_eq!(schema["type"], "object");
        assert_eq!(
            serde_json::Value::Object((*schema).clone()),
            dual_core::mcp::output_schema()
        );
    }
}
