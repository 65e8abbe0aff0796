//! `fetch_all` as parallel row ranges of `/data`: order, coverage, progress, count checks, retries,
//! the in-flight bound and the sort, measured at the in-test contract server.

use std::time::{Duration, Instant};

use dual_client::{ClientErrorCode, FetchAllOptions, Sort, SortOrder};
use serde_json::Value;

use crate::support::fake::{FakeConfig, FakeServer, rows};
use crate::support::{client, create_parsed, fetch_all_reporting, serve};

/// The `offset` and `limit` of every `/data` request in the log, in the order they came.
fn data_requests(server: &FakeServer) -> Vec<(u64, u64)> {
    server
        .log()
        .iter()
        .filter(|line| line.contains("/data"))
        .map(|line| {
            let param = |name: &str| {
                line.split(['?', '&'])
                    .find_map(|p| p.strip_prefix(name))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("no {name} in {line}"))
            };
            (param("offset="), param("limit="))
        })
        .collect()
}

fn fast_config() -> FakeConfig {
    FakeConfig::with_chunk_bytes(4096)
}

/// Sets the `total_count` the tool result claims.
fn claim_total(result: &mut Value, total: u64) {
    result["structuredContent"]["metadata"]["total_count"] = total.into();
}

#[tokio::test]
async fn every_row_exactly_once_in_order() {
    let server = FakeServer::start(fast_config()).await;
    // 0 and 1 rows, a prime, and many ranges; one range after the other, and eight at once.
    for (total, range_rows) in [
        (0, None),
        (1, None),
        (1009, Some(97)),
        (5003, Some(61)),
        (10_007, None),
    ] {
        for parallelism in [1, 8] {
            let all = rows(total);
            let parsed = create_parsed(&server, "Ranges", all.clone());
            let before = data_requests(&server).len();
            let mut options = FetchAllOptions::new().parallelism(parallelism);
            if let Some(rows) = range_rows {
                options = options.range_rows(rows);
            }
            let fetched = parsed.fetch_all(options).await.expect("fetch_all");
            assert_eq!(fetched.len(), total, "total {total}, parallelism {parallelism}");
            assert!(fetched == all, "every row once, in order (total {total})");

            // The ranges asked for tile 0..total exactly once (the last asks for one row more).
            let mut asked = data_requests(&server)[before..].to_vec();
            asked.sort_unstable();
            let mut next = 0;
            for (i, (offset, limit)) in asked.iter().enumerate() {
                assert_eq!(*offset, next, "contiguous: {asked:?}");
                let last = i + 1 == asked.len();
                next = offset + limit - u64::from(last);
            }
            assert_eq!(next, total as u64, "covers every row: {asked:?}");
            if let Some(rows) = range_rows {
                assert_eq!(asked.len() as u64, (total as u64).div_ceil(rows));
            }
        }
    }
}

#[tokio::test]
async fn default_ranges_are_sized_from_the_total() {
    let (server, parsed) = serve(fast_config(), "Default", rows(20_000)).await;
    let fetched = parsed.fetch_all(FetchAllOptions::new()).await.expect("fetch_all");
    assert_eq!(fetched.len(), 20_000);
    // max(4096, ⌈20,000 / (4 × 4)⌉) = 4096 rows per range; the last asks for one more.
    let mut asked = data_requests(&server);
    asked.sort_unstable();
    assert_eq!(
        asked,
        [
            (0, 4096),
            (4096, 4096),
            (8192, 4096),
            (12_288, 4096),
            (16_384, 3617)
        ]
    );
}

#[tokio::test]
async fn progress_only_grows_and_reaches_the_total() {
    let all = rows(3001);
    let (_server, parsed) = serve(FakeConfig::with_chunk_bytes(300), "Progress", all.clone()).await;
    let options = FetchAllOptions::new()
        .parallelism(8)
        .range_rows(101)
        .batch_size(50);
    let (fetched, seen) = fetch_all_reporting(&parsed, options).await;
    assert!(fetched == all);
    assert!(
        seen.len() >= 3001 / 101,
        "reported as rows arrive: {}",
        seen.len()
    );
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "strictly growing");
    assert!(seen.iter().all(|(_, total)| *total == 3001));
    assert_eq!(seen.last(), Some(&(3001, 3001)));
}

#[tokio::test]
async fn a_short_range_is_an_error_with_expected_and_got() {
    let (_server, parsed) = serve(
        FakeConfig {
            short_range_at: Some(97),
            ..fast_config()
        },
        "Short",
        rows(1000),
    )
    .await;
    let error = parsed
        .fetch_all(FetchAllOptions::new().range_rows(97))
        .await
        .expect_err("a short range");
    assert_eq!(error.code(), ClientErrorCode::Fetch);
    assert!(error.message().contains("rows 97..194"), "{error}");
    assert!(error.message().contains("expected 97 rows, got 96"), "{error}");
}

