//! Exports through `DualHttp::handle`, no sockets: parallel download by ranges, 406, and compression
//! that streams (each frame decodes as it arrives).

mod common;
mod handle;

use handle::{bytes, get};

use std::io::Write;

use dual_http::DualHttp;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};

const ROWS: u64 = 10_007;

#[tokio::test]
async fn concurrent_ranges_join_into_the_whole_export() {
    let server = common::server();
    let id = common::create(&server, json!({"n": ROWS})).await;
    let handler = DualHttp::new(server);
    let ndjson = [(header::ACCEPT, "application/x-ndjson")];
    for sort in ["", "&sort=id:desc"] {
        let whole = bytes(get(&handler, &format!("/{id}/data?offset=0{sort}"), &ndjson).await).await;
        assert_eq!(whole.iter().filter(|b| **b == b'\n').count() as u64, ROWS);
        // Ranges of varying sizes, fetched at once, the way a parallel downloader does.
        let mut bounds = Vec::new();
        let mut offset = 0;
        for size in [1u64, 2_500, 1_000, 4_000, 3].into_iter().cycle() {
            if offset >= ROWS {
                break;
            }
            bounds.push((offset, size));
            offset += size;
        }
        let parts = futures_util::future::join_all(bounds.iter().map(|(offset, size)| {
            let (handler, ndjson) = (handler.clone(), &ndjson);
            let uri = format!("/{id}/data?offset={offset}&limit={size}{sort}");
            async move { bytes(get(&handler, &uri, ndjson).await).await }
        }))
        .await;
        assert_eq!(parts.concat(), whole.to_vec(), "sort {sort:?}");
    }
}

#[tokio::test]
async fn ranges_are_validated_and_head_answers_like_get() {
    let server = common::server();
    let id = common::create(&server, json!({"n": 20})).await;
    let handler = DualHttp::new(server);
    for (query, field) in [
        ("offset=-1", "`offset`"),
        ("offset=21", "`offset`"),
        ("limit=0", "`limit`"),
        ("limit=x", "`limit`"),
    ] {
        let response = get(&handler, &format!("/{id}/data?{query}"), &[]).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{query}");
        let body: Value = serde_json::from_slice(&bytes(response).await).expect("JSON");
        assert_eq!(body["error"], "invalid_request");
        assert!(
            body["message"].as_str().is_some_and(|m| m.contains(field)),
            "{query}: {body}"
        );
    }
    let response = get(&handler, &format!("/{id}/data?offset=20"), &[]).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(bytes(response).await, "[]");
    let response = get(&handler, &format!("/{id}/data?offset=18&limit=5"), &[]).await;
    let rows: Value = serde_json::from_slice(&bytes(response).await).expect("JSON");
    assert_eq!(rows.as_array().map(Vec::len), Some(2));

    let response = handle::send(&handler, Request::head(format!("/{id}/data?offset=21"))).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(bytes(response).await.is_empty());
}

#[tokio::test]
async fn an_accept_the_server_cannot_produce_is_406() {
    let server = common::server();
    let id = common::create(&server, json!({"n": 3})).await;
    let handler = DualHttp::new(server);
    let response = get(&handler, &format!("/{id}/data"), &[(header::ACCEPT, "image/png")]).await;
    assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
    let body: Value = serde_json::from_slice(&bytes(response).await).expect("JSON");
    assert_eq!(body["error"], "not_acceptable");
    assert_eq!(body["retryable"], false);
    assert!(
        body["message"].as_str().is_some_and(|m| m.contains("text/csv")),
        "{body}"
    );

    let accept = [(header::ACCEPT, "application/json;q=0, text/csv")];
    let response = get(&handler, &format!("/{id}/data"), &accept).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(handle::content_type(&response).starts_with("text/csv"));
    // No `Accept`: JSON, as always.
    let response = get(&handler, &format!("/{id}/data"), &[]).await;
    assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
}

