//! Reading a rendered JSON document the way a check of its text does: [`strings`], every string in
//! it, keys included (what a model or a person reads of a tool result, a listing or a prompt).

use serde_json::Value;

/// Every string of `value`, keys included, in document order.
///
/// ```
/// use serde_json::json;
///
/// let value = json!({"name": "a", "rows": [{"b": 1}, "c"]});
/// assert_eq!(dual_testkit::json::strings(&value), ["name", "a", "rows", "b", "c"]);
/// ```
#[must_use]
pub fn strings(value: &Value) -> Vec<&str> {
    match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        Value::Object(map) => map
            .iter()
            .flat_map(|(key, value)| std::iter::once(key.as_str()).chain(strings(value)))
            .collect(),
        _ => Vec::new(),
    }
}
