//! The vendored excerpts of the published MCP schemas (`tests/schemas/<version>.json`): each is
//! an attributed copy of the definitions a tool server's results use, for validation only.

use serde_json::Value;

/// A validator for definition `name` of the vendored excerpt of a version's published schema, with
/// `additionalProperties: false` added to the definitions a server sends (none of them sets it), so
/// that a field the version does not define fails too; `format` is asserted in every draft.
pub(crate) fn validator(version: &str, name: &str) -> jsonschema::Validator {
    let path = format!("{}/tests/schemas/{version}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut schema: Value = serde_json::from_str(&text).expect("a JSON schema");
    // Draft-07 excerpts keep `definitions`, the 2020-12 one (2026-07-28) `$defs`.
    let key = if schema.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    if let Some(definitions) = schema[key].as_object_mut() {
        for (_, definition) in definitions.iter_mut() {
            if let Some(definition) = definition.as_object_mut()
                && definition.contains_key("properties")
            {
                definition
                    .entry("additionalProperties")
                    .or_insert(Value::Bool(false));
            }
        }
    }
    schema["$ref"] = Value::String(format!("#/{key}/{name}"));
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("a valid schema")
}

/// Asserts that `value` is valid as definition `name` of `version`'s published schema.
pub(crate) fn assert_valid(version: &str, name: &str, value: &Value) {
    let validator = validator(version, name);
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{version} {name}: {errors:?}\n{value}");
}
