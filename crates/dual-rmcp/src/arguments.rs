//! Strict tool arguments: a tool that takes a fixed set of arguments refuses any other, naming it,
//! so a model that misspells an argument learns it instead of being ignored.

use std::borrow::Cow;

use dual_core::budget::cut_text;
use rmcp::model::JsonObject;

/// The most of an argument's name or value an error message repeats, in bytes; longer text is cut
/// with a marker, so a 1 MB argument name does not come back whole.
pub const MAX_ECHO_BYTES: usize = 128;

/// `text` as an error message repeats it: cut to [`MAX_ECHO_BYTES`] with a marker.
#[must_use]
pub fn echo(text: &str) -> Cow<'_, str> {
    cut_text(text, MAX_ECHO_BYTES)
}

/// `Ok` when every key of `arguments` is one of `known`; else the message for the model naming the
/// unknown ones (at most 8, each cut by [`echo`]) and what `tool` takes.
///
/// ```
/// use dual_rmcp::arguments::reject_unknown_arguments;
/// use serde_json::json;
///
/// let mut arguments = serde_json::Map::new();
/// arguments.insert("sql".to_owned(), json!("SELECT 1"));
/// arguments.insert("limit".to_owned(), json!(5));
/// arguments.insert("zip".to_owned(), json!(1));
/// assert_eq!(reject_unknown_arguments(&arguments, "query", &["sql", "limit", "zip"]), Ok(()));
/// assert_eq!(
///     reject_unknown_arguments(&arguments, "query", &["sql", "params"]),
///     Err("unknown arguments `limit`, `zip`: `query` takes only `sql` and `params`".to_owned())
/// );
/// ```
///
/// # Errors
/// The message, when an argument is not one of `known`.
pub fn reject_unknown_arguments(arguments: &JsonObject, tool: &str, known: &[&str]) -> Result<(), String> {
    let unknown: Vec<String> = arguments
        .keys()
        .filter(|key| !known.contains(&key.as_str()))
        .take(8)
        .map(|key| format!("`{}`", echo(key)))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let noun = if unknown.len() == 1 {
        "argument"
    } else {
        "arguments"
    };
    let takes = match known {
        [] => "no arguments".to_owned(),
        [only] => format!("only `{only}`"),
        [rest @ .., last] => {
            let rest: Vec<String> = rest.iter().map(|name| format!("`{name}`")).collect();
            format!("only {} and `{last}`", rest.join(", "))
        }
    };
    Err(format!(
        "unknown {noun} {}: `{tool}` takes {takes}",
        unknown.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: serde_json::Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_message_names_the_unknown_arguments_and_what_the_tool_takes() {
        let one = object(json!({"uri": "x", "limit": 1}));
        assert_eq!(
            reject_unknown_arguments(&one, "t", &["uri", "format", "sort", "view"]),
            Err("unknown argument `limit`: `t` takes only `uri`, `format`, `sort` and `view`".to_owned())
        );
        assert_eq!(
            reject_unknown_arguments(&object(json!({"uri": "x"})), "t", &[]),
            Err("unknown argument `uri`: `t` takes no arguments".to_owned())
        );
        assert_eq!(reject_unknown_arguments(&JsonObject::new(), "t", &[]), Ok(()));
    }

    #[test]
    fn a_huge_name_is_cut_and_at_most_eight_are_named() {
        let huge = format!("0{}", "x".repeat(1 << 20));
        let many = object(
            json!({ huge.clone(): 1, "a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 1 }),
        );
        let message = reject_unknown_arguments(&many, "t", &["sql"])
            .err()
            .unwrap_or_default();
        assert!(
            message.len() < 2 * MAX_ECHO_BYTES + 200,
            "{} bytes",
            message.len()
        );
        assert!(
            message.starts_with("unknown arguments `0xxx"),
            "the huge name, cut: {message}"
        );
        assert_eq!(message.matches('`').count(), 2 * 8 + 2 + 2, "{message}");
    }
}
