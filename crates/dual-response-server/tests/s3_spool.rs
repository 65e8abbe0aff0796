//! Several `dual-response serve` processes sharing a Redis or PostgreSQL store and one S3 spool
//! (`--spool s3://BUCKET/PREFIX`, the endpoint and credentials in their `AWS_*` environment): a
//! snapshot written through instance A is served by instance B byte for byte, from the snapshot
//! even after the data changed; `DELETE` through B removes its segments before it answers; expiry
//! and the orphan sweep remove the rest; an S3 outage is a retryable 503 `storage_error`.
//!
//! Each test creates its own bucket on `DUAL_TEST_S3_ENDPOINT` (and its own Redis prefix or
//! PostgreSQL schema) and removes it with everything in it, also when it fails. Needs the services
//! (feature `services`); fails (never skips) without them.
#![cfg(feature = "services")]

mod support;

use std::time::{Duration, Instant};

use bytes::Bytes;
use dual_core::ResourceId;
use dual_server::dual_spool::Spool;
use dual_testkit::proxy::{Mode, Proxy};
use dual_testkit::s3::Bucket;
use dual_testkit::services::S3;
use http::{Method, StatusCode};
use serde_json::{Value, json};
use support::http::{Http, Reply};
use support::shared_spool::{PREFIX, Shared, with_bucket};
use support::{Backend, TempDb, create_via_mcp, id_of, rest_client, written};
use tokio::time::{sleep, timeout};

/// Rows of [`SQL`] on the small dataset.
const ROWS: u64 = dual_response_server::ipeds::dataset::DatasetSize::SMALL.institutions as u64;
/// Rows left in the database once the test changed it.
const ROWS_LEFT: u64 = 10;
/// How long a request may take to fail while S3 is cut (3 retries within 10 s at most).
const FAIL_WITHIN: Duration = Duration::from_secs(15);
/// How long the instance may take to serve again once S3 is back.
const RECOVER_WITHIN: Duration = Duration::from_secs(20);

async fn get(http: &Http, path: &str) -> Reply {
    http.send(http.request(Method::GET, path, None), Bytes::new())
        .await
}

async fn delete(http: &Http, path: &str) -> Reply {
    http.send(http.request(Method::DELETE, path, None), Bytes::new())
        .await
}

/// Asserts a 200 and returns the body.
fn ok(reply: Reply, what: &str) -> Bytes {
    assert_eq!(reply.status, StatusCode::OK, "{what}: {}", reply.text());
    reply.body
}

/// Deletes every institution of the database but the first [`ROWS_LEFT`] (leaving their degrees
/// dangling).
fn shrink(db: &TempDb) {
    let conn = rusqlite::Connection::open(db.path()).expect("the database opens for writing");
    conn.pragma_update(None, "foreign_keys", false)
        .expect("foreign keys off");
    let sql = format!(
        "DELETE FROM institutions WHERE id NOT IN (SELECT id FROM institutions ORDER BY id LIMIT {ROWS_LEFT})"
    );
    conn.execute(&sql, []).expect("rows deleted");
}

/// An id whose ULID is stamped 1970: past the orphan sweep's grace period of one hour.
fn old_id() -> ResourceId {
    let fresh = ResourceId::new().to_string();
    format!("0000000000{}", &fresh[10..]).parse().expect("a ULID")
}

