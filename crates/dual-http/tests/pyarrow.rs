//! The Arrow and Parquet exports read by a real reader, pyarrow (feature `services`; `bash .ci/services`
//! installs it). Without python3 or pyarrow the tests fail, saying so: they never skip.

mod common;
mod handle;

use std::process::Command;

use dual_http::DualHttp;
use http::{StatusCode, header};
use serde_json::{Value, json};

const ROWS: u64 = 20_000;

/// Reads the stream at `sys.argv[1]` with `pyarrow.ipc.open_stream` and prints what the test checks
/// as one JSON document.
const SCRIPT: &str = r#"
import json, sys
import pyarrow.ipc as ipc

with open(sys.argv[1], "rb") as f:
    reader = ipc.open_stream(f)
    batches = list(reader)
schema = reader.schema
rows = sum(b.num_rows for b in batches)
def row(i):
    offset = i
    for b in batches:
        if offset < b.num_rows:
            return b.slice(offset, 1).to_pylist()[0]
        offset -= b.num_rows
print(json.dumps({
    "rows": rows,
    "batches": [b.num_rows for b in batches],
    "fields": [[f.name, str(f.type), f.nullable,
                (f.metadata or {}).get(b"dual_response.type", b"").decode()] for f in schema],
    "first": row(0),
    "third": row(3),
    "last": row(rows - 1),
}, default=str))
"#;

/// Reads the Parquet file at `sys.argv[1]` with `pyarrow.parquet` and prints its row groups, its
/// fields (with the column type kept in their metadata) and every row, as one JSON document.
const PARQUET_SCRIPT: &str = r#"
import json, sys
import pyarrow.parquet as pq

file = pq.ParquetFile(sys.argv[1])
table = file.read()
meta = file.metadata
print(json.dumps({
    "row_groups": [meta.row_group(i).num_rows for i in range(meta.num_row_groups)],
    "codecs": sorted({meta.row_group(i).column(j).compression
                      for i in range(meta.num_row_groups) for j in range(meta.num_columns)}),
    "fields": [[f.name, str(f.type), f.nullable,
                (f.metadata or {}).get(b"dual_response.type", b"").decode()] for f in table.schema],
    "rows": table.to_pylist(),
}, default=str))
"#;

/// Fails the test, unless python3 can import pyarrow, with what to run.
fn require_pyarrow() {
    let check = Command::new("python3").args(["-c", "import pyarrow"]).output();
    match check {
        Ok(output) if output.status.success() => {}
        Ok(output) => panic!(
            "pyarrow is not installed for python3 ({}): run `bash .ci/services`, which installs it",
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .unwrap_or_default()
        ),
        Err(error) => panic!(
            "python3 could not be run ({error}): install Python 3, then run `bash .ci/services`, \
             which installs pyarrow"
        ),
    }
}

/// Runs `script` on `body` written to a file named `name`: the JSON it prints.
fn run_python(script: &str, name: &str, body: &[u8]) -> Value {
    let dir = std::env::temp_dir().join(format!("dual-http-pyarrow-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, body).expect("export written");
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&path)
        .output()
        .expect("python3 runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "pyarrow could not read the export: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the script's JSON")
}

#[tokio::test]
async fn pyarrow_reads_the_arrow_export() {
    require_pyarrow();
    let server = common::typed::server();
    let id = common::typed::create(&server, json!({"n": ROWS})).await;
    let handler = DualHttp::new(server);
    let response = handle::get(
        &handler,
        &format!("/{id}/data"),
        &[(header::ACCEPT, "application/vnd.apache.arrow.stream")],
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "application/vnd.apache.arrow.stream"
    );
    let body = handle::bytes(response).await;
    let read = run_python(SCRIPT, "export.arrows", &body);

    assert_eq!(read["rows"], ROWS);
    assert_eq!(read["batches"], json!([8192, 8192, 3616]));
    assert_eq!(
        read["fields"],
        json!([
            ["id", "int64", true, "integer"],
            ["ratio", "double", true, "number"],
            ["active", "bool", true, "boolean"],
            ["name", "string", true, "string"],
            ["founded", "date32[day]", true, "date"],
            ["updated", "string", true, "datetime"],
            ["tags", "string", true, "json"],
            ["note", "string", true, "string"],
        ])
    );
    assert_eq!(
        read["first"],
        json!({"id": 0, "ratio": 0.0, "active": true, "name": "Name 0, \"quoted\"",
               "founded": "1900-01-01", "updated": "2026-01-15T10:30:00.5+01:00",
               "tags": r#"{"k":0,"even":true}"#, "note": null})
    );
    // Row 3: `note` missing, a null like row 0's JSON null.
    assert_eq!(read["third"]["note"], Value::Null);
    assert_eq!(read["third"]["ratio"], 0.75);
    let last = ROWS - 1;
    assert_eq!(
        read["last"],
        json!({"id": last, "ratio": last as f64 / 4.0, "active": false,
               "name": format!("Name {last}, \"quoted\""), "founded": "1999-08-08",
               "updated": "2026-01-15T10:30:19.5+01:00", "tags": r#"{"k":4,"even":false}"#,
               "note": "odd"})
    );
}

/// Row `i` of kind `typed` as pyarrow gives it back: a `json` value as its JSON text, a missing key
/// as null, numbers as they are.
fn as_read_back(i: u64) -> Value {
    let mut row = common::typed::row(i);
    let tags = serde_json::to_string(&row["tags"]).expect("JSON text");
    row.insert("tags".to_owned(), Value::String(tags));
    row.entry("note").or_insert(Value::Null);
    let ratio = row["ratio"].as_f64().expect("a number");
    row.insert("ratio".to_owned(), json!(ratio));
    Value::Object(row)
}

#[tokio::test]
async fn pyarrow_reads_every_row_and_type_of_the_parquet_export() {
    require_pyarrow();
    let server = common::typed::server();
    let id = common::typed::create(&server, json!({"n": ROWS})).await;
    let handler = DualHttp::builder(server).parquet_row_group_rows(8_000).build();
    let response = handle::get(
        &handler,
        &format!("/{id}/data"),
        &[(header::ACCEPT, "application/vnd.apache.parquet")],
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "application/vnd.apache.parquet"
    );
    let body = handle::bytes(response).await;
    let read = run_python(PARQUET_SCRIPT, "export.parquet", &body);

    assert_eq!(read["row_groups"], json!([8_000, 8_000, 4_000]));
    assert_eq!(read["codecs"], json!(["ZSTD"]));
    assert_eq!(
        read["fields"],
        json!([
            ["id", "int64", true, "integer"],
            ["ratio", "double", true, "number"],
            ["active", "bool", true, "boolean"],
            ["name", "string", true, "string"],
            ["founded", "date32[day]", true, "date"],
            ["updated", "string", true, "datetime"],
            ["tags", "string", true, "json"],
            ["note", "string", true, "string"],
        ])
    );
    let rows = read["rows"].as_array().expect("rows");
    assert_eq!(rows.len() as u64, ROWS);
    for (i, got) in (0..ROWS).zip(rows) {
        assert_eq!(*got, as_read_back(i), "row {i}");
    }
}
