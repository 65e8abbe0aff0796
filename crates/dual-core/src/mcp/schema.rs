//! The JSON Schema a tool declares as its `outputSchema`.

use serde_json::{Value, json};

use crate::ColumnType;

/// The JSON Schema (draft 2020-12) of [`StructuredContent`](super::StructuredContent): an object at the
/// root, as MCP requires of `outputSchema`. Every tool result built by [`DualResponse`](super::DualResponse)
/// validates against it.
#[must_use]
pub fn output_schema() -> Value {
    let column_types: Vec<&str> = ColumnType::ALL.iter().map(|t| t.as_str()).collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "DualResponse",
        "description": "A sample of the result for the model, its total count, and a link to the full result.",
        "type": "object",
        "required": ["results", "resource", "metadata"],
        "properties": {
            "results": {
                "description": "Sample rows.",
                "type": "array",
                "items": {"type": "object"}
            },
            "resource": {
                "type": "object",
                "required": ["uri", "url", "name", "mimeType"],
                "properties": {
                    "uri": {"type": "string", "description": "MCP resource URI, e.g. resource://{id}."},
                    "url": {"type": "string", "description": "REST URL of the full result."},
                    "name": {"type": "string"},
                    "mimeType": {"type": "string"}
                }
            },
            "metadata": {
                "type": "object",
                "required": ["total_count", "sample_count", "columns", "executed_at", "expires_at"],
                "properties": {
                    "total_count": {"type": "integer", "minimum": 0},
                    "sample_count": {"type": "integer", "minimum": 0},
                    "columns": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name", "type"],
                            "properties": {
                                "name": {"type": "string"},
                                "type": {"enum": column_types}
                            }
                        }
                    },
                    "executed_at": {"type": "string", "format": "date-time"},
                    "expires_at": {"type": ["string", "null"], "format": "date-time"},
                    "status": {
                        "enum": ["pending", "ready", "failed"],
                        "description": "Absent when ready. `pending`: the query is still running; total_count counts the rows so far."
                    }
                }
            }
        }
    })
}