async fn shares_snapshots(shared: Shared) {
    let endpoint = S3.url();
    let (a, b) = tokio::join!(shared.instance(&endpoint, &[]), shared.instance(&endpoint, &[]));
    let (http_a, http_b) = (Http::new(a.addr()), Http::new(b.addr()));

    // Created through A's MCP endpoint: the snapshot is in the bucket, under the shared prefix.
    let created = create_via_mcp(&a, &rest_client(&b)).await;
    assert_eq!(created.total_count(), Some(ROWS));
    let id = id_of(&created);
    let objects = shared.objects_of(&id).await;
    assert!(
        objects.iter().any(|o| o.ends_with("/manifest")) && objects.iter().any(|o| o.ends_with(".seg")),
        "{objects:?}"
    );

    // B says it serves the snapshot, and serves exactly A's bytes.
    let item = format!("/resources/{id}");
    let metadata: Value =
        serde_json::from_slice(&ok(get(&http_b, &item).await, "metadata on B")).expect("JSON");
    assert_eq!(metadata["consistency"], "snapshot", "{metadata}");
    assert_eq!(metadata["total_count"], ROWS, "{metadata}");
    let pages = [
        json!({"offset": 5, "limit": 10}),
        json!({"offset": 3, "limit": 1000, "sort": {"field": "name", "order": "desc"}}),
    ];
    let mut from_a = Vec::new();
    for body in &pages {
        let page_a = ok(http_a.post_json(&item, None, body).await, "page on A");
        let page_b = ok(http_b.post_json(&item, None, body).await, "page on B");
        assert_eq!(page_a, page_b, "{body}");
        from_a.push(page_a);
    }
    let data = format!("{item}/data");
    let export_a = ok(get(&http_a, &data).await, "export on A");
    let export_b = ok(get(&http_b, &data).await, "export on B");
    assert_eq!(export_a, export_b);
    let rows: Vec<Value> = serde_json::from_slice(&export_b).expect("a JSON array");
    assert_eq!(rows.len() as u64, ROWS);

    // The data changes; B goes on serving the snapshot, while a new query sees the change.
    shrink(&shared.db);
    let after = create_via_mcp(&b, &rest_client(&b)).await;
    assert_eq!(
        after.total_count(),
        Some(ROWS_LEFT),
        "the change is visible to queries"
    );
    assert_eq!(
        ok(get(&http_b, &data).await, "export on B after the change"),
        export_a
    );
    for (body, page_a) in pages.iter().zip(&from_a) {
        let page_b = ok(
            http_b.post_json(&item, None, body).await,
            "page on B after the change",
        );
        assert_eq!(&page_b, page_a, "{body}");
    }
    let metadata: Value = serde_json::from_slice(&ok(get(&http_b, &item).await, "metadata")).expect("JSON");
    assert_eq!(metadata["total_count"], ROWS, "{metadata}");

    // DELETE through B: its segments are gone when it answers, and A no longer has the resource.
    let deleted = delete(&http_b, &item).await;
    assert!(deleted.status.is_success(), "{}", deleted.text());
    assert_eq!(shared.objects_of(&id).await, Vec::<String>::new());
    for path in [&item, &data] {
        let reply = get(&http_a, path).await;
        assert_eq!(
            reply.status,
            StatusCode::NOT_FOUND,
            "{path} on A: {}",
            reply.text()
        );
    }
    let page = http_a.post_json(&item, None, &json!({})).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND, "{}", page.text());

    // Orphans (a finished snapshot and a crashed writer's segment, no record) older than the grace
    // period are swept; a young one is left alone.
    let spool = Spool::new(shared.bucket.spool(PREFIX));
    let (finished, crashed, young) = (old_id(), old_id(), ResourceId::new());
    let mut writer = spool.writer(finished).await.expect("a writer");
    for row in [r#"{"id":1}"#, r#"{"id":2}"#] {
        writer.append(row.as_bytes()).await.expect("append");
    }
    writer.finish().await.expect("finish");
    for id in [crashed, young] {
        spool
            .backend()
            .put_segment(id, 0, Bytes::from_static(b"a segment"))
            .await
            .expect("a segment");
    }
    shared
        .wait_swept(&finished.to_string(), "a finished orphan")
        .await;
    shared
        .wait_swept(&crashed.to_string(), "a crashed writer's segment")
        .await;
    assert_eq!(
        shared.objects_of(&young.to_string()).await.len(),
        1,
        "a young orphan (its record may still be on the way) stays"
    );
    spool.delete(young).await.expect("the young orphan removed");

    // Expiry: a resource created through an instance that gives two seconds of life is swept with
    // its segments.
    let short = shared.instance(&endpoint, &["--expiration-secs", "2"]).await;
    let expiring = create_via_mcp(&short, &rest_client(&short)).await;
    let expiring_id = id_of(&expiring);
    assert!(!shared.objects_of(&expiring_id).await.is_empty());
    shared
        .wait_swept(&expiring_id, "an expired resource's snapshot")
        .await;
    let reply = get(&http_b, &format!("/resources/{expiring_id}")).await;
    assert!(
        matches!(reply.status, StatusCode::NOT_FOUND | StatusCode::GONE),
        "{}",
        reply.text()
    );

    // The instances log where the spool is, never the secret.
    let secret = Bucket::secret();
    for instance in [&a, &b, &short] {
        let log = instance.log();
        assert!(log.contains(&shared.bucket.url(PREFIX)), "{log}");
        assert!(!log.contains(&secret), "{log}");
    }
    for instance in [a, b, short] {
        instance.kill().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_instances_share_snapshots_on_s3() {
    with_bucket(Backend::Redis, shares_snapshots).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_instances_share_snapshots_on_s3() {
    with_bucket(Backend::Postgres, shares_snapshots).await;
}

/// Asserts `reply` is a retryable 503 `storage_error` with `Retry-After`.
fn assert_storage_error(reply: &Reply, what: &str) {
    reply.assert_retryable_503("storage_error", what);
}

/// Awaits `request` and asserts it failed with [`assert_storage_error`] within [`FAIL_WITHIN`].
async fn fails_in_time(what: &str, request: impl Future<Output = Reply>) {
    let reply = timeout(FAIL_WITHIN, request)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {FAIL_WITHIN:?} while S3 is cut"));
    assert_storage_error(&reply, what);
}

async fn outage(shared: Shared) {
    let proxy = Proxy::start(S3.addr().expect("the S3 address"))
        .await
        .expect("the proxy starts");
    let endpoint = S3
        .url_through(proxy.addr())
        .expect("an endpoint through the proxy");
    let instance = shared.instance(&endpoint, &[]).await;
    let http = Http::new(instance.addr());
    let created = create_via_mcp(&instance, &rest_client(&instance)).await;
    let item = format!("/resources/{}", id_of(&created));
    let data = format!("{item}/data");
    // The tool call answers at its first sample: the outage is of a snapshot already written.
    written(&created).await;

    proxy.set(Mode::Refuse);
    fails_in_time("a page", http.post_json(&item, None, &json!({"limit": 5}))).await;
    fails_in_time("an export", get(&http, &data)).await;
    fails_in_time("a delete", delete(&http, &item)).await;

    // Back: the resource the failed delete left in place is served again, then deleted.
    proxy.set(Mode::Open);
    let started = Instant::now();
    loop {
        let reply = http.post_json(&item, None, &json!({"limit": 5})).await;
        if reply.status == StatusCode::OK {
            break;
        }
        assert_storage_error(&reply, "a page while S3 comes back");
        assert!(
            started.elapsed() < RECOVER_WITHIN,
            "no recovery within {RECOVER_WITHIN:?}"
        );
        sleep(Duration::from_millis(250)).await;
    }
    let rows: Vec<Value> = serde_json::from_slice(&ok(get(&http, &data).await, "the export")).expect("JSON");
    assert_eq!(rows.len() as u64, ROWS);
    let deleted = delete(&http, &item).await;
    assert!(deleted.status.is_success(), "{}", deleted.text());
    assert_eq!(shared.objects_of(&id_of(&created)).await, Vec::<String>::new());
    instance.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_s3_outage_is_a_retryable_storage_error_and_recovers() {
    with_bucket(Backend::Redis, outage).await;
}
