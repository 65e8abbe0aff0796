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
            },
            "profile": profile_schema()
        }
    })
}

/// The schema of `structuredContent.profile`, a [`Profile`](crate::profile::Profile).
fn profile_schema() -> Value {
    let number_or_text = json!({"type": ["number", "string", "boolean", "null"]});
    json!({
        "description": "The profile of every column over all rows (present when it was complete at the answer; else read resource://{id}/profile). Statistics named in `approximate` are estimates.",
        "type": "object",
        "required": ["rows", "complete", "columns"],
        "properties": {
            "rows": {"type": "integer", "minimum": 0},
            "complete": {"type": "boolean"},
            "columns": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "type", "count", "nulls", "distinct"],
                    "properties": {
                        "name": {"type": "string"},
                        "type": {"type": "string", "description": "A column type, `mixed` (see `types`) or `null`."},
                        "count": {"type": "integer", "minimum": 0, "description": "Values that are not null."},
                        "nulls": {"type": "integer", "minimum": 0},
                        "distinct": {"type": "integer", "minimum": 0},
                        "min": number_or_text,
                        "max": number_or_text,
                        "mean": {"type": "number"},
                        "p50": {"type": "number"},
                        "p95": {"type": "number"},
                        "nan": {"type": "integer", "minimum": 0},
                        "infinities": {"type": "integer", "minimum": 0},
                        "histogram": {
                            "type": "array",
                            "maxItems": crate::profile::MAX_BINS,
                            "items": {
                                "type": "object",
                                "required": ["from", "to", "count"],
                                "properties": {
                                    "from": {"type": "number"},
                                    "to": {"type": "number"},
                                    "count": {"type": "integer", "minimum": 0}
                                }
                            }
                        },
                        "top": {
                            "type": "array",
                            "maxItems": crate::profile::MAX_TOP_VALUES,
                            "items": {
                                "type": "object",
                                "required": ["value", "count"],
                                "properties": {"value": number_or_text, "count": {"type": "integer", "minimum": 0}}
                            }
                        },
                        "types": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["type", "count"],
                                "properties": {"type": {"type": "string"}, "count": {"type": "integer", "minimum": 0}}
                            }
                        },
                        "cut": {"type": "array", "items": {"enum": ["min", "max", "top"]}}
                    }
                }
            },
            "approximate": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["column", "stats"],
                    "properties": {
                        "column": {"type": "string"},
                        "stats": {"type": "array", "items": {"enum": ["distinct", "p50", "p95", "histogram"]}}
                    }
                }
            },
            "columns_omitted": {"type": "integer", "minimum": 0}
        }
    })
}