#[tokio::test]
async fn a_total_count_the_rows_disagree_with_is_an_error() {
    let server = FakeServer::start(fast_config()).await;
    for (claimed, what) in [(12, "expected 12, got 10"), (8, "more rows than total_count")] {
        let (_, mut result) = server.create("Count", rows(10));
        claim_total(&mut result, claimed);
        let parsed = client().parse_strict(&result).expect("parses");
        assert_eq!(parsed.total_count(), Some(claimed));
        for range_rows in [3, 100] {
            let error = parsed
                .fetch_all(FetchAllOptions::new().range_rows(range_rows))
                .await
                .expect_err("count mismatch");
            assert_eq!(error.code(), ClientErrorCode::Fetch, "{error}");
            assert!(error.message().contains(what), "{claimed}: {error}");
        }
    }
}

#[tokio::test]
async fn a_range_that_fails_once_is_retried_alone_after_retry_after() {
    let all = rows(1000);
    let (server, parsed) = serve(
        FakeConfig {
            fail_once_at: Some(194),
            ..fast_config()
        },
        "Flaky",
        all.clone(),
    )
    .await;
    let started = Instant::now();
    let fetched = parsed
        .fetch_all(FetchAllOptions::new().range_rows(97).parallelism(4))
        .await
        .expect("completes after the retry");
    assert!(fetched == all);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After: 1 honoured"
    );
    let asked = data_requests(&server);
    assert_eq!(asked.len(), 12, "11 ranges, one of them twice: {asked:?}");
    assert_eq!(asked.iter().filter(|(offset, _)| *offset == 194).count(), 2);
    for offset in (0..1000).step_by(97).filter(|o| *o != 194) {
        assert_eq!(asked.iter().filter(|(o, _)| *o == offset).count(), 1, "{offset}");
    }
}

#[tokio::test]
async fn never_more_than_parallelism_requests_in_flight() {
    for parallelism in [1, 3, 4] {
        let all = rows(2000);
        let (server, parsed) = serve(
            FakeConfig {
                data_delay: Some(Duration::from_millis(20)),
                ..fast_config()
            },
            "Bounded",
            all.clone(),
        )
        .await;
        let fetched = parsed
            .fetch_all(FetchAllOptions::new().range_rows(100).parallelism(parallelism))
            .await
            .expect("fetch_all");
        assert!(fetched == all);
        assert_eq!(data_requests(&server).len(), 20);
        assert_eq!(
            server.max_in_flight(),
            parallelism,
            "at most, and up to, {parallelism} at once"
        );
    }
}

#[tokio::test]
async fn the_sort_goes_with_every_range() {
    let all = rows(500);
    let (server, parsed) = serve(fast_config(), "Sorted", all.clone()).await;
    let fetched = parsed
        .fetch_all(
            FetchAllOptions::new()
                .range_rows(97)
                .sort(Sort::new("score", SortOrder::Desc)),
        )
        .await
        .expect("fetch_all");
    let mut expected = all;
    expected.sort_by_key(|row| std::cmp::Reverse(row["score"].as_u64()));
    assert!(fetched == expected, "sorted by score, descending");
    let log: Vec<String> = server.log().into_iter().filter(|l| l.contains("/data")).collect();
    assert_eq!(log.len(), 6);
    assert!(log.iter().all(|l| l.ends_with("&sort=score:desc")), "{log:?}");
}

/// The status line the fake answers `GET {path}` with.
async fn status_of(server: &FakeServer, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let authority = server
        .base_url
        .trim_start_matches("http://")
        .trim_end_matches("/resources");
    let mut socket = tokio::net::TcpStream::connect(authority).await.expect("connect");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: application/x-ndjson\r\nConnection: close\r\n\r\n"
    );
    socket.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).await.expect("read");
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn the_fake_implements_the_range_contract() {
    let server = FakeServer::start(fast_config()).await;
    let (id, _) = server.create("Contract", rows(10));
    let data = format!("/resources/{id}/data");
    for (query, status) in [
        ("?offset=10&limit=5", "200"),
        ("?offset=11&limit=5", "400"),
        ("?offset=0&limit=0", "400"),
        ("?offset=-1", "400"),
        ("?page=2", "400"),
    ] {
        let line = status_of(&server, &format!("{data}{query}")).await;
        assert!(line.contains(status), "{query}: {line}");
    }
}
