//! A conformance suite: every client operation against any server that speaks the REST contract.
//!
//! Enabled by the `test-suite` feature. The crate's own tests run it against a small in-test server;
//! integration tests run it against a real `dual-http` server. Each check panics with a message on the
//! first deviation, like `assert!`.
//!
//! ```no_run
//! use dual_client::DualResponseClient;
//! use dual_testkit::client::Fixture;
//!
//! # async fn run() {
//! let client = DualResponseClient::new();
//! // Each call creates a fresh resource on the server under test (say, by calling its MCP tool) and
//! // returns the tool result with every row the resource must serve.
//! dual_testkit::client::run(&client, || async {
//!     let tool_result: serde_json::Value = serde_json::from_str("{}").unwrap_or_default();
//!     Fixture { tool_result, rows: Vec::new(), sort_field: "id".into() }
//! })
//! .await;
//! # }
//! ```

use std::cmp::Ordering;
use std::future::Future;
use std::sync::{Arc, Mutex};

use dual_core::{ResourceId, Row, Sort, SortOrder, status::ResourceStatus};
use futures_util::StreamExt;
use serde_json::Value;

use dual_client::{
    DualResponseClient, FetchAllOptions, FetchOptions, FetchStreamOptions, ParsedDualResponse,
};

/// A freshly created resource on the server under test, and what it must serve.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// The tool result the server returned when the resource was created (any shape the client parses).
    pub tool_result: Value,
    /// Every row of the result, in the query's natural order. At least 7 rows.
    pub rows: Vec<Row>,
    /// A column whose values are distinct numbers or strings, used to check sorting.
    pub sort_field: String,
}

/// The smallest fixture the suite accepts.
pub const MIN_ROWS: usize = 7;

