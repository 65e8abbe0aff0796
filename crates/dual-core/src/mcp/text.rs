//! The token-lean text a model reads: a summary line and a compact table of the sample.

use std::fmt::Write as _;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{DualResponse, ResponseProfile};
use crate::{Column, Row, status::ResourceStatus};

/// The page size the summary suggests for `resources/read`.
pub(super) const SUGGESTED_PAGE: u64 = 100;

/// What was found (the name with its control characters escaped), how much is shown, where the application gets the rest, and how the model reads
/// more rows itself.
pub(super) fn summary(response: &DualResponse) -> String {
    let shown = response.sample.len() as u64;
    let total = response.total_count;
    let uri = &response.uri;
    let mut text = format!("{}: ", crate::escape::display_safe(&response.name));
    if response.status == ResourceStatus::Pending {
        let _ = write!(
            text,
            "the query is still running ({total} {} so far, {shown} shown below). The application \
             fetches the complete result from {uri} once it is ready; resources/read on {uri} shows \
             its status.",
            rows(total)
        );
        profile_note(&mut text, response);
        return text;
    }
    if total == 0 {
        text.push_str("no rows.");
    } else if shown >= total {
        let _ = write!(text, "all {total} {} shown below.", rows(total));
    } else {
        let _ = write!(text, "{total} {} in total, {shown} shown below.", rows(total));
    }
    let _ = write!(text, " The application fetches the complete result from {uri}");
    if let Some(expires_at) = response.expires_at {
        let _ = write!(text, " (expires {})", seconds(expires_at));
    }
    text.push('.');
    if shown < total {
        let _ = write!(
            text,
            " To read more rows yourself, call resources/read on {uri}?offset={shown}&limit={SUGGESTED_PAGE} \
             (optional &sort=column:asc|desc)."
        );
    }
    profile_note(&mut text, response);
    text
}

/// Where the model finds the profile of every column, when the result has one.
fn profile_note(text: &mut String, response: &DualResponse) {
    let uri = &response.uri;
    match response.profile {
        ResponseProfile::Here(_) => {
            let _ = write!(text, " The profile of all rows is below (also at {uri}/profile).");
        }
        ResponseProfile::Later => {
            let _ = write!(
                text,
                " A profile of every column over all rows (nulls, distinct values, ranges, top values) \
                 is at {uri}/profile (resources/read) once the rows are stored."
            );
        }
        ResponseProfile::None => {}
    }
}

fn rows(n: u64) -> &'static str {
    if n == 1 { "row" } else { "rows" }
}

/// RFC 3339 to the second: the model needs no nanoseconds.
fn seconds(at: OffsetDateTime) -> String {
    let at = at.replace_nanosecond(0).unwrap_or(at);
    at.format(&Rfc3339).unwrap_or_default()
}

/// The typed header once, then one line per row: `id:integer|name:string` / `1|Rutgers`.
///
/// Cells: strings as they are, with `\`, `|`, line feeds, carriage returns and tabs escaped (`\\`,
/// `\|`, `\n`, `\r`, `\t`), and every other control character (NUL, ESC, DEL, C1), the Unicode line
/// and paragraph separators and the bidirectional overrides as `\u{hex}`, so a row is always one
/// line and a cell never carries a terminal escape or an invisible character; an empty string as
/// `""`; `null` as an empty cell; numbers and booleans as JSON; objects and arrays as compact JSON. A row's keys outside `columns` follow as `key=value` cells.
pub(super) fn table(columns: &[Column], sample: &[Row]) -> String {
    let inferred;
    let columns = if columns.is_empty() {
        inferred = crate::column::infer_columns(sample);
        &inferred
    } else {
        columns
    };
    let mut text = String::with_capacity(64 + sample.len() * 64);
    for (i, column) in columns.iter().enumerate() {
        if i > 0 {
            text.push('|');
        }
        escape_into(&mut text, &column.name);
        text.push(':');
        text.push_str(column.column_type.as_str());
    }
    for row in sample {
        text.push('\n');
        for (i, column) in columns.iter().enumerate() {
            if i > 0 {
                text.push('|');
            }
            if let Some(value) = row.get(&column.name) {
                cell_into(&mut text, value);
            }
        }
        for (key, value) in row
            .iter()
            .filter(|(key, _)| !columns.iter().any(|c| &c.name == *key))
        {
            text.push('|');
            escape_into(&mut text, key);
            text.push('=');
            cell_into(&mut text, value);
        }
    }
    text
}

fn cell_into(text: &mut String, value: &Value) {
    match value {
        Value::Null => {}
        Value::String(s) if s.is_empty() => text.push_str("\"\""),
        Value::String(s) => escape_into(text, s),
        Value::Bool(_) | Value::Number(_) => {
            let _ = write!(text, "{value}");
        }
        Value::Array(_) | Value::Object(_) => escape_into(text, &value.to_string()),
    }
}

