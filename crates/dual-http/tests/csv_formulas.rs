//! CSV exports neutralise cells a spreadsheet would run as formulas, by default; `CsvFormulas::Verbatim`
//! writes them as they are.

mod common;
mod handle;

use dual_http::{CsvFormulas, DualHttp};
use dual_server::DualResponseServer;
use dual_testkit::executor::Stored;
use handle::{bytes, get};
use http::header;
use serde_json::json;

/// A resource of one hostile row, and the handler `configure` builds over it.
async fn export(configure: impl FnOnce(dual_http::DualHttpBuilder) -> dual_http::DualHttpBuilder) -> String {
    let row = json!({
        "=HYPERLINK(\"https://evil.example\")": "=1+2",
        "number": -5,
        "text": "-5",
        "at": "@SUM(A1:A9)",
        "tab": "\t=1",
        "cr": "\r=1",
        "semicolon": "a;=1+2",
        "plain": "Rutgers, NJ",
    });
    let server = DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .executor(
            "stored",
            Stored::new(vec![row.as_object().cloned().unwrap_or_default()]),
        )
        .without_sweeper()
        .build()
        .expect("valid configuration");
    let id = common::create_of(&server, "stored", json!({})).await;
    let handler = configure(DualHttp::builder(server)).build();
    let response = get(&handler, &format!("/{id}/data"), &[(header::ACCEPT, "text/csv")]).await;
    assert_eq!(response.status(), 200);
    String::from_utf8(bytes(response).await.to_vec()).expect("UTF-8")
}

/// The CSV's fields, in order (RFC 4180, enough for these rows: quoted fields hold no newline).
fn fields(csv: &str) -> Vec<Vec<String>> {
    csv.split("\r\n")
        .filter(|line| !line.is_empty())
        .map(|line| {
            let mut fields = vec![String::new()];
            let mut quoted = false;
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                let field = fields.last_mut().expect("a field");
                match (c, quoted) {
                    ('"', true) if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    ('"', _) => quoted = !quoted,
                    (',', false) => fields.push(String::new()),
                    (c, _) => field.push(c),
                }
            }
            fields
        })
        .collect()
}

/// The value under `name` (the header as written) in the first row.
fn cell<'a>(table: &'a [Vec<String>], name: &str) -> &'a str {
    let at = table[0]
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("{name} in {table:?}"));
    &table[1][at]
}

#[tokio::test]
async fn by_default_formula_cells_and_headers_get_a_leading_quote_mark() {
    let csv = export(|builder| builder).await;
    let table = fields(&csv);
    assert_eq!(cell(&table, "'=HYPERLINK(\"https://evil.example\")"), "'=1+2");
    assert_eq!(cell(&table, "number"), "-5", "a JSON number is not a formula");
    assert_eq!(cell(&table, "text"), "'-5", "a string is");
    assert_eq!(cell(&table, "at"), "'@SUM(A1:A9)");
    assert_eq!(cell(&table, "tab"), "'\t=1");
    assert_eq!(cell(&table, "cr"), "'\r=1");
    assert_eq!(cell(&table, "semicolon"), "a;=1+2");
    assert!(
        csv.contains("\"a;=1+2\""),
        "a field holding `;` is quoted: {csv:?}"
    );
    assert_eq!(cell(&table, "plain"), "Rutgers, NJ");
    for row in &table {
        for field in row {
            assert!(
                !field.starts_with(['=', '+', '-', '@', '\t', '\r']) || field == "-5",
                "{field:?}"
            );
        }
    }
}

#[tokio::test]
async fn verbatim_writes_strings_as_they_are() {
    let csv = export(|builder| builder.csv_formulas(CsvFormulas::Verbatim)).await;
    let table = fields(&csv);
    assert_eq!(cell(&table, "=HYPERLINK(\"https://evil.example\")"), "=1+2");
    assert_eq!(cell(&table, "text"), "-5");
    assert_eq!(cell(&table, "at"), "@SUM(A1:A9)");
    assert_eq!(cell(&table, "tab"), "\t=1");
    assert_eq!(cell(&table, "semicolon"), "a;=1+2");
    assert!(!csv.contains("\"a;=1+2\""), "RFC 4180 quoting only: {csv:?}");
}

#[test]
fn the_default_is_neutralisation() {
    assert_eq!(CsvFormulas::default(), CsvFormulas::Neutralize);
    assert_eq!(
        dual_http::HttpConfig::default().csv_formulas(),
        CsvFormulas::Neutralize
    );
}
