//! `download` against a real `DualResponseServer` and `dual-http` (built with Parquet) on loopback:
//! the bytes are exactly the server's export, a range and a sort reach the server; against a scripted
//! server, a format the server cannot produce is the 406 it answers, a cut transfer an error.

use std::sync::Arc;

use bytes::Bytes;
use dual_client::{
    ClientErrorCode, DownloadOptions, DualResponseClient, ExportFormat, ParsedDualResponse, Sort, SortOrder,
};
use dual_http::DualHttp;
use dual_server::{CreateResponse, DualResponseServer};
use dual_testkit::executor::Numbers;
use dual_testkit::serve::Loopback;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use serde_json::json;

use crate::support::client;
use crate::support::raw::{RawServer, chunked, error};

/// A server with `n` numbered rows, its handler (built with Parquet) served on loopback, and the
/// parsed tool result.
async fn start(n: u64) -> (DualHttp, ParsedDualResponse) {
    let loopback = Loopback::bind().await;
    let server = DualResponseServer::builder()
        .base_url(loopback.url("/resources"))
        .shared_executor("numbers", Arc::new(Numbers::new()))
        .build()
        .expect("valid configuration");
    let handler = DualHttp::builder(server.clone()).prefix("/resources").build();
    loopback.serve(handler.clone());
    let created = server
        .create_response(CreateResponse::new("numbers", json!({"n": n})).sample_size(5))
        .await
        .expect("created");
    let tool_result = serde_json::to_value(created.tool_result()).expect("serialises");
    let parsed = client().parse_strict(&tool_result).expect("parses");
    (handler, parsed)
}

/// The export as the handler sends it to `GET path` with `Accept: accept`, without a socket.
async fn direct(handler: &DualHttp, path: &str, accept: &str) -> Bytes {
    let request = Request::get(path)
        .header(header::ACCEPT, accept)
        .body(Empty::<Bytes>::new())
        .expect("request");
    let response = handler.handle(request).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.into_body().collect().await.expect("body").to_bytes()
}

fn path_of(parsed: &ParsedDualResponse) -> String {
    let url = parsed.resource_url();
    url[url.find("/resources").expect("the prefix")..].to_owned()
}

#[tokio::test]
async fn a_parquet_download_is_the_servers_file_byte_for_byte() {
    let (handler, parsed) = start(3_000).await;
    let download = parsed
        .download(DownloadOptions::new(ExportFormat::Parquet))
        .await
        .expect("downloads");
    assert_eq!(download.content_type(), "application/vnd.apache.parquet");
    let bytes = download.bytes().await.expect("every byte");
    assert!(
        bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
        "a whole Parquet file"
    );
    let path = path_of(&parsed);
    let expected = direct(
        &handler,
        &format!("{path}/data"),
        ExportFormat::Parquet.media_type(),
    )
    .await;
    assert_eq!(bytes, expected);

    // A sorted range reaches the server as such: the same bytes as the server's own range.
    let sort = Sort::new("id", SortOrder::Desc);
    let mut download = parsed
        .download(
            DownloadOptions::new(ExportFormat::Parquet)
                .range(10, Some(20))
                .sort(sort),
        )
        .await
        .expect("downloads");
    let mut ranged = Vec::new();
    while let Some(chunk) = download.chunk().await.expect("a chunk") {
        ranged.extend_from_slice(&chunk);
    }
    let expected = direct(
        &handler,
        &format!("{path}/data?offset=10&limit=20&sort=id:desc"),
        ExportFormat::Parquet.media_type(),
    )
    .await;
    assert_eq!(ranged, expected.to_vec());
    assert_ne!(ranged, bytes.to_vec());

    // The text formats come as they are too.
    let csv = parsed
        .download(DownloadOptions::new(ExportFormat::Csv).range(0, Some(2)))
        .await
        .expect("downloads")
        .bytes()
        .await
        .expect("every byte");
    assert!(csv.starts_with(b"id,"), "{csv:?}");
    assert_eq!(csv.iter().filter(|b| **b == b'\n').count(), 3);
}

#[tokio::test]
async fn a_download_of_an_unknown_resource_is_not_found() {
    let (handler, parsed) = start(3).await;
    let id = parsed
        .resource_uri()
        .and_then(|u| u.strip_prefix("resource://"))
        .expect("an id")
        .to_owned();
    let path = path_of(&parsed);
    let request = Request::delete(path)
        .body(Empty::<Bytes>::new())
        .expect("request");
    assert_eq!(handler.handle(request).await.status(), StatusCode::NO_CONTENT);
    let error = parsed
        .download(DownloadOptions::new(ExportFormat::Parquet))
        .await
        .expect_err("deleted");
    assert_eq!(error.code(), ClientErrorCode::ResourceNotFound, "{error} ({id})");
}

#[tokio::test]
async fn a_server_without_the_format_is_its_406_and_a_cut_transfer_is_an_error() {
    let server = RawServer::start(|n, _| match n {
        0 => error("406 Not Acceptable", "not_acceptable", false),
        1 => chunked("application/vnd.apache.parquet", b"PAR1 and no footer", true),
        _ => chunked("text/csv", b"id\r\n1\r\n", false),
    })
    .await;
    let parsed = DualResponseClient::new()
        .parse_strict(&server.tool_result())
        .expect("parses");
    let error = parsed
        .download(DownloadOptions::new(ExportFormat::Parquet))
        .await
        .expect_err("406");
    assert_eq!(
        (error.code(), error.status()),
        (ClientErrorCode::Fetch, Some(StatusCode::NOT_ACCEPTABLE))
    );
    let seen = server.seen();
    assert!(
        seen[0].request_line.starts_with("GET /resources/"),
        "{}",
        seen[0].request_line
    );
    assert!(
        seen[0].request_line.contains("/data "),
        "{}",
        seen[0].request_line
    );
    assert!(
        seen[0].headers.contains("accept: application/vnd.apache.parquet"),
        "{}",
        seen[0].headers
    );

    let cut = parsed
        .download(DownloadOptions::new(ExportFormat::Parquet))
        .await
        .expect("the head arrives")
        .bytes()
        .await
        .expect_err("the transfer breaks");
    assert_eq!(cut.code(), ClientErrorCode::Fetch);

    // An answer in another media type is not taken for the format asked for.
    let other = parsed
        .download(DownloadOptions::new(ExportFormat::Parquet))
        .await
        .expect_err("CSV is not Parquet");
    assert!(other.message().contains("text/csv"), "{other}");
}
