//! Round trips of [`ArrowEncoder`] through arrow-rs's own IPC stream reader.

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_ipc::reader::StreamReader;
use arrow_schema::{DataType, SchemaRef};
use serde_json::{Value, json};

use super::*;

/// One column of every type, with the Arrow type it is encoded as.
const COLUMNS: [(&str, ColumnType, DataType); 7] = [
    ("id", ColumnType::Integer, DataType::Int64),
    ("ratio", ColumnType::Number, DataType::Float64),
    ("active", ColumnType::Boolean, DataType::Boolean),
    ("name", ColumnType::String, DataType::Utf8),
    ("founded", ColumnType::Date, DataType::Date32),
    ("updated", ColumnType::Datetime, DataType::Utf8),
    ("tags", ColumnType::Json, DataType::Utf8),
];

fn columns() -> Vec<Column> {
    COLUMNS
        .iter()
        .map(|(name, column_type, _)| Column::new(*name, *column_type))
        .collect()
}

fn row(value: Value) -> Row {
    value.as_object().cloned().unwrap_or_default()
}

/// Encodes `rows` through the whole protocol: the stream's bytes, or the first error.
fn encode(columns: &[Column], rows: impl IntoIterator<Item = Row>) -> Result<Vec<u8>, ArrowExportError> {
    let mut encoder = ArrowEncoder::new(columns);
    let mut out = Vec::new();
    encoder.open(&mut out)?;
    for row in rows {
        encoder.row(&row, &mut out)?;
    }
    encoder.close(&mut out)?;
    Ok(out)
}

/// Reads a stream back: its schema and batches.
fn read(bytes: &[u8]) -> (SchemaRef, Vec<RecordBatch>) {
    let reader = StreamReader::try_new(bytes, None).expect("a stream with a schema");
    let schema = reader.schema();
    (
        schema,
        reader.map(|batch| batch.expect("a well-formed batch")).collect(),
    )
}

