//! Round trips of [`ParquetEncoder`] through arrow-rs's own Parquet reader.

use ::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use ::parquet::basic::Compression;
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use bytes::Bytes;
use dual_core::ColumnType;
use serde_json::{Value, json};

use std::sync::Arc;

use super::*;
use crate::arrow::{BATCH_ROWS, TYPE_METADATA_KEY};

/// One column of every type, with the Arrow type the Arrow export gives it.
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

/// Encodes `rows` through the whole protocol: the file's bytes, or the first error.
fn encode(
    columns: &[Column],
    row_group_rows: usize,
    rows: impl IntoIterator<Item = Row>,
) -> Result<Vec<u8>, ArrowExportError> {
    let mut encoder = ParquetEncoder::new(columns, row_group_rows);
    let mut out = Vec::new();
    encoder.open(&mut out)?;
    for row in rows {
        encoder.row(&row, &mut out)?;
    }
    encoder.close(&mut out)?;
    Ok(out)
}

/// Reads a file back: its Arrow schema, its batches and the number of row groups.
fn read(bytes: Vec<u8>) -> (SchemaRef, Vec<RecordBatch>, usize) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(bytes)).expect("a Parquet file");
    let schema = Arc::clone(builder.schema());
    let metadata = builder.metadata();
    let groups = metadata.num_row_groups();
    for group in metadata.row_groups() {
        for column in group.columns() {
            assert_eq!(column.compression(), Compression::ZSTD(ZstdLevel::default()));
        }
    }
    let reader = builder.build().expect("a reader");
    let batches = reader.map(|batch| batch.expect("a well-formed batch")).collect();
    (schema, batches, groups)
}

#[test]
fn every_column_type_round_trips_with_the_arrow_schema() {
    let rows = [
        json!({"id": 1, "ratio": 0.25, "active": true, "name": "Rutgers, \"NJ\"", "founded": "1766-11-10",
               "updated": "2026-01-15T10:30:00.123456789+05:30", "tags": {"k": [1, "x"]}}),
        json!({"id": -9_007_199_254_740_993_i64, "ratio": 3, "active": false, "name": 42, "founded": null,
               "tags": "text"}),
        json!({}),
    ];
    let bytes = encode(&columns(), 10, rows.into_iter().map(row)).expect("encodes");
    assert_eq!(&bytes[..4], b"PAR1");
    assert_eq!(&bytes[bytes.len() - 4..], b"PAR1");
    let (schema, batches, groups) = read(bytes);
    assert_eq!((groups, batches.len()), (1, 1));
    for ((name, column_type, data_type), field) in COLUMNS.iter().zip(schema.fields()) {
        assert_eq!((field.name().as_str(), field.data_type()), (*name, data_type));
        assert!(field.is_nullable());
        assert_eq!(
            field.metadata().get(TYPE_METADATA_KEY).map(String::as_str),
            Some(column_type.as_str())
        );
    }
    let batch = &batches[0];
    assert_eq!(batch.num_rows(), 3);
    let ids = batch.column(0).as_primitive::<Int64Type>();
    assert_eq!(
        (ids.value(0), ids.value(1), ids.is_null(2)),
        (1, -9_007_199_254_740_993, true)
    );
    let ratios = batch.column(1).as_primitive::<Float64Type>();
    assert_eq!((ratios.value(0), ratios.value(1)), (0.25, 3.0));
    let active = batch.column(2).as_boolean();
    assert_eq!(
        (active.value(0), active.value(1), active.is_null(2)),
        (true, false, true)
    );
    let names = batch.column(3).as_string::<i32>();
    assert_eq!((names.value(0), names.value(1)), ("Rutgers, \"NJ\"", "42"));
    let founded = batch.column(4).as_primitive::<Date32Type>();
    assert_eq!((founded.value(0), founded.is_null(1)), (-74_196, true));
    let updated = batch.column(5).as_string::<i32>();
    assert_eq!(updated.value(0), "2026-01-15T10:30:00.123456789+05:30");
    assert!(updated.is_null(1));
    let tags = batch.column(6).as_string::<i32>();
    assert_eq!((tags.value(0), tags.value(1)), (r#"{"k":[1,"x"]}"#, r#""text""#));
}

#[test]
fn row_groups_go_out_as_they_complete() {
    let columns = [Column::new("n", ColumnType::Integer)];
    let mut encoder = ParquetEncoder::new(&columns, BATCH_ROWS);
    let mut out = Vec::new();
    encoder.open(&mut out).expect("opens");
    assert_eq!(out, b"PAR1", "the magic bytes, before any row");
    let mut sent = out.len();
    let mut group_ends = Vec::new();
    for n in 0..3 * BATCH_ROWS + 5 {
        encoder.row(&row(json!({"n": n})), &mut out).expect("a row");
        if out.len() > sent {
            group_ends.push(n + 1);
            sent = out.len();
        }
    }
    // A row group's bytes come out when it is complete, not before and not all at the end.
    assert_eq!(group_ends, [BATCH_ROWS, 2 * BATCH_ROWS, 3 * BATCH_ROWS]);
    encoder.close(&mut out).expect("closes");
    let (_, batches, groups) = read(out);
    assert_eq!(groups, 4);
    let values: Vec<i64> = batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect();
    assert_eq!(values, (0..3 * BATCH_ROWS as i64 + 5).collect::<Vec<_>>());
}

#[test]
fn a_value_that_does_not_fit_is_the_arrow_exports_mismatch() {
    let rows = [json!({"id": 1}), json!({"id": 2}), json!({"id": 1.5})];
    let error = encode(&columns(), 10, rows.into_iter().map(row)).expect_err("1.5 is no integer");
    let ArrowExportError::Mismatch {
        row,
        column,
        column_type,
        ..
    } = &error
    else {
        panic!("expected a mismatch, got {error:?}");
    };
    assert_eq!(
        (*row, column.as_str(), *column_type),
        (2, "id", ColumnType::Integer)
    );
    assert!(error.to_string().contains("Parquet"), "{error}");
}

#[test]
fn an_empty_export_is_a_file_with_the_schema_and_no_rows() {
    let bytes = encode(&columns(), 10, []).expect("encodes");
    let (schema, batches, groups) = read(bytes);
    assert_eq!((schema.fields().len(), groups), (7, 0));
    assert!(batches.iter().all(|b| b.num_rows() == 0));
}

#[test]
fn a_resource_without_columns_is_a_readable_file_without_fields() {
    let rows = (0..5).map(|i| row(json!({"ignored": i})));
    let bytes = encode(&[], 2, rows).expect("encodes");
    let (schema, batches, _) = read(bytes.clone());
    assert!(schema.fields().is_empty());
    // Parquet counts rows by column: with none, the row count is not kept (DESIGN §5 says so).
    let builder = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(bytes)).expect("a Parquet file");
    assert_eq!(builder.metadata().file_metadata().num_rows(), 0);
    assert!(batches.iter().all(|b| b.num_rows() == 0));
}