/// Runs every check, each on a fresh fixture from `make_fixture` (checks pin and delete resources).
pub async fn run<F, Fut>(client: &DualResponseClient, mut make_fixture: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Fixture>,
{
    check_parse(client, &make_fixture().await);
    check_pages(client, &make_fixture().await).await;
    check_sorted_pages(client, &make_fixture().await).await;
    check_fetch_all(client, &make_fixture().await).await;
    check_fetch_all_sorted(client, &make_fixture().await).await;
    check_fetch_stream(client, &make_fixture().await).await;
    check_metadata(client, &make_fixture().await).await;
    check_pin(client, &make_fixture().await).await;
    check_delete(client, &make_fixture().await).await;
    check_unknown_resource(client, &make_fixture().await).await;
}

fn parsed(client: &DualResponseClient, fixture: &Fixture) -> ParsedDualResponse {
    assert!(
        fixture.rows.len() >= MIN_ROWS,
        "a fixture needs at least {MIN_ROWS} rows"
    );
    match client.parse_strict(&fixture.tool_result) {
        Ok(parsed) => parsed,
        Err(error) => panic!("the fixture's tool result does not parse: {error}"),
    }
}

fn total(fixture: &Fixture) -> u64 {
    fixture.rows.len() as u64
}

/// The tool result parses, with the right count, a sample that starts the rows, and columns.
pub fn check_parse(client: &DualResponseClient, fixture: &Fixture) {
    let parsed = parsed(client, fixture);
    assert_eq!(parsed.total_count(), Some(total(fixture)), "total_count");
    let sample = parsed.sample();
    assert!(!sample.is_empty(), "the sample is empty");
    assert_eq!(
        sample,
        &fixture.rows[..sample.len().min(fixture.rows.len())],
        "the sample is not the first rows"
    );
    assert!(!parsed.columns().is_empty(), "no columns");
    assert!(
        parsed.columns().iter().any(|c| c.name == fixture.sort_field),
        "the sort field is not a column"
    );
    assert!(!parsed.is_expired(), "a fresh resource is expired");
    assert!(parsed.executed_at().is_some(), "no executed_at");
}

/// Paging: the first page, walking `next_offset` to the end, and an offset past the end.
pub async fn check_pages(client: &DualResponseClient, fixture: &Fixture) {
    let parsed = parsed(client, fixture);
    let n = total(fixture);
    let first = ok(parsed.fetch(FetchOptions::new().limit(3)).await, "first page");
    assert_eq!(first.data, fixture.rows[..3], "first page rows");
    assert_eq!(
        (first.total_count, first.returned_count, first.offset, first.limit),
        (n, 3, 0, 3)
    );
    assert!(first.has_next && !first.has_previous, "first page flags");
    assert_eq!(first.next_offset, Some(3), "first page next_offset");

    let mut rows = first.data;
    let mut next = first.next_offset;
    let mut pages = 1;
    while let Some(offset) = next {
        let page = ok(
            parsed.fetch(FetchOptions::new().offset(offset).limit(3)).await,
            "next page",
        );
        assert_eq!(page.offset, offset, "page offset");
        assert!(page.has_previous, "has_previous after the first page");
        assert_eq!(page.returned_count, page.data.len() as u64, "returned_count");
        next = page.next_offset;
        assert_eq!(page.has_next, next.is_some(), "has_next agrees with next_offset");
        rows.extend(page.data);
        pages += 1;
        assert!(pages <= fixture.rows.len(), "paging does not end");
    }
    assert_eq!(rows, fixture.rows, "pages concatenated");

    let past = ok(
        parsed.fetch(FetchOptions::new().offset(n + 5).limit(3)).await,
        "page past the end",
    );
    assert!(past.data.is_empty() && !past.has_next && past.next_offset.is_none());
}

/// Sorting re-executes the query: a page sorted descending by the sort field.
pub async fn check_sorted_pages(client: &DualResponseClient, fixture: &Fixture) {
    let parsed = parsed(client, fixture);
    let sort = Sort::new(&fixture.sort_field, SortOrder::Desc);
    let page = ok(
        parsed
            .fetch(FetchOptions::new().limit(total(fixture)).sort(sort.clone()))
            .await,
        "sorted page",
    );
    assert_eq!(page.data, sorted(fixture, &sort), "rows sorted descending");
    let page = ok(
        parsed
            .fetch(FetchOptions::new().offset(2).limit(2).sort(sort.clone()))
            .await,
        "sorted middle page",
    );
    assert_eq!(page.data, sorted(fixture, &sort)[2..4], "sorted middle page");
}

/// `fetch_all` returns every row in order and reports progress up to the total.
pub async fn check_fetch_all(client: &DualResponseClient, fixture: &Fixture) {
    let parsed = parsed(client, fixture);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let options = FetchAllOptions::new()
        .batch_size(3)
        .on_progress(move |fetched, total| {
            if let Ok(mut seen) = sink.lock() {
                seen.push((fetched, total));
            }
        });
    let rows = ok(parsed.fetch_all(options).await, "fetch_all");
    assert_eq!(rows, fixture.rows, "fetch_all rows");
    let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
    assert!(!seen.is_empty(), "no progress reported");
    assert!(
        seen.windows(2).all(|w| w[0].0 <= w[1].0),
        "progress goes backwards: {seen:?}"
    );
    assert_eq!(
        seen.last(),
        Some(&(total(fixture), total(fixture))),
        "final progress"
    );
}

/// `fetch_all` with a sort, small batches and several pages at once still returns rows in order.
pub async fn check_fetch_all_sorted(client: &DualResponseClient, fixture: &Fixture) {
    let parsed = parsed(client, fixture);
    let sort = Sort::new(&fixture.sort_field, SortOrder::Desc);
    let options = FetchAllOptions::new()
        .batch_size(2)
        .parallelism(3)
        .sort(sort.clone());
    let rows = ok(parsed.fetch_all(options).await, "sorted fetch_all");
    assert_eq!(rows, sorted(fixture, &sort), "sorted fetch_all rows");
}

/// `fetch_stream` yields non-empty batches of at most `batch_size` rows that concatenate to the rows.
pub async fn check_fetch_stream(client: &DualResponseClient, fixture: &Fixture) {
    let parsed = parsed(client, fixture);
    for (batch_size, sort) in [
        (4, None),
        (1, None),
        (3, Some(Sort::new(&fixture.sort_field, SortOrder::Asc))),
    ] {
        let expected = match &sort {
            Some(sort) => sorted(fixture, sort),
            None => fixture.rows.clone(),
        };
        let mut options = FetchStreamOptions::new(batch_size);
        options.sort = sort;
        let mut stream = parsed.fetch_stream(options);
        let mut rows = Vec::new();
        while let Some(batch) = stream.next().await {
            let batch = ok(batch, "fetch_stream batch");
            assert!(
                !batch.is_empty() && batch.len() <= batch_size,
                "batch of {} rows for batch_size {batch_size}",
                batch.len()
            );
            rows.extend(batch);
        }
        assert_eq!(rows, expected, "fetch_stream rows (batch_size {batch_size})");
    }
}

/// `metadata` reports the resource, and every read counts.
pub async fn check_metadata(client: &DualResponseClient, fixture: &Fixture) {
    let mut parsed = parsed(client, fixture);
    let first = ok(parsed.metadata().await, "metadata");
    assert_eq!(first.total_count, total(fixture), "metadata total_count");
    assert_eq!(first.status, ResourceStatus::Ready, "metadata status");
    assert_eq!(first.columns, parsed.columns(), "metadata columns");
    assert!(first.access_count >= 1, "access_count counts this read");
    assert!(first.expires_at.is_some(), "a fresh resource expires");
    let second = ok(parsed.load_metadata().await, "second metadata");
    assert!(
        second.access_count > first.access_count,
        "access_count does not grow"
    );
    assert_eq!(parsed.total_count(), Some(total(fixture)));
}

/// `pin` removes the expiry, locally and on the server.
pub async fn check_pin(client: &DualResponseClient, fixture: &Fixture) {
    let mut parsed = parsed(client, fixture);
    let pinned = ok(parsed.pin().await, "pin");
    assert_eq!(pinned.expires_at, None, "pin response expires_at");
    assert_eq!(parsed.expires_at(), None, "local expires_at after pin");
    assert!(!parsed.is_expired());
    let metadata = ok(parsed.metadata().await, "metadata after pin");
    assert_eq!(metadata.expires_at, None, "server expires_at after pin");
    let rows = ok(
        parsed.fetch_all(FetchAllOptions::new()).await,
        "fetch_all after pin",
    );
    assert_eq!(rows, fixture.rows);
}

/// `delete` removes the resource: every later operation is `RESOURCE_NOT_FOUND`.
pub async fn check_delete(client: &DualResponseClient, fixture: &Fixture) {
    let parsed = parsed(client, fixture);
    ok(parsed.delete().await, "delete");
    assert_not_found(
        parsed.fetch(FetchOptions::new()).await.err(),
        "fetch after delete",
    );
    assert_not_found(parsed.metadata().await.err(), "metadata after delete");
    assert_not_found(
        parsed.fetch_all(FetchAllOptions::new()).await.err(),
        "fetch_all after delete",
    );
    assert_not_found(
        parsed
            .fetch_stream(FetchStreamOptions::default())
            .next()
            .await
            .and_then(Result::err),
        "fetch_stream after delete",
    );
    assert_not_found(parsed.delete().await.err(), "delete after delete");
}

/// A resource id the server never issued is `RESOURCE_NOT_FOUND` for every operation.
pub async fn check_unknown_resource(client: &DualResponseClient, fixture: &Fixture) {
    let parsed = parsed(client, fixture);
    let url = parsed.resource_url();
    let base = url.rsplit_once('/').map_or(url, |(base, _)| base);
    let unknown = match client.resource(&format!("{base}/{}", ResourceId::new())) {
        Ok(unknown) => unknown,
        Err(error) => panic!("a URL next to the fixture's does not resolve: {error}"),
    };
    assert_not_found(unknown.fetch(FetchOptions::new()).await.err(), "fetch");
    assert_not_found(unknown.metadata().await.err(), "metadata");
    assert_not_found(unknown.fetch_all(FetchAllOptions::new()).await.err(), "fetch_all");
}

fn ok<T, E: std::fmt::Display>(result: Result<T, E>, what: &str) -> T {
    match result {
        Ok(value) => value,
        Err(error) => panic!("{what} failed: {error}"),
    }
}

fn assert_not_found(error: Option<dual_client::ClientError>, what: &str) {
    match error {
        Some(error) => assert!(
            error.is_not_found(),
            "{what}: expected RESOURCE_NOT_FOUND, got {error}"
        ),
        None => panic!("{what}: expected RESOURCE_NOT_FOUND, got success"),
    }
}

/// The fixture's rows sorted by `sort` (values compared as numbers, else as strings, nulls first).
fn sorted(fixture: &Fixture, sort: &Sort) -> Vec<Row> {
    let mut rows = fixture.rows.clone();
    rows.sort_by(|a, b| {
        let ordering = compare(a.get(&sort.field), b.get(&sort.field));
        match sort.order {
            SortOrder::Asc => ordering,
            SortOrder::Desc => ordering.reverse(),
        }
    });
    rows
}

fn compare(a: Option<&Value>, b: Option<&Value>) -> Ordering {
    match (a, b) {
        (Some(Value::Number(x)), Some(Value::Number(y))) => {
            x.as_f64().partial_cmp(&y.as_f64()).unwrap_or(Ordering::Equal)
        }
        (Some(Value::String(x)), Some(Value::String(y))) => x.cmp(y),
        (None | Some(Value::Null), None | Some(Value::Null)) => Ordering::Equal,
        (None | Some(Value::Null), _) => Ordering::Less,
        (_, None | Some(Value::Null)) => Ordering::Greater,
        (Some(x), Some(y)) => x.to_string().cmp(&y.to_string()),
    }
}
