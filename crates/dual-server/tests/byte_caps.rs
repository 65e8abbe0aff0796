//! Byte caps: pages cut to whole rows within `max_page_bytes` (snapshot and live, sorted or not),
//! sorted export batches bounded in bytes, and the whole tool result within `max_sample_bytes`.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use dual_core::{
    PageRequest, Row, Sort, SortOrder,
    mcp::{ProtocolVersion, RenderOptions, TextFormat},
    range::RowRange,
};
use dual_server::{Caller, CreateResponse, DualResponseServer, DualResponseServerBuilder, RowBatch};
use dual_testkit::executor::{Numbers, Paged, object};
use futures_util::StreamExt;
use serde_json::json;

/// The width of row `i`'s value: 0 to 4,999 bytes, varying from row to row.
fn width(i: u64) -> u64 {
    (i * 7919) % 5_000
}

fn varied_row(i: u64) -> Row {
    let width = width(i);
    object(json!({"id": i, "w": width, "v": "x".repeat(usize::try_from(width).unwrap_or(0))}))
}

/// A server builder with kind `numbers` over rows of the shape of `row`.
fn builder(row: fn(u64) -> Row) -> DualResponseServerBuilder {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .without_sweeper()
        .executor("numbers", Numbers::new().row(row))
}

/// A server of pages within `max_page_bytes`, with or without snapshots.
fn server(max_page_bytes: usize, snapshots: bool, row: fn(u64) -> Row) -> DualResponseServer {
    let builder = builder(row).max_page_bytes(max_page_bytes);
    let builder = if snapshots {
        builder
    } else {
        builder.without_snapshots()
    };
    builder.build().expect("server")
}

/// Every id of `0..n` in the order `sort` gives.
fn expected(n: u64, sort: Option<&Sort>) -> Vec<u64> {
    let mut ids: Vec<u64> = (0..n).collect();
    if let Some(sort) = sort {
        assert_eq!(sort.field, "w");
        ids.sort_by_key(|&i| (width(i), i));
        if sort.order == SortOrder::Desc {
            ids.reverse();
        }
    }
    ids
}

#[tokio::test]
async fn paging_by_next_offset_yields_every_row_once_and_no_page_passes_the_cap() {
    const CAP: usize = 40_000;
    const N: u64 = 400;
    for snapshots in [true, false] {
        let server = server(CAP, snapshots, varied_row);
        let created = common::created(&server, CreateResponse::new("numbers", json!({"n": N}))).await;
        for sort in [
            None,
            Some(Sort::new("w", SortOrder::Asc)),
            Some(Sort::new("w", SortOrder::Desc)),
        ] {
            let mut seen = Vec::new();
            let mut offset = Some(0);
            let mut pages = 0;
            while let Some(at) = offset {
                let request = PageRequest {
                    offset: Some(at),
                    limit: Some(1_000),
                    sort: sort.clone(),
                };
                let page = server
                    .fetch_page_encoded(created.id, &Caller::anonymous(), &request)
                    .await
                    .expect("page");
                let body = page.to_json().expect("json");
                assert!(body.len() <= CAP, "{} bytes > {CAP}", body.len());
                let meta = page.pagination().clone();
                let decoded = page.into_response(created.id).expect("decoded");
                assert_eq!(decoded.returned_count, decoded.data.len() as u64);
                assert_eq!(meta.has_next, meta.next_offset.is_some());
                assert_eq!(
                    meta.next_offset.is_some(),
                    at + meta.returned_count < N,
                    "has_next exact"
                );
                if let Some(next) = meta.next_offset {
                    assert_eq!(
                        next,
                        at + meta.returned_count,
                        "next_offset is the first row left out"
                    );
                }
                seen.extend(decoded.data.iter().filter_map(|row| row["id"].as_u64()));
                offset = meta.next_offset;
                pages += 1;
            }
            assert_eq!(
                seen,
                expected(N, sort.as_ref()),
                "snapshots {snapshots}, {sort:?}"
            );
            assert!(pages > 10, "the cap cut the pages: {pages}");
        }
        server.shutdown().await.expect("shutdown");
    }
}

