//! Terminal output: tables, CSV, progress bars and numbers.
//!
//! Column names and values come from the model's SQL and the database: what is printed to a terminal
//! has its control characters and bidirectional controls escaped
//! ([`display_safe`]: `ESC[2J` is printed as `\u{1b}[2J`, never
//! sent). CSV written to a file keeps the data exact ([`CsvText`]).

use std::borrow::Cow;
use std::io::Write;

use comfy_table::{ContentArrangement, Table, presets};
use dual_core::escape::display_safe;
use dual_core::{Column, Row};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

/// Longest cell shown in a table, in characters.
const MAX_CELL: usize = 36;

/// A table of `rows` under the `columns` headers (or the first row's keys when `columns` is empty),
/// for a terminal: names and cells escaped ([`display_safe`]), long cells cut.
#[must_use]
pub fn table(columns: &[Column], rows: &[Row]) -> Table {
    let names: Vec<String> = if columns.is_empty() {
        rows.first()
            .map(|r| r.keys().cloned().collect())
            .unwrap_or_default()
    } else {
        columns.iter().map(|c| c.name.clone()).collect()
    };
    let mut table = Table::new();
    table
        .load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(names.iter().map(|name| display_safe(name)));
    for row in rows {
        table.add_row(
            names
                .iter()
                .map(|name| truncate(&display_safe(&cell(row.get(name).unwrap_or(&Value::Null)))))
                .collect::<Vec<_>>(),
        );
    }
    table
}

/// A value as table or CSV text: strings bare, null empty, everything else as JSON.
#[must_use]
pub fn cell(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn truncate(text: &str) -> String {
    if text.chars().count() <= MAX_CELL {
        text.to_owned()
    } else {
        let mut short: String = text.chars().take(MAX_CELL - 1).collect();
        short.push('…');
        short
    }
}

/// What CSV text holds: the data exact, or escaped for a terminal. Chosen once, for the file
/// written, by [`CsvText::for_file`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsvText {
    /// Every value byte for byte (a file for a spreadsheet or a program: data, not display).
    Exact,
    /// Every value and name through [`display_safe`] (the "file" is a terminal, e.g. `--csv
    /// /dev/tty`): `ESC[2J` is written as `\u{1b}[2J`.
    Escaped,
}

impl CsvText {
    /// [`Escaped`](Self::Escaped) when `file` is a terminal, else [`Exact`](Self::Exact).
    #[must_use]
    pub fn for_file(file: &impl std::io::IsTerminal) -> Self {
        if file.is_terminal() {
            Self::Escaped
        } else {
            Self::Exact
        }
    }

    fn apply(self, text: &str) -> Cow<'_, str> {
        match self {
            Self::Exact => Cow::Borrowed(text),
            Self::Escaped => display_safe(text),
        }
    }
}

/// Writes `rows` as CSV lines (RFC 4180 quoting) with the `names` columns, as `text` says.
///
/// # Errors
/// The writer's IO error.
pub fn write_csv_rows(
    out: &mut impl Write,
    names: &[String],
    rows: &[Row],
    text: CsvText,
) -> std::io::Result<()> {
    for row in rows {
        let line: Vec<String> = names
            .iter()
            .map(|name| csv_field(&text.apply(&cell(row.get(name).unwrap_or(&Value::Null)))))
            .collect();
        writeln!(out, "{}", line.join(","))?;
    }
    Ok(())
}

/// Writes the CSV header line, as `text` says.
///
/// # Errors
/// The writer's IO error.
pub fn write_csv_header(out: &mut impl Write, names: &[String], text: CsvText) -> std::io::Result<()> {
    let line: Vec<String> = names.iter().map(|n| csv_field(&text.apply(n))).collect();
    writeln!(out, "{}", line.join(","))
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// A progress bar over `total` rows, drawn on stderr (hidden when stderr is not a terminal).
#[must_use]
pub fn progress(total: u64) -> ProgressBar {
    let style = ProgressStyle::with_template(
        "  {spinner} [{bar:40}] {human_pos}/{human_len} rows  {per_sec}  eta {eta}",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(total).with_style(style)
}

/// A spinner for a query still running: `set_message` it with the rows so far.
#[must_use]
pub fn pending_spinner() -> ProgressBar {
    let style = ProgressStyle::with_template("  {spinner} query running: {msg}  ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let spinner = ProgressBar::new_spinner().with_style(style);
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    spinner
}

/// `1234567` → `1,234,567`.
#[must_use]
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `41234567` → `41.2 MB`.
#[must_use]
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(269_000), "269,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(41_234_567), "41.2 MB");
    }

    #[test]
    fn csv_quotes_what_needs_it() {
        let rows: Vec<Row> = vec![
            json!({"a": "x,y", "b": "say \"hi\"", "c": null, "d": 3})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ];
        let names: Vec<String> = ["a", "b", "c", "d"].map(str::to_owned).to_vec();
        let mut out = Vec::new();
        write_csv_header(&mut out, &names, CsvText::Exact).expect("write");
        write_csv_rows(&mut out, &names, &rows, CsvText::Exact).expect("write");
        assert_eq!(
            String::from_utf8_lossy(&out),
            "a,b,c,d\n\"x,y\",\"say \"\"hi\"\"\",,3\n"
        );
    }

    fn hostile_rows() -> (Vec<String>, Vec<Row>) {
        let rows: Vec<Row> = vec![
            json!({"x\u{1b}[2J": "clear\u{1b}[2J\u{9b}31m\r\nforged", "name": "\u{202e}gnp.exe"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ];
        (vec!["x\u{1b}[2J".to_owned(), "name".to_owned()], rows)
    }

    #[test]
    fn tables_escape_names_and_values() {
        let (_, rows) = hostile_rows();
        let text = table(&[], &rows).to_string();
        assert!(
            !text.chars().any(|c| c != '\n' && dual_core::escape::is_hidden(c)),
            "{text:?}"
        );
        assert!(text.contains(r"x\u{1b}[2J"), "{text}");
        assert!(text.contains(r"clear\u{1b}[2J\u{9b}31m\r\nforged"), "{text}");
        assert!(text.contains(r"\u{202e}gnp.exe"), "{text}");
        assert_eq!(text.lines().count(), 5, "one line per row: {text}");
    }

    #[test]
    fn csv_is_exact_for_a_file_and_escaped_for_a_terminal() {
        let (names, rows) = hostile_rows();
        let write = |text| {
            let mut out = Vec::new();
            write_csv_header(&mut out, &names, text).expect("write");
            write_csv_rows(&mut out, &names, &rows, text).expect("write");
            String::from_utf8_lossy(&out).into_owned()
        };
        assert_eq!(
            write(CsvText::Exact),
            "x\u{1b}[2J,name\n\"clear\u{1b}[2J\u{9b}31m\r\nforged\",\u{202e}gnp.exe\n"
        );
        assert_eq!(
            write(CsvText::Escaped),
            r"x\u{1b}[2J,name".to_owned()
                + "\n"
                + r"clear\u{1b}[2J\u{9b}31m\r\nforged,\u{202e}gnp.exe"
                + "\n"
        );
    }

    #[test]
    fn tables_truncate_long_cells() {
        let rows: Vec<Row> = vec![
            json!({"name": "x".repeat(100)})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ];
        let text = table(&[], &rows).to_string();
        assert!(text.contains('…') && !text.contains(&"x".repeat(40)), "{text}");
    }
}
