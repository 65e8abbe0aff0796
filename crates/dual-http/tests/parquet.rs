//! Parquet exports through `DualHttp::handle` (feature `parquet`), read back with arrow-rs's Parquet
//! reader; without the feature, the media type and `format=parquet` are ones the server cannot
//! produce (406).

mod common;
mod handle;

use handle::get;

use dual_http::{DualHttp, ResponseBody};
use http::{Response, StatusCode, header};
use serde_json::{Value, json};

const PARQUET: &str = "application/vnd.apache.parquet";

/// A handler over the typed executor, and a resource created with `params`.
async fn typed(params: Value) -> (DualHttp, dual_core::ResourceId) {
    let server = common::typed::server();
    let id = common::typed::create(&server, params).await;
    (DualHttp::new(server), id)
}

/// `GET uri`, accepting only Parquet.
async fn get_parquet(handler: &DualHttp, uri: &str) -> Response<ResponseBody> {
    get(handler, uri, &[(header::ACCEPT, PARQUET)]).await
}

#[cfg(not(feature = "parquet"))]
#[tokio::test]
async fn without_the_feature_parquet_is_not_acceptable() {
    let (handler, id) = typed(json!({"n": 3})).await;
    let response = get_parquet(&handler, &format!("/{id}/data")).await;
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    let body = handle::body_json(response).await;
    assert_eq!(body["error"], "not_acceptable");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.contains("parquet")),
        "{body}"
    );
    let response = get(&handler, &format!("/{id}/data?format=parquet"), &[]).await;
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    assert_eq!(handle::body_json(response).await["error"], "not_acceptable");
}