#[test]
fn every_column_type_round_trips() {
    let rows = [
        json!({"id": 1, "ratio": 0.25, "active": true, "name": "Rutgers, \"NJ\"", "founded": "1766-11-10",
               "updated": "2026-01-15T10:30:00.123456789+05:30", "tags": {"k": [1, "x"]}}),
        json!({"id": -7, "ratio": 3, "active": false, "name": 42, "founded": "1970-01-02",
               "updated": "2026-01-15", "tags": "plain"}),
        json!({"id": 3.0, "ratio": null, "active": null, "name": null, "founded": null, "updated": null,
               "tags": null, "extra": "ignored"}),
        json!({}),
    ];
    let bytes = encode(&columns(), rows.map(row)).expect("encodes");
    let (schema, batches) = read(&bytes);
    let types: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| (f.name().as_str(), f.data_type().clone()))
        .collect();
    let expected = COLUMNS.map(|(name, _, data_type)| (name, data_type));
    assert_eq!(types, expected);
    assert!(schema.fields().iter().all(|f| f.is_nullable()));
    assert_eq!(
        schema
            .field(5)
            .metadata()
            .get(TYPE_METADATA_KEY)
            .map(String::as_str),
        Some("datetime")
    );
    assert_eq!(batches.len(), 1);
    let batch = &batches[0];
    assert_eq!(batch.num_rows(), 4);
    let ids = batch.column(0).as_primitive::<Int64Type>();
    assert_eq!(ids.iter().collect::<Vec<_>>(), [Some(1), Some(-7), Some(3), None]);
    let ratios = batch.column(1).as_primitive::<Float64Type>();
    assert_eq!(
        ratios.iter().collect::<Vec<_>>(),
        [Some(0.25), Some(3.0), None, None]
    );
    let active = batch.column(2).as_boolean();
    assert_eq!(
        active.iter().collect::<Vec<_>>(),
        [Some(true), Some(false), None, None]
    );
    let names = batch.column(3).as_string::<i32>();
    assert_eq!(
        names.iter().collect::<Vec<_>>(),
        [Some("Rutgers, \"NJ\""), Some("42"), None, None]
    );
    let founded = batch.column(4).as_primitive::<Date32Type>();
    assert_eq!(
        founded.iter().collect::<Vec<_>>(),
        [Some(-74_196), Some(1), None, None]
    );
    let updated = batch.column(5).as_string::<i32>();
    assert_eq!(
        updated.iter().collect::<Vec<_>>(),
        [
            Some("2026-01-15T10:30:00.123456789+05:30"),
            Some("2026-01-15"),
            None,
            None
        ]
    );
    let tags = batch.column(6).as_string::<i32>();
    assert_eq!(
        tags.iter().collect::<Vec<_>>(),
        [Some(r#"{"k":[1,"x"]}"#), Some(r#""plain""#), None, None]
    );
    assert_eq!((tags.null_count(), ids.null_count()), (2, 1));
}

#[test]
fn an_empty_export_is_the_schema_and_the_end_of_stream_marker() {
    let bytes = encode(&columns(), []).expect("encodes");
    let (schema, batches) = read(&bytes);
    assert_eq!(schema.fields().len(), 7);
    assert!(batches.is_empty());
    // The stream ends with the end-of-stream marker: continuation, then a zero length.
    assert_eq!(bytes[bytes.len() - 8..], [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]);
}

#[test]
fn open_writes_the_schema_before_any_row() {
    let mut encoder = ArrowEncoder::new(&columns());
    let mut out = Vec::new();
    assert!(encoder.open(&mut out).is_ok());
    assert!(!out.is_empty());
    let schema_len = out.len();
    // A row short of a full batch writes nothing yet.
    assert!(encoder.row(&row(json!({"id": 1})), &mut out).is_ok());
    assert_eq!(out.len(), schema_len);
}

#[test]
fn more_rows_than_a_batch_make_several_batches() {
    let total = BATCH_ROWS * 2 + 5;
    let rows = (0..total).map(|i| row(json!({"id": i, "name": format!("row {i}")})));
    let bytes = encode(&columns(), rows).expect("encodes");
    let (_, batches) = read(&bytes);
    let sizes: Vec<usize> = batches.iter().map(RecordBatch::num_rows).collect();
    assert_eq!(sizes, [BATCH_ROWS, BATCH_ROWS, 5]);
    let last = batches[2].column(0).as_primitive::<Int64Type>();
    assert_eq!(last.value(4), i64::try_from(total - 1).unwrap_or_default());
}

#[test]
fn large_values_cut_batches_by_bytes() {
    let text = "x".repeat(100 * 1024);
    let rows = (0..25).map(|i| row(json!({"id": i, "name": text})));
    let bytes = encode(&columns(), rows).expect("encodes");
    let (_, batches) = read(&bytes);
    let sizes: Vec<usize> = batches.iter().map(RecordBatch::num_rows).collect();
    // Each batch ends at the row that takes it past 1 MiB: the eleventh.
    assert_eq!(sizes, [11, 11, 3]);
}

#[test]
fn a_resource_without_columns_sends_row_counts() {
    let rows = (0..BATCH_ROWS + 3).map(|i| row(json!({"i": i})));
    let bytes = encode(&[], rows).expect("encodes");
    let (schema, batches) = read(&bytes);
    assert!(schema.fields().is_empty());
    let sizes: Vec<usize> = batches.iter().map(RecordBatch::num_rows).collect();
    assert_eq!(sizes, [BATCH_ROWS, 3]);
}

#[test]
fn a_value_that_does_not_fit_is_an_error_naming_row_and_column() {
    let cases = [
        (json!({"id": "7"}), "id", "a string"),
        (json!({"id": 1.5}), "id", "a number with a fraction"),
        (
            json!({"id": 18_446_744_073_709_551_615_u64}),
            "id",
            "an integer beyond the range of Int64",
        ),
        (
            json!({"ratio": 9_007_199_254_740_993_i64}),
            "ratio",
            "an integer that Float64 cannot hold exactly",
        ),
        (json!({"active": 1}), "active", "a number"),
        (json!({"name": ["a"]}), "name", "an array"),
        (
            json!({"founded": "1766-11-31"}),
            "founded",
            "a string that is not a YYYY-MM-DD date",
        ),
        (json!({"updated": 1_768_473_000}), "updated", "a number"),
    ];
    for (bad, column, misfit) in cases {
        let rows = [row(json!({"id": 1})), row(json!({"id": 2})), row(bad.clone())];
        let error = encode(&columns(), rows).err();
        let Some(ArrowExportError::Mismatch {
            row,
            column: name,
            misfit: found,
            ..
        }) = &error
        else {
            panic!("{bad}: expected a mismatch, got {error:?}");
        };
        assert_eq!((*row, name.as_str(), *found), (2, column, misfit), "{bad}");
        let message = error.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains("row 2 ") && message.contains(&format!("`{column}`")),
            "{message}"
        );
    }
}

#[test]
fn a_mismatch_buffers_nothing_of_its_row() {
    let mut encoder = ArrowEncoder::new(&columns());
    let mut out = Vec::new();
    assert!(encoder.open(&mut out).is_ok());
    // `id` fits, `active` does not: `id` must not have been appended alone.
    let bad = row(json!({"id": 1, "active": "yes"}));
    assert!(matches!(
        encoder.row(&bad, &mut out),
        Err(ArrowExportError::Mismatch { .. })
    ));
    assert_eq!(
        (encoder.batches.buffered(), encoder.batches.value_bytes()),
        (0, 0)
    );
}