/// A streaming decoder for `coding`, writing into a buffer the test reads as frames arrive.
enum Decoder {
    Gzip(flate2::write::GzDecoder<Vec<u8>>),
    Zstd(zstd::stream::write::Decoder<'static, Vec<u8>>),
}

impl Decoder {
    fn new(coding: &str) -> Self {
        match coding {
            "gzip" => Self::Gzip(flate2::write::GzDecoder::new(Vec::new())),
            _ => Self::Zstd(zstd::stream::write::Decoder::new(Vec::new()).expect("decoder")),
        }
    }

    /// Feeds one frame; returns everything decoded so far.
    fn feed(&mut self, frame: &[u8]) -> &[u8] {
        match self {
            Self::Gzip(decoder) => {
                decoder.write_all(frame).expect("gzip frame");
                decoder.flush().expect("flush");
                decoder.get_ref()
            }
            Self::Zstd(decoder) => {
                decoder.write_all(frame).expect("zstd frame");
                decoder.flush().expect("flush");
                decoder.get_ref()
            }
        }
    }
}

#[tokio::test]
async fn compressed_exports_stream_frame_by_frame_and_decode_to_the_plain_export() {
    let server = common::server();
    let id = common::create(&server, json!({"n": ROWS})).await;
    let handler = DualHttp::new(server);
    let uri = format!("/{id}/data?sort=id:desc&offset=5");
    for accept in ["application/json", "application/x-ndjson", "text/csv"] {
        let plain = bytes(get(&handler, &uri, &[(header::ACCEPT, accept)]).await).await;
        for coding in ["gzip", "zstd"] {
            let response = get(
                &handler,
                &uri,
                &[(header::ACCEPT, accept), (header::ACCEPT_ENCODING, coding)],
            )
            .await;
            assert_eq!(response.status(), StatusCode::OK);
            assert_eq!(response.headers()[header::CONTENT_ENCODING], coding);
            let vary: Vec<_> = response.headers().get_all(header::VARY).iter().collect();
            assert!(vary.iter().any(|v| *v == "accept-encoding"), "{vary:?}");
            let mut body = response.into_body();
            let mut decoder = Decoder::new(coding);
            let (mut decoded_lengths, mut wire) = (vec![0], 0);
            while let Some(frame) = body.frame().await {
                let data = frame.expect("frame").into_data().expect("data frame");
                wire += data.len();
                decoded_lengths.push(decoder.feed(&data).len());
            }
            // Flushed per frame: every frame but the last (which may be only the trailer) decodes to
            // more of the export as soon as it arrives.
            let frames = decoded_lengths.len() - 1;
            assert!(frames > 3, "{accept} {coding}: {frames} frames");
            assert!(
                decoded_lengths[..frames].windows(2).all(|w| w[1] > w[0]),
                "{accept} {coding}: {decoded_lengths:?}"
            );
            let decoded = match decoder {
                Decoder::Gzip(decoder) => decoder.finish().expect("gzip trailer"),
                Decoder::Zstd(decoder) => decoder.into_inner(),
            };
            assert_eq!(decoded, plain.to_vec(), "{accept} {coding}");
            assert!(
                wire * 3 < plain.len(),
                "{accept} {coding}: {wire} of {}",
                plain.len()
            );
        }
    }
    // `q=0` turns compression off; an unknown coding is the identity; pages are never compressed.
    for encoding in ["gzip;q=0, zstd;q=0", "br", "identity"] {
        let response = get(&handler, &uri, &[(header::ACCEPT_ENCODING, encoding)]).await;
        assert!(
            response.headers().get(header::CONTENT_ENCODING).is_none(),
            "{encoding}"
        );
    }
    let response = get(&handler, &format!("/{id}"), &[(header::ACCEPT_ENCODING, "gzip")]).await;
    assert!(response.headers().get(header::CONTENT_ENCODING).is_none());
}