#[cfg(feature = "parquet")]
mod with_the_feature {
    use super::*;
    use crate::handle::bytes;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Float64Type, Int64Type};
    use arrow_array::{Array, RecordBatch};
    use arrow_schema::{DataType, SchemaRef};
    use bytes::Bytes;
    use dual_core::range::RowRange;
    use dual_server::{Caller, DualResponseServer, LinkFormat, LinkKey};
    use http::Request;
    use http_body_util::BodyExt;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    const ROWS: u64 = 10_007;

    /// The schema, the batches and the row group sizes of a file.
    fn read(bytes: Bytes) -> (SchemaRef, Vec<RecordBatch>, Vec<i64>) {
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).expect("a Parquet file");
        let schema = std::sync::Arc::clone(builder.schema());
        let groups = builder
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows())
            .collect();
        let batches = builder
            .build()
            .expect("a reader")
            .collect::<Result<Vec<_>, _>>()
            .expect("well-formed batches");
        (schema, batches, groups)
    }

    fn ids(batches: &[RecordBatch]) -> Vec<i64> {
        batches
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
            .collect()
    }

    #[tokio::test]
    async fn a_parquet_export_reads_back_with_every_row_and_type() {
        let server = common::typed::server();
        let id = common::typed::create(&server, json!({"n": ROWS})).await;
        let handler = DualHttp::builder(server).parquet_row_group_rows(4_096).build();
        // Asked for compression, a Parquet export is still sent as it is: its pages are compressed.
        let headers = [(header::ACCEPT, PARQUET), (header::ACCEPT_ENCODING, "zstd, gzip")];
        let response = get(&handler, &format!("/{id}/data"), &headers).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], PARQUET);
        assert!(response.headers().get(header::CONTENT_ENCODING).is_none());
        assert!(response.headers().get(header::CONTENT_DISPOSITION).is_none());
        let (schema, batches, groups) = read(bytes(response).await);
        let fields: Vec<_> = schema
            .fields()
            .iter()
            .map(|f| {
                (
                    f.name().as_str(),
                    f.data_type().clone(),
                    f.metadata()["dual_response.type"].clone(),
                )
            })
            .collect();
        let expected = [
            ("id", DataType::Int64, "integer"),
            ("ratio", DataType::Float64, "number"),
            ("active", DataType::Boolean, "boolean"),
            ("name", DataType::Utf8, "string"),
            ("founded", DataType::Date32, "date"),
            ("updated", DataType::Utf8, "datetime"),
            ("tags", DataType::Utf8, "json"),
            ("note", DataType::Utf8, "string"),
        ];
        assert_eq!(fields, expected.map(|(n, t, m)| (n, t, m.to_owned())));
        assert_eq!(groups, [4_096, 4_096, ROWS as i64 - 8_192]);
        assert_eq!(ids(&batches), (0..ROWS as i64).collect::<Vec<_>>());
        let first = &batches[0];
        assert_eq!(first.column(1).as_primitive::<Float64Type>().value(7), 1.75);
        assert!(first.column(2).as_boolean().value(6));
        assert_eq!(first.column(3).as_string::<i32>().value(7), "Name 7, \"quoted\"");
        // 1907-08-08, days before 1970-01-01.
        assert_eq!(first.column(4).as_primitive::<Date32Type>().value(7), -22_792);
        assert_eq!(
            first.column(5).as_string::<i32>().value(7),
            "2026-01-15T10:30:07.5+01:00"
        );
        assert_eq!(
            first.column(6).as_string::<i32>().value(7),
            r#"{"k":2,"even":false}"#
        );
        let notes = first.column(7).as_string::<i32>();
        assert_eq!(
            (notes.value(1), notes.is_null(2), notes.is_null(3)),
            ("odd", true, true)
        );
    }

    #[tokio::test]
    async fn ranges_head_and_format_work_as_for_the_other_formats() {
        let (handler, id) = typed(json!({"n": ROWS})).await;
        let response = get_parquet(&handler, &format!("/{id}/data?offset=9000&limit=3")).await;
        let (_, batches, _) = read(bytes(response).await);
        assert_eq!(ids(&batches), [9_000, 9_001, 9_002]);
        // An empty range is a file with the schema and no rows.
        let response = get_parquet(&handler, &format!("/{id}/data?offset={ROWS}")).await;
        assert_eq!(response.status(), StatusCode::OK);
        let (schema, batches, groups) = read(bytes(response).await);
        assert_eq!((schema.fields().len(), groups.len()), (8, 0));
        assert!(batches.iter().all(|b| b.num_rows() == 0));

        let response = handle::send(
            &handler,
            Request::head(format!("/{id}/data?format=parquet")).header(header::ACCEPT_ENCODING, "gzip"),
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], PARQUET);
        assert!(response.headers().get(header::CONTENT_ENCODING).is_none());
        assert_eq!(
            response.headers()[header::CONTENT_DISPOSITION],
            format!("attachment; filename=\"{id}.parquet\"").as_str()
        );
        assert!(bytes(response).await.is_empty());

        // `format=parquet` overrides `Accept`.
        let accept = [(header::ACCEPT, "text/csv")];
        let response = get(&handler, &format!("/{id}/data?format=parquet&limit=2"), &accept).await;
        assert_eq!(response.headers()[header::CONTENT_TYPE], PARQUET);
        let (_, batches, _) = read(bytes(response).await);
        assert_eq!(ids(&batches), [0, 1]);

        // Unacceptable: 406 naming what the server produces.
        let accept = [(header::ACCEPT, "application/vnd.apache.parquet;q=0")];
        let response = get(&handler, &format!("/{id}/data"), &accept).await;
        assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
        let body = handle::body_json(response).await;
        assert!(
            body["message"].as_str().is_some_and(|m| m.contains(PARQUET)),
            "{body}"
        );
    }

    #[tokio::test]
    async fn a_data_link_downloads_its_range_as_parquet() {
        let server = DualResponseServer::builder()
            .base_url("http://127.0.0.1/resources")
            .executor("typed", common::typed::typed())
            .link_key(LinkKey::from_bytes(&[7; 32]).expect("key"))
            .without_sweeper()
            .build()
            .expect("server");
        let id = common::typed::create(&server, json!({"n": 500})).await;
        let link = server
            .download_link(
                id,
                &Caller::anonymous(),
                LinkFormat::Parquet,
                RowRange::new(100, Some(50)),
                None,
            )
            .await
            .expect("minted");
        let handler = DualHttp::builder(server).prefix("/resources").build();
        let response = handle::send(&handler, Request::get(&link.url)).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], PARQUET);
        assert_eq!(
            response.headers()[header::CONTENT_DISPOSITION],
            format!("attachment; filename=\"{id}.parquet\"").as_str()
        );
        let (_, batches, _) = read(bytes(response).await);
        assert_eq!(ids(&batches), (100..150).collect::<Vec<_>>());
        // The token signs the format: the same link asking for CSV is the unknown id's 404.
        let tampered = link.url.replace("format=parquet", "format=csv");
        let response = handle::send(&handler, Request::get(&tampered)).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn a_value_that_does_not_fit_fails_the_export_before_or_after_the_head() {
        // In the first row group: nothing was sent, so the answer is the error.
        let (handler, id) = typed(json!({"n": 20_000, "bad_at": 100})).await;
        let response = get_parquet(&handler, &format!("/{id}/data")).await;
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(handle::body_json(response).await["error"], "query_failed");

        // After the first row group: the transfer breaks, and what was sent has no footer.
        let server = common::typed::server();
        let id = common::typed::create(&server, json!({"n": 20_000, "bad_at": 9_000})).await;
        let handler = DualHttp::builder(server).parquet_row_group_rows(8_192).build();
        let response = get_parquet(&handler, &format!("/{id}/data")).await;
        assert_eq!(response.status(), StatusCode::OK);
        let mut body = response.into_body();
        let (mut sent, mut failed) = (Vec::new(), false);
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => sent.extend_from_slice(&frame.into_data().unwrap_or_default()),
                Err(_) => failed = true,
            }
        }
        assert!(failed, "the transfer breaks instead of ending cleanly");
        assert!(
            sent.starts_with(b"PAR1") && sent.len() > 4,
            "the first row group was sent"
        );
        assert!(
            ParquetRecordBatchReaderBuilder::try_new(Bytes::from(sent)).is_err(),
            "a reader sees a file without its footer, never a short file that looks complete"
        );
        // The other formats carry the value as it is.
        let response = get(&handler, &format!("/{id}/data?offset=9000&limit=1"), &[]).await;
        let rows: Value = serde_json::from_slice(&bytes(response).await).expect("JSON");
        assert_eq!(rows[0]["id"], "not a number");
    }
}
