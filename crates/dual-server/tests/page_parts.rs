//! A snapshot page's JSON is the same bytes whichever way its rows are held: as slices of segments
//! the spool keeps in memory, as copies of rows read from spilled segments, or both in one page
//! (a page across the memory budget's edge); across segment boundaries, sorted or not, and cut by
//! the byte cap.

mod common;

use dual_core::{PageRequest, PageResponse, Sort, SortOrder};
use dual_server::dual_spool::{MemorySpool, SegmentLimits, Spool};
use dual_server::{Caller, CreateResponse, DualResponseServer};
use serde_json::json;

/// Rows in the snapshot.
const ROWS: u64 = 500;

/// A server whose spool keeps `memory_budget` bytes of segments of at most 37 rows in memory and
/// spills the rest, and whose pages are cut at `max_page_bytes`.
async fn server(memory_budget: u64, max_page_bytes: usize) -> (DualResponseServer, MemorySpool) {
    let backend = MemorySpool::builder()
        .memory_budget(memory_budget)
        .build()
        .await
        .expect("spool");
    let spool = Spool::new(backend.clone()).with_segment_limits(SegmentLimits {
        bytes: 1 << 20,
        rows: 37,
    });
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor("numbers", common::shared())
        .spool(spool)
        .max_page_bytes(max_page_bytes)
        .without_sweeper()
        .build()
        .expect("server");
    (server, backend)
}

/// Every page of the snapshot, by the three ways of writing it, and each the bytes of the decoded
/// page serialised.
async fn pages_agree(server: &DualResponseServer) -> u64 {
    let created = server
        .create_response(CreateResponse::new("numbers", json!({"n": ROWS})))
        .await
        .expect("created");
    common::record_once(server, created.id, |r| r.status.is_ready(), "spooling").await;
    let anyone = Caller::anonymous();
    let by_name = Sort::new("name", SortOrder::Desc);
    let mut pages = 0;
    for sort in [None, Some(by_name)] {
        for (offset, limit) in [
            (0, 1),
            (0, 37),
            (30, 20),
            (36, 2),
            (100, 200),
            (450, 100),
            (499, 5),
            (500, 5),
        ] {
            let request = PageRequest {
                offset: Some(offset),
                limit: Some(limit),
                sort: sort.clone(),
            };
            let page = server
                .fetch_page_encoded(created.id, &anyone, &request)
                .await
                .expect("page");
            let json = page.to_json().expect("json");
            let parts = page.clone().into_json_parts().expect("parts").concat();
            let decoded: PageResponse = page.into_response(created.id).expect("decoded");
            let what = format!("offset {offset}, limit {limit}, sort {sort:?}");
            assert_eq!(json, parts, "{what}");
            assert_eq!(json, serde_json::to_vec(&decoded).expect("serialised"), "{what}");
            let expected = server
                .fetch_page(created.id, &anyone, &request)
                .await
                .expect("decoded page");
            assert_eq!(decoded, expected, "{what}");
            if sort.is_none() {
                let first = decoded.data.first().and_then(|row| row.get("id")).cloned();
                assert_eq!(first, (offset < ROWS).then(|| json!(offset)), "{what}");
            }
            pages += 1;
        }
    }
    pages
}

#[tokio::test]
async fn pages_are_the_same_bytes_from_memory_from_disk_and_from_both() {
    // All in memory, all spilled, and about half of each (a page across the edge mixes both).
    for budget in [64 << 20, 0, 30_000] {
        let (server, backend) = server(budget, 16 << 20).await;
        assert_eq!(pages_agree(&server).await, 16);
        let stats = backend.stats();
        match budget {
            0 => assert_eq!(stats.in_memory_bytes, 0, "{stats:?}"),
            30_000 => assert!(stats.in_memory_bytes > 0 && stats.on_disk_bytes > 0, "{stats:?}"),
            _ => assert_eq!(stats.on_disk_bytes, 0, "{stats:?}"),
        }
    }
}

#[tokio::test]
async fn pages_cut_by_the_byte_cap_are_the_same_bytes_from_memory_and_from_disk() {
    for budget in [64 << 20, 0, 30_000] {
        let (server, _) = server(budget, 2_000).await;
        assert_eq!(pages_agree(&server).await, 16);
    }
}
