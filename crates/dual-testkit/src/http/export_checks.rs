//! `GET /{id}/data`: the streamed export in its three formats, sorting, and failures.

use http::header;
use serde_json::{Value, json};

use super::Target;
use super::fixtures::{EXECUTOR_SECRET, row, sorted_rows};
use super::support::{Ctx, Reply};

/// Rows of the export checks: more than two executor batches.
pub(crate) const ROWS: u64 = 2_500;

/// The NDJSON media type.
pub(crate) const NDJSON: &str = "application/x-ndjson";

/// The media types an export comes in.
pub(crate) const FORMATS: [&str; 3] = ["application/json", NDJSON, "text/csv"];

fn expect_export(reply: &Reply, check: &str, content_type: &str) {
    reply.expect_complete(check);
    reply.expect_header(check, header::CONTENT_TYPE, content_type);
    reply.expect_header(check, header::CACHE_CONTROL, "no-store");
    reply.expect_vary(check, "accept");
}

pub(crate) async fn json_array<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, check: &str) {
    let before = ctx.access_count(id).await;
    for accept in [
        None,
        Some("application/json"),
        Some("*/*"),
        Some("text/html, */*;q=0.1"),
    ] {
        let reply = ctx.data(id, "").header_opt(header::ACCEPT, accept).send().await;
        expect_export(&reply, check, "application/json");
        let rows = reply.json();
        let rows = rows.as_array().map_or(&[][..], Vec::as_slice);
        assert_eq!(rows.len() as u64, ROWS, "[{check}] {accept:?} row count");
        for (i, got) in rows.iter().enumerate() {
            assert_eq!(got, &Value::Object(row(i as u64)), "[{check}] row {i}");
        }
    }
    assert_eq!(
        ctx.access_count(id).await,
        before + 4,
        "[{check}] each export counts"
    );
}

pub(crate) async fn ndjson<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, check: &str) {
    let reply = ctx.data(id, "").accept(NDJSON).send().await;
    expect_export(&reply, check, NDJSON);
    assert!(
        reply.body.ends_with(b"\n"),
        "[{check}] every line ends with a newline"
    );
    let lines = reply.ndjson();
    assert_eq!(lines.len() as u64, ROWS, "[{check}] line count");
    for (i, got) in lines.into_iter().enumerate() {
        assert_eq!(got, Value::Object(row(i as u64)), "[{check}] line {i}");
    }
}

pub(crate) async fn csv<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, check: &str) {
    let reply = ctx.data(id, "").accept("text/csv").send().await;
    expect_export(&reply, check, "text/csv; charset=utf-8; header=present");
    let text = String::from_utf8_lossy(&reply.body);
    let records = parse_csv(&text);
    assert_eq!(records.len() as u64, ROWS + 1, "[{check}] header + rows");
    let header: Vec<&str> = records[0].iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        header,
        ["id", "name", "score", "active", "tags", "note"],
        "[{check}] header row"
    );
    for (i, record) in records[1..].iter().enumerate() {
        let expected = row(i as u64);
        let fields: Vec<(String, bool)> = header
            .iter()
            .map(|name| match &expected[*name] {
                Value::Null => (String::new(), false),
                Value::String(text) => (
                    text.clone(),
                    text.is_empty() || text.contains([',', '"', '\r', '\n']),
                ),
                Value::Array(_) => (expected[*name].to_string(), true),
                other => (other.to_string(), false),
            })
            .collect();
        assert_eq!(record, &fields, "[{check}] row {i}");
    }
}

pub(crate) async fn sorted<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, check: &str) {
    for (query, field, order) in [
        ("sort=id:desc", "id", dual_core::SortOrder::Desc),
        ("sort=score", "score", dual_core::SortOrder::Asc),
        ("sort=score%3Adesc", "score", dual_core::SortOrder::Desc),
    ] {
        let reply = ctx.data(id, query).accept(NDJSON).send().await;
        expect_export(&reply, check, NDJSON);
        let expected = sorted_rows(ROWS, Some(&dual_core::Sort::new(field, order)));
        let got = reply.ndjson();
        assert_eq!(got.len(), expected.len(), "[{check}] {query}");
        assert!(
            got.iter().zip(&expected).all(|(g, e)| g["id"] == e["id"]),
            "[{check}] {query}: order differs"
        );
    }
}

pub(crate) async fn bad_queries<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, check: &str) {
    let before = ctx.access_count(id).await;
    for (query, field) in [
        ("sort=nope:desc", "sort.field"),
        ("sort=id:sideways", "sort.order"),
        ("sort=", "sort.field"),
        ("limit=0", "`limit`"),
        ("offset=-1", "`offset`"),
        ("page=2", "`page`"),
        ("sort=id&sort=score", "`sort`"),
        ("sort=%ZZ", "query string"),
    ] {
        let reply = ctx.data(id, query).send().await;
        reply.expect_invalid(check, query, field);
    }
    // Only `sort=nope:desc` reaches the server: its field is checked against the record's columns,
    // read by the same store call that counts the access. The rest are refused before it.
    assert_eq!(
        ctx.access_count(id).await,
        before + 1,
        "[{check}] exports refused before the server do not count; a sort on no column does"
    );
}

pub(crate) async fn empty<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(0).await;
    let reply = ctx.data(id, "").send().await;
    expect_export(&reply, check, "application/json");
    assert_eq!(reply.json(), json!([]), "[{check}] empty array");
    let reply = ctx.data(id, "").accept(NDJSON).send().await;
    expect_export(&reply, check, NDJSON);
    assert!(reply.body.is_empty(), "[{check}] empty NDJSON");
}

pub(crate) async fn failures<T: Target>(ctx: &Ctx<T>, check: &str) {
    // Fails before the first row: a proper 500.
    let id = ctx
        .create_with(json!({"n": 100, "fail_stream_at": 0}), None)
        .await;
    let message = ctx.data(id, "").send().await.error(check, 500, "query_failed");
    assert!(
        !message.contains(EXECUTOR_SECRET) && !message.contains("SELECT"),
        "[{check}] leak: {message}"
    );
    // Fails after 1,500 rows: the body is aborted, for every format, never a clean end.
    let id = ctx
        .create_with(json!({"n": 3000, "fail_stream_at": 1500}), None)
        .await;
    for accept in FORMATS {
        let reply = ctx.data(id, "").accept(accept).send().await;
        assert_eq!(
            reply.status.as_u16(),
            200,
            "[{check}] {accept}: headers were sent"
        );
        let error = reply.body_error.as_deref().unwrap_or_default();
        assert!(
            !error.is_empty(),
            "[{check}] {accept}: the body must end in an error"
        );
        assert!(!error.contains("SELECT"), "[{check}] {accept}: leak in {error}");
    }
}

/// An RFC 4180 parser: records of `(field, was_quoted)`.
fn parse_csv(text: &str) -> Vec<Vec<(String, bool)>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut chars = text.chars().peekable();
    let mut field = String::new();
    let mut quoted = false;
    let mut in_quotes = false;
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => in_quotes = false,
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' => {
                in_quotes = true;
                quoted = true;
            }
            ',' => record.push((std::mem::take(&mut field), std::mem::replace(&mut quoted, false))),
            '\r' if chars.peek() == Some(&'\n') => {
                chars.next();
                record.push((std::mem::take(&mut field), std::mem::replace(&mut quoted, false)));
                records.push(std::mem::take(&mut record));
            }
            c => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push((field, quoted));
        records.push(record);
    }
    records
}