#[tokio::test]
async fn a_row_larger_than_the_cap_comes_alone_and_paging_goes_on() {
    fn row(i: u64) -> Row {
        let width = if i % 5 == 2 { 10_000 } else { 10 };
        object(json!({"id": i, "v": "y".repeat(width)}))
    }
    for snapshots in [true, false] {
        let server = server(4_096, snapshots, row);
        let created = common::created(&server, CreateResponse::new("numbers", json!({"n": 12}))).await;
        let mut sizes = Vec::new();
        let mut offset = Some(0);
        while let Some(at) = offset {
            let request = PageRequest {
                offset: Some(at),
                ..PageRequest::default()
            };
            let page = server
                .fetch_page(created.id, &Caller::anonymous(), &request)
                .await
                .expect("page");
            sizes.push(page.returned_count);
            offset = page.next_offset;
        }
        // Rows 2 and 7 come alone; the rest fill pages around them.
        assert_eq!(sizes, vec![2, 1, 4, 1, 4], "snapshots {snapshots}");
        server.shutdown().await.expect("shutdown");
    }
}

#[tokio::test]
async fn a_live_page_reads_no_more_than_the_cap_and_one_row() {
    // A cursor that counts the rows it made.
    let produced = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&produced);
    let cursor = Paged::new(move |_, i| {
        counter.fetch_add(1, Ordering::SeqCst);
        varied_row(i)
    })
    .cursor();
    let server = builder(varied_row)
        .without_snapshots()
        .max_page_bytes(20_000)
        .executor("cursor", cursor)
        .build()
        .expect("server");
    let created = common::created(&server, CreateResponse::new("cursor", json!({"n": 5_000}))).await;
    let before = produced.load(Ordering::SeqCst);
    let request = PageRequest {
        limit: Some(10_000),
        ..PageRequest::default()
    };
    let page = server
        .fetch_page(created.id, &Caller::anonymous(), &request)
        .await
        .expect("page");
    let produced = produced.load(Ordering::SeqCst) - before;
    assert!(
        page.has_next && page.returned_count < 20,
        "{}",
        page.returned_count
    );
    assert_eq!(
        produced,
        page.returned_count + 1,
        "the cap and one row, not 10,001 rows"
    );
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn sorted_export_batches_are_bounded_in_bytes() {
    // Rows of about 3 KB: a batch of 1,000 would be 3 MB.
    fn row(i: u64) -> Row {
        object(json!({"id": i, "k": (i * 7919) % 1_000, "v": "z".repeat(3_000)}))
    }
    let server = builder(row).build().expect("server");
    let created = common::created(&server, CreateResponse::new("numbers", json!({"n": 3_000}))).await;
    for sort in [None, Some(Sort::new("k", SortOrder::Desc))] {
        let (_, mut stream) = server
            .export_range(created.id, &Caller::anonymous(), sort.clone(), RowRange::ALL)
            .await
            .expect("export");
        let mut rows = 0;
        while let Some(batch) = stream.next().await {
            let batch = batch.expect("batch");
            let RowBatch::Json(json) = &batch else {
                panic!("a snapshot's rows stay encoded");
            };
            let bytes: usize = json.iter().map(|row| row.len() + 1).sum();
            assert!(bytes <= (1 << 20) + 4_000, "{sort:?}: a batch of {bytes} bytes");
            rows += batch.len();
        }
        assert_eq!(rows, 3_000, "{sort:?}");
    }
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn the_whole_tool_result_stays_within_max_sample_bytes_for_every_version() {
    const CAP: usize = 64 * 1024;
    // Values full of `|`, `"` and line feeds: the table and the JSON text escape them differently.
    fn row(i: u64) -> Row {
        object(json!({"id": i, "v": "a|\"\n\\".repeat(2_000)}))
    }
    let server = builder(row).max_sample_bytes(CAP).build().expect("server");
    let created = common::created(
        &server,
        CreateResponse::new("numbers", json!({"n": 100})).sample_size(100),
    )
    .await;
    assert!(!created.sample.is_empty() && created.sample.len() < 100);
    for version in ProtocolVersion::ALL {
        for text in [TextFormat::Table, TextFormat::Json] {
            let options = RenderOptions::new(version).with_text(text);
            let bytes = serde_json::to_vec(&created.tool_result_with(&options))
                .map(|v| v.len())
                .unwrap_or(usize::MAX);
            assert!(bytes + 16 <= CAP, "{version} {text:?}: {bytes} bytes");
        }
    }
    server.shutdown().await.expect("shutdown");
}
