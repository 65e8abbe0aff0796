//! Strict arguments of the demo's tools: each error names the field and what it must be, and a
//! result is named after what was asked.

use dual_server::{CreateResponse, MAX_SAMPLE_SIZE};
use rmcp::model::JsonObject;
use serde_json::{Value, json};

use crate::ipeds::sqlite::{INSTITUTIONS_KIND, SQL_KIND};

/// The longest title derived from a SQL statement, in characters.
const MAX_TITLE_CHARS: usize = 80;
/// The request of a `query` call: `sql` (a string, required) and `sample_size` (an integer from 1
/// to [`MAX_SAMPLE_SIZE`], optional), nothing else.
pub(super) fn query_request(arguments: &JsonObject) -> Result<CreateResponse, String> {
    dual_rmcp::arguments::reject_unknown_arguments(arguments, "query", &["sql", "sample_size"])?;
    let sql = match arguments.get("sql") {
        None | Some(Value::Null) => {
            return Err("`sql` is required: one read-only SELECT statement".to_owned());
        }
        Some(Value::String(sql)) => sql,
        Some(_) => return Err("`sql` must be a string: one read-only SELECT statement".to_owned()),
    };
    let mut request = CreateResponse::new(SQL_KIND, json!({ "sql": sql })).name(sql_title(sql));
    match arguments.get("sample_size") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) => {
            let size = n
                .as_u64()
                .filter(|n| (1..=MAX_SAMPLE_SIZE).contains(n))
                .ok_or_else(|| format!("`sample_size` must be an integer between 1 and {MAX_SAMPLE_SIZE}"))?;
            request = request.sample_size(size);
        }
        Some(_) => {
            return Err(format!(
                "`sample_size` must be an integer between 1 and {MAX_SAMPLE_SIZE}"
            ));
        }
    }
    Ok(request)
}

/// The request of a `search_institutions` call: `state` (two letters) and `control` (`public` or
/// `private`), both optional, nothing else.
pub(super) fn search_request(arguments: &JsonObject) -> Result<CreateResponse, String> {
    dual_rmcp::arguments::reject_unknown_arguments(arguments, "search_institutions", &["state", "control"])?;
    let state = match arguments.get("state") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.len() == 2 && s.chars().all(|c| c.is_ascii_alphabetic()) => {
            Some(s.to_ascii_uppercase())
        }
        Some(Value::String(_)) => {
            return Err("`state` must be a two-letter US state code, e.g. \"NJ\"".to_owned());
        }
        Some(_) => {
            return Err("`state` must be a string: a two-letter US state code, e.g. \"NJ\"".to_owned());
        }
    };
    let control = match arguments.get("control") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) if c == "public" || c == "private" => Some(c.clone()),
        Some(_) => return Err("`control` must be the string \"public\" or \"private\"".to_owned()),
    };
    let title = match (&control, &state) {
        (Some(control), Some(state)) => format!("{} institutions in {state}", capitalised(control)),
        (Some(control), None) => format!("{} institutions", capitalised(control)),
        (None, Some(state)) => format!("Institutions in {state}"),
        (None, None) => "All institutions".to_owned(),
    };
    let mut params = JsonObject::new();
    if let Some(state) = state {
        params.insert("state".to_owned(), Value::String(state));
    }
    if let Some(control) = control {
        params.insert("control".to_owned(), Value::String(control));
    }
    Ok(CreateResponse::new(INSTITUTIONS_KIND, Value::Object(params)).name(title))
}

/// The statement on one line, cut to [`MAX_TITLE_CHARS`] characters.
fn sql_title(sql: &str) -> String {
    let one_line = sql
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(';')
        .trim_end()
        .to_owned();
    if one_line.chars().count() <= MAX_TITLE_CHARS {
        return one_line;
    }
    let mut title: String = one_line.chars().take(MAX_TITLE_CHARS - 1).collect();
    title.push('…');
    title
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    fn query_error(value: Value) -> String {
        query_request(&args(value)).err().unwrap_or_default()
    }

    fn search_error(value: Value) -> String {
        search_request(&args(value)).err().unwrap_or_default()
    }

    #[test]
    fn wrong_types_name_the_field_and_the_expected_type() {
        assert!(query_error(json!({"sql": 123})).starts_with("`sql` must be a string"));
        assert!(query_error(json!({})).starts_with("`sql` is required"));
        assert_eq!(
            query_error(json!({"sql": "SELECT 1", "sample_size": "5"})),
            "`sample_size` must be an integer between 1 and 1000"
        );
        assert!(
            query_error(json!({"sql": "SELECT 1", "sample_size": 0})).starts_with("`sample_size` must be")
        );
        assert!(search_error(json!({"state": 7})).starts_with("`state` must be a string"));
        assert!(search_error(json!({"state": "New Jersey"})).starts_with("`state` must be a two-letter"));
        assert!(search_error(json!({"control": true})).starts_with("`control` must be the string"));
    }

    #[test]
    fn unknown_arguments_are_named() {
        assert_eq!(
            query_error(json!({"sql": "SELECT 1", "limit": 5})),
            "unknown argument `limit`: `query` takes only `sql` and `sample_size`"
        );
        assert_eq!(
            search_error(json!({"city": "Newark", "zip": "07102"})),
            "unknown arguments `city`, `zip`: `search_institutions` takes only `state` and `control`"
        );
        for error in [query_error(json!({"sql": 1})), search_error(json!({"x": 1}))] {
            assert!(!error.contains("Query failed"), "{error}");
        }
    }

    #[test]
    fn huge_argument_names_are_not_echoed_whole() {
        let name = "k".repeat(1 << 20);
        let mut arguments = JsonObject::new();
        arguments.insert(name, Value::Null);
        for i in 0..100 {
            arguments.insert(format!("{i}{}", "z".repeat(1000)), Value::Null);
        }
        let error = query_request(&arguments).err().unwrap_or_default();
        assert!(error.len() < 2_000, "{} bytes", error.len());
        assert!(error.contains("bytes in all]"), "{error}");
    }

    #[test]
    fn titles_say_what_was_asked() {
        assert_eq!(
            sql_title("SELECT name\n  FROM institutions ;"),
            "SELECT name FROM institutions"
        );
        let long = format!("SELECT {} FROM t", "x, ".repeat(40));
        let title = sql_title(&long);
        assert_eq!(title.chars().count(), MAX_TITLE_CHARS);
        assert!(title.ends_with('…'));
        for (value, title) in [
            (
                json!({"state": "nj", "control": "public"}),
                "Public institutions in NJ",
            ),
            (json!({"state": "CA"}), "Institutions in CA"),
            (json!({"control": "private"}), "Private institutions"),
            (json!({}), "All institutions"),
        ] {
            let request = search_request(&args(value)).expect("valid");
            assert!(format!("{request:?}").contains(title), "{title}");
        }
    }
}