fn escape_into(text: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => text.push_str("\\\\"),
            '|' => text.push_str("\\|"),
            '\n' => text.push_str("\\n"),
            '\r' => text.push_str("\\r"),
            '\t' => text.push_str("\\t"),
            c if crate::escape::needs_escape(c) => {
                let _ = write!(text, "\\u{{{:x}}}", u32::from(c));
            }
            c => text.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ColumnType;

    fn row(value: Value) -> Row {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn header_once_then_one_line_per_row() {
        let columns = [
            Column::new("id", ColumnType::Integer),
            Column::new("name", ColumnType::String),
            Column::new("ok", ColumnType::Boolean),
        ];
        let sample = [
            row(json!({"id": 1, "name": "Rutgers", "ok": true})),
            row(json!({"id": 2, "name": null, "ok": false})),
        ];
        assert_eq!(
            table(&columns, &sample),
            "id:integer|name:string|ok:boolean\n1|Rutgers|true\n2||false"
        );
    }

    #[test]
    fn separators_and_line_breaks_are_escaped() {
        let columns = [
            Column::new("s", ColumnType::String),
            Column::new("j", ColumnType::Json),
        ];
        let sample = [
            row(json!({"s": "a|b\\c\nd", "j": {"k": "x|y"}})),
            row(json!({"s": ""})),
        ];
        assert_eq!(
            table(&columns, &sample),
            "s:string|j:json\na\\|b\\\\c\\nd|{\"k\":\"x\\|y\"}\n\"\"|"
        );
    }

    #[test]
    fn keys_outside_the_columns_are_kept() {
        let columns = [Column::new("id", ColumnType::Integer)];
        let sample = [row(json!({"id": 1, "extra": "x"}))];
        assert_eq!(table(&columns, &sample), "id:integer\n1|extra=x");
    }

    #[test]
    fn timestamps_lose_their_nanoseconds() {
        let at = OffsetDateTime::UNIX_EPOCH + time::Duration::nanoseconds(1_500_000_123);
        assert_eq!(seconds(at), "1970-01-01T00:00:01Z");
    }

    #[test]
    fn control_characters_are_escaped() {
        let columns = [Column::new("s\u{1b}", ColumnType::String)];
        let sample = [row(
            json!({"s\u{1b}": "nul\0esc\u{1b}[2J\ttab\u{7f}\u{85}\u{2028}\u{202e}"}),
        )];
        assert_eq!(
            table(&columns, &sample),
            "s\\u{1b}:string\nnul\\u{0}esc\\u{1b}[2J\\ttab\\u{7f}\\u{85}\\u{2028}\\u{202e}"
        );
    }

    /// The cells of a table's rows, unescaped: the inverse of [`table`] for string cells.
    fn parse(table: &str) -> Vec<Vec<String>> {
        table
            .split('\n')
            .skip(1)
            .map(|line| {
                let mut cells = vec![String::new()];
                let mut chars = line.chars();
                while let Some(c) = chars.next() {
                    let cell = cells.last_mut().expect("a cell");
                    match c {
                        '|' => cells.push(String::new()),
                        '\\' => match chars.next() {
                            Some('n') => cell.push('\n'),
                            Some('r') => cell.push('\r'),
                            Some('t') => cell.push('\t'),
                            Some('u') => {
                                let hex: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                                let code = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32);
                                cell.push(code.expect("a valid escape"));
                            }
                            Some(other) => cell.push(other),
                            None => panic!("a dangling backslash"),
                        },
                        c => cell.push(c),
                    }
                }
                cells
            })
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn every_string_round_trips_and_rows_stay_one_line(
            cells in proptest::collection::vec(("\\PC{1,6}|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}|\\\\ \\u{2028}\\u{202e}a]{1,8}", "\\PC{1,6}|[\\x00-\\x1f|\\\\a]{1,6}"), 1..5)
        ) {
            let columns = [Column::new("a", ColumnType::String), Column::new("b", ColumnType::String)];
            let sample: Vec<Row> = cells.iter().map(|(a, b)| row(json!({"a": a, "b": b}))).collect();
            let text = table(&columns, &sample);
            proptest::prop_assert_eq!(text.lines().count(), sample.len() + 1);
            proptest::prop_assert!(!text.chars().any(|c| c != '\n' && crate::escape::needs_escape(c) && c != '\\'));
            let parsed = parse(&text);
            let expected: Vec<Vec<String>> = cells.iter().map(|(a, b)| vec![a.clone(), b.clone()]).collect();
            proptest::prop_assert_eq!(parsed, expected);
        }
    }
}
