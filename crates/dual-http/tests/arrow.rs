//! Arrow IPC stream exports through `DualHttp::handle` (feature `arrow`), read back with arrow-rs's
//! stream reader; without the feature, the media type is one the server cannot produce (406).

mod common;
mod handle;

use handle::get;

use dual_http::{DualHttp, ResponseBody};
use http::{Response, StatusCode, header};
use serde_json::{Value, json};

const ARROW: &str = "application/vnd.apache.arrow.stream";

/// A handler over the typed executor, and a resource created with `params`.
async fn typed(params: Value) -> (DualHttp, dual_core::ResourceId) {
    let server = common::typed::server();
    let id = common::typed::create(&server, params).await;
    (DualHttp::new(server), id)
}

/// `GET uri`, accepting only an Arrow stream.
async fn get_arrow(handler: &DualHttp, uri: &str) -> Response<ResponseBody> {
    get(handler, uri, &[(header::ACCEPT, ARROW)]).await
}

#[cfg(not(feature = "arrow"))]
#[tokio::test]
async fn without_the_feature_arrow_is_not_acceptable() {
    let (handler, id) = typed(json!({"n": 3})).await;
    let response = get_arrow(&handler, &format!("/{id}/data")).await;
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    let body = handle::body_json(response).await;
    assert_eq!(body["error"], "not_acceptable");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.contains("arrow")),
        "{body}"
    );
    // Listed with a format the server can produce, that one is sent.
    let accept = [(
        header::ACCEPT,
        "application/vnd.apache.arrow.stream, text/csv;q=0.5",
    )];
    let response = get(&handler, &format!("/{id}/data"), &accept).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(handle::content_type(&response).starts_with("text/csv"));
}

#[cfg(feature = "arrow")]
mod with_the_feature {
    use super::*;
    use crate::handle::bytes;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Int64Type};
    use arrow_array::{Array, RecordBatch};
    use arrow_ipc::reader::StreamReader;
    use arrow_schema::{DataType, SchemaRef};
    use http::Request;
    use http_body_util::BodyExt;

    const ROWS: u64 = 10_007;

    fn read(bytes: &[u8]) -> (SchemaRef, Vec<RecordBatch>) {
        let reader = StreamReader::try_new(bytes, None).expect("an Arrow stream");
        let schema = reader.schema();
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .expect("well-formed batches");
        (schema, batches)
    }

    fn ids(batches: &[RecordBatch]) -> Vec<i64> {
        batches
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
            .collect()
    }

    #[tokio::test]
    async fn an_arrow_export_reads_back_with_every_row() {
        let (handler, id) = typed(json!({"n": ROWS})).await;
        let response = get_arrow(&handler, &format!("/{id}/data")).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], ARROW);
        let vary: Vec<_> = response.headers().get_all(header::VARY).iter().collect();
        assert!(vary.iter().any(|v| *v == "accept"), "{vary:?}");
        let (schema, batches) = read(&bytes(response).await);
        let fields: Vec<_> = schema
            .fields()
            .iter()
            .map(|f| (f.name().as_str(), f.data_type().clone()))
            .collect();
        assert_eq!(
            fields,
            [
                ("id", DataType::Int64),
                ("ratio", DataType::Float64),
                ("active", DataType::Boolean),
                ("name", DataType::Utf8),
                ("founded", DataType::Date32),
                ("updated", DataType::Utf8),
                ("tags", DataType::Utf8),
                ("note", DataType::Utf8),
            ]
        );
        let sizes: Vec<usize> = batches.iter().map(RecordBatch::num_rows).collect();
        assert_eq!(sizes, [8_192, ROWS as usize - 8_192]);
        assert_eq!(ids(&batches), (0..ROWS as i64).collect::<Vec<_>>());
        let first = &batches[0];
        assert_eq!(first.column(3).as_string::<i32>().value(7), "Name 7, \"quoted\"");
        // 1907-08-08, days before 1970-01-01.
        assert_eq!(first.column(4).as_primitive::<Date32Type>().value(7), -22_792);
        assert_eq!(
            first.column(6).as_string::<i32>().value(7),
            r#"{"k":2,"even":false}"#
        );
        let notes = first.column(7).as_string::<i32>();
        assert_eq!(
            (notes.value(1), notes.is_null(2), notes.is_null(3)),
            ("odd", true, true)
        );

        // A range is a stream of its own rows; HEAD has the headers and no body.
        let response = get_arrow(&handler, &format!("/{id}/data?offset=9000&limit=3")).await;
        let (_, batches) = read(&bytes(response).await);
        assert_eq!(ids(&batches), [9_000, 9_001, 9_002]);
        let response = handle::send(
            &handler,
            Request::head(format!("/{id}/data")).header(header::ACCEPT, ARROW),
        )
        .await;
        assert_eq!(response.headers()[header::CONTENT_TYPE], ARROW);
        assert!(bytes(response).await.is_empty());
    }

    #[tokio::test]
    async fn an_empty_range_is_a_schema_without_batches() {
        let (handler, id) = typed(json!({"n": 4})).await;
        let response = get_arrow(&handler, &format!("/{id}/data?offset=4")).await;
        let (schema, batches) = read(&bytes(response).await);
        assert_eq!(schema.fields().len(), 8);
        assert!(batches.is_empty());
    }

    #[tokio::test]
    async fn a_value_that_does_not_fit_aborts_the_arrow_export() {
        let (handler, id) = typed(json!({"n": 20_000, "bad_at": 9_000})).await;
        let response = get_arrow(&handler, &format!("/{id}/data")).await;
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
        assert!(http_body::Body::is_end_stream(&body));
        // What was sent before is the schema and the first full batch, with no end-of-stream marker:
        // a reader sees the stream end early, never a short stream that looks complete.
        let mut reader = StreamReader::try_new(&sent[..], None).expect("the schema");
        let first = reader.next().and_then(Result::ok).map(|b| b.num_rows());
        assert_eq!(first, Some(8_192));
        assert!(!sent.ends_with(&[0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]));
        // The other formats carry the value as it is.
        let response = get(&handler, &format!("/{id}/data?offset=9000&limit=1"), &[]).await;
        let rows: Value = serde_json::from_slice(&bytes(response).await).expect("JSON");
        assert_eq!(rows[0]["id"], "not a number");
    }

    #[cfg(feature = "compression")]
    #[tokio::test]
    async fn compressed_arrow_exports_decode_to_the_plain_export() {
        let (handler, id) = typed(json!({"n": ROWS})).await;
        let uri = format!("/{id}/data");
        let plain = bytes(get_arrow(&handler, &uri).await).await;
        for coding in ["gzip", "zstd"] {
            let headers = [(header::ACCEPT, ARROW), (header::ACCEPT_ENCODING, coding)];
            let response = get(&handler, &uri, &headers).await;
            assert_eq!(response.headers()[header::CONTENT_TYPE], ARROW);
            assert_eq!(response.headers()[header::CONTENT_ENCODING], coding);
            let wire = bytes(response).await;
            let decoded = match coding {
                "gzip" => {
                    let mut out = Vec::new();
                    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&wire[..]), &mut out)
                        .expect("gzip body");
                    out
                }
                _ => zstd::stream::decode_all(&wire[..]).expect("zstd body"),
            };
            assert_eq!(decoded, plain.to_vec(), "{coding}");
            assert!(
                wire.len() * 2 < plain.len(),
                "{coding}: {} of {}",
                wire.len(),
                plain.len()
            );
            let (_, batches) = read(&decoded);
            assert_eq!(ids(&batches).len() as u64, ROWS);
        }
    }
}
