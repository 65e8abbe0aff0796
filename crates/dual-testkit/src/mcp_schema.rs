//! The published MCP schemas, as excerpts vendored in `mcp-schemas/<version>.json` (feature
//! `mcp-schema`): each an attributed copy of the definitions a tool server's results use (made with
//! `mcp-schemas/excerpt.py`), for validating what a server sends in each protocol version.
//!
//! ```
//! use serde_json::json;
//!
//! let result = json!({"content": [{"type": "text", "text": "3 rows"}], "isError": false});
//! dual_testkit::mcp_schema::assert_valid("2025-06-18", "CallToolResult", &result);
//! let unknown_field = json!({"content": [], "resultType": "complete"});
//! assert!(!dual_testkit::mcp_schema::validator("2025-06-18", "CallToolResult").is_valid(&unknown_field));
//! ```

use serde_json::Value;

/// The versions with a vendored excerpt, oldest first.
pub const VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The vendored excerpt of `version`'s published schema; panics for a version without one.
fn excerpt(version: &str) -> &'static str {
    match version {
        "2024-11-05" => include_str!("../mcp-schemas/2024-11-05.json"),
        "2025-03-26" => include_str!("../mcp-schemas/2025-03-26.json"),
        "2025-06-18" => include_str!("../mcp-schemas/2025-06-18.json"),
        "2025-11-25" => include_str!("../mcp-schemas/2025-11-25.json"),
        "2026-07-28" => include_str!("../mcp-schemas/2026-07-28.json"),
        other => panic!("no vendored MCP schema for {other} (there are {VERSIONS:?})"),
    }
}

/// A validator for definition `name` of `version`'s excerpt, with `additionalProperties: false`
/// added to the definitions a server sends (none of them sets it), so that a field the version does
/// not define fails too; `format` is asserted in every draft.
///
/// # Panics
///
/// For a version without an excerpt, or a definition the excerpt does not hold.
#[must_use]
pub fn validator(version: &str, name: &str) -> jsonschema::Validator {
    let mut schema: Value =
        serde_json::from_str(excerpt(version)).unwrap_or_else(|e| panic!("{version}'s excerpt: {e}"));
    // Draft-07 excerpts keep `definitions`, the 2020-12 one (2026-07-28) `$defs`.
    let key = if schema.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    let definitions = schema[key]
        .as_object_mut()
        .unwrap_or_else(|| panic!("{version}'s excerpt has no {key}"));
    assert!(
        definitions.contains_key(name),
        "{version}'s excerpt has no {name}"
    );
    for definition in definitions.values_mut().filter_map(Value::as_object_mut) {
        if definition.contains_key("properties") {
            definition
                .entry("additionalProperties")
                .or_insert(Value::Bool(false));
        }
    }
    schema["$ref"] = Value::String(format!("#/{key}/{name}"));
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{version}'s excerpt: {e}"))
}

/// Asserts that `value` is valid as definition `name` of `version`'s published schema.
///
/// # Panics
///
/// When it is not, naming every error and where; as [`validator`].
pub fn assert_valid(version: &str, name: &str, value: &Value) {
    let errors: Vec<String> = validator(version, name)
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{version} {name}: {errors:?}\n{value}");
}
