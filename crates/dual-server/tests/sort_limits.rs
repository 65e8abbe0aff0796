//! The sort limits through the public API (docs/DESIGN.md §3): the builder's options and their
//! validation, and a sorted page of a snapshot over the row limit refused with `INVALID_REQUEST`
//! naming `sort` while its unsorted pages are served.

use std::time::Duration;

use dual_core::page::SortLimit;
use dual_core::{PageRequest, Sort, SortOrder};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, DualResponseServerBuilder, ServerBuildError, ServerError,
    SortLimits,
};
use dual_testkit::executor::Numbers;
use serde_json::json;

#[test]
fn the_sort_options_have_defaults_and_are_validated() {
    let server = DualResponseServer::builder()
        .base_url("http://h/r")
        .without_sweeper()
        .build()
        .expect("defaults");
    assert_eq!(server.config().sorts, SortLimits::default());
    assert_eq!(
        (
            server.config().sorts.concurrency,
            server.config().sorts.wait,
            server.config().sorts.memory_bytes,
            server.config().sorts.max_rows,
            server.config().sorts.max_bytes,
        ),
        (2, Duration::from_secs(5), 512 << 20, 5_000_000, 512 << 20)
    );
    let custom = DualResponseServer::builder()
        .base_url("http://h/r")
        .without_sweeper()
        .sort_concurrency(4)
        .sort_wait(Duration::ZERO)
        .sort_memory_bytes(1 << 30)
        .sort_max_rows(u64::from(u32::MAX))
        .sort_max_bytes(1)
        .build()
        .expect("in range");
    let sorts = custom.config().sorts;
    assert_eq!(
        (
            sorts.concurrency,
            sorts.wait,
            sorts.memory_bytes,
            sorts.max_rows,
            sorts.max_bytes
        ),
        (4, Duration::ZERO, 1 << 30, u64::from(u32::MAX), 1)
    );

    type Configure = fn(DualResponseServerBuilder) -> DualResponseServerBuilder;
    let invalid: [(&str, Configure); 6] = [
        ("sort_concurrency", |b| b.sort_concurrency(0)),
        ("sort_concurrency", |b| b.sort_concurrency(usize::MAX)),
        ("sort_memory_bytes", |b| b.sort_memory_bytes(0)),
        ("sort_max_rows", |b| b.sort_max_rows(0)),
        ("sort_max_rows", |b| b.sort_max_rows(u64::from(u32::MAX) + 1)),
        ("sort_max_bytes", |b| b.sort_max_bytes(0)),
    ];
    for (option, configure) in invalid {
        let err = configure(
            DualResponseServer::builder()
                .base_url("http://h/r")
                .without_sweeper(),
        )
        .build()
        .err();
        assert!(
            matches!(err, Some(ServerBuildError::InvalidOption { option: named, .. }) if named == option),
            "{option}: {err:?}"
        );
    }
}

#[tokio::test]
async fn a_sorted_page_over_the_row_limit_is_refused_and_unsorted_pages_are_served() {
    let server = DualResponseServer::builder()
        .base_url("http://h/r")
        .without_sweeper()
        .executor("numbers", Numbers::new())
        .sort_max_rows(50)
        .build()
        .expect("server");
    let anyone = Caller::anonymous();
    let big = server
        .create_response(CreateResponse::new("numbers", json!({ "n": 51 })))
        .await
        .expect("created");
    let sorted = |offset| PageRequest {
        offset: Some(offset),
        limit: Some(5),
        sort: Some(Sort {
            field: "name".to_owned(),
            order: SortOrder::Desc,
        }),
    };
    let error = server
        .fetch_page(big.id, &anyone, &sorted(0))
        .await
        .expect_err("over the limit");
    match &error {
        ServerError::InvalidRequest(request) => {
            assert_eq!(request.sort_limit(), Some(SortLimit::Rows { rows: 51, max: 50 }));
            assert_eq!(request.field(), Some("sort"));
        }
        other => panic!("expected SortTooLarge, got {other:?}"),
    }
    let unsorted = server
        .fetch_page(big.id, &anyone, &PageRequest::default())
        .await
        .expect("unsorted");
    assert_eq!(unsorted.total_count, 51);

    let small = server
        .create_response(CreateResponse::new("numbers", json!({ "n": 50 })))
        .await
        .expect("created");
    let page = server
        .fetch_page(small.id, &anyone, &sorted(0))
        .await
        .expect("at the limit");
    assert_eq!(page.data[0]["name"], "College 9", "descending by text");
}
