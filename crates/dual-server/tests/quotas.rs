//! The quotas of a server: the spool's caps reached by a snapshot, and the per-owner quotas
//! (live bytes, live resources, running queries, pins). At a quota the call fails with the retryable
//! `QUOTA_EXCEEDED` naming it, what exists is still served, and room comes back after a delete.
//! Also the builder's refusal of a process-local spool with a shared store.

mod common;

use std::sync::Arc;

use dual_core::{PageRequest, ResourceId};
use dual_server::dual_spool::{MemorySpool, MemorySpoolBuilder, Spool};
use dual_server::dual_store::{MemoryStore, ResourceStore};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, QueryExecutor, Quota, ServerBuildError, ServerError,
    ServerErrorCode,
};
use serde_json::json;
use time::OffsetDateTime;

fn blobs(n: u64, bytes: u64) -> CreateResponse {
    CreateResponse::new("blobs", json!({"n": n, "bytes": bytes}))
}

fn builder() -> dual_server::DualResponseServerBuilder {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor("blobs", common::blobs())
        .without_sweeper()
}

/// [`builder`] with a memory spool as `spool` configures it.
async fn builder_with_spool(spool: MemorySpoolBuilder) -> dual_server::DualResponseServerBuilder {
    builder().spool(Spool::new(spool.build().await.expect("spool")))
}

fn quota_of(error: &ServerError) -> Option<(Quota, u64)> {
    match error {
        ServerError::QuotaExceeded { quota, limit } => Some((*quota, *limit)),
        _ => None,
    }
}

/// Creates `request`, which `what` says must be refused at `quota` of `limit`; the refusal.
async fn refused(
    server: &DualResponseServer,
    request: CreateResponse,
    what: &str,
    (quota, limit): (Quota, u64),
) -> ServerError {
    let refused = server.create_response(request).await.expect_err(what);
    assert_eq!(quota_of(&refused), Some((quota, limit)), "{what}: {refused:?}");
    refused
}

/// `id` is still served to `caller`, all `rows` of it; once deleted, `request` has room again.
async fn served_then_room_after_deleting(
    server: &DualResponseServer,
    (id, rows): (ResourceId, u64),
    caller: &Caller,
    request: CreateResponse,
) {
    let page = server
        .fetch_page(id, caller, &PageRequest::default())
        .await
        .expect("an earlier resource is still served");
    assert_eq!(page.returned_count, rows);
    server.delete_resource(id, caller).await.expect("delete");
    server
        .create_response(request)
        .await
        .expect("room again after a delete");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_past_the_spool_cap_is_refused_naming_it_and_earlier_ones_are_still_served() {
    let server = builder_with_spool(MemorySpool::builder().memory_budget(0).max_bytes(200_000))
        .await
        .build()
        .expect("server");
    let anyone = Caller::anonymous();
    // ~100 KB, then ~150 KB: together past the 200 KB cap.
    let first = server.create_response(blobs(100, 1_000)).await.expect("fits");
    let refused = refused(
        &server,
        blobs(150, 1_000),
        "passes the spool cap",
        (Quota::SpoolBytes, 200_000),
    )
    .await;
    assert_eq!(refused.code(), ServerErrorCode::QuotaExceeded);
    assert!(refused.is_retryable() && refused.retry_after().is_some());
    assert_eq!(
        server
            .store()
            .live_count(OffsetDateTime::now_utc())
            .await
            .expect("count"),
        1
    );
    served_then_room_after_deleting(&server, (first.id, 100), &anyone, blobs(150, 1_000)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spill_past_the_free_space_floor_is_refused_naming_it() {
    let server = builder_with_spool(
        MemorySpool::builder()
            .memory_budget(0)
            .unlimited_bytes()
            .min_free_bytes(u64::MAX / 2),
    )
    .await
    .build()
    .expect("server");
    let refused = server
        .create_response(blobs(10, 100))
        .await
        .expect_err("no disk has that much room");
    if cfg!(unix) {
        assert_eq!(
            quota_of(&refused).map(|(q, _)| q),
            Some(Quota::SpoolFreeSpace),
            "{refused:?}"
        );
    }
}

/// A memory store that says it is shared, as Redis and PostgreSQL do.
fn shared_store() -> dual_testkit::BreakableStore {
    dual_testkit::BreakableStore::new("never broken here").pretending_shared()
}

#[tokio::test]
async fn a_shared_store_with_a_process_local_spool_is_refused_naming_both() {
    let error = builder()
        .store(shared_store())
        .build()
        .expect_err("the default memory spool with a shared store");
    assert_eq!(
        error,
        ServerBuildError::ProcessLocalSpool {
            spool: "the default memory spool"
        }
    );
    let message = error.to_string();
    assert!(
        message.contains("store is shared") && message.contains("the default memory spool is process-local"),
        "{message}"
    );
    let local = Spool::new(MemorySpool::new().expect("spool"));
    let error = builder()
        .store(shared_store())
        .spool(local.clone())
        .build()
        .expect_err("a given memory spool with a shared store");
    assert!(
        matches!(error, ServerBuildError::ProcessLocalSpool { .. }),
        "{error:?}"
    );

    // Without snapshots there is nothing to share; a shared spool, or a local store, is fine.
    builder()
        .store(shared_store())
        .without_snapshots()
        .build()
        .expect("no snapshots");
    builder()
        .store(shared_store())
        .spool(Spool::new(dual_testkit::InProcessShared(
            MemorySpool::new().expect("spool"),
        )))
        .build()
        .expect("a shared spool");
    builder().spool(local).build().expect("a local store and spool");
    assert!(!Arc::new(MemoryStore::new()).is_shared());
}

fn owned(n: u64, bytes: u64, owner: &str) -> CreateResponse {
    blobs(n, bytes).owner(owner)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_at_its_resource_quota_is_refused_and_others_are_not() {
    let server = builder().owner_max_resources(2).build().expect("server");
    let alice = Caller::owner("alice");
    let first = server
        .create_response(owned(3, 10, "alice"))
        .await
        .expect("first");
    server
        .create_response(owned(3, 10, "alice"))
        .await
        .expect("second");
    let refused = refused(
        &server,
        owned(3, 10, "alice"),
        "a third live resource",
        (Quota::OwnerResources, 2),
    )
    .await;
    assert!(refused.is_retryable());
    server
        .create_response(owned(3, 10, "bob"))
        .await
        .expect("another owner has room");
    server
        .create_response(blobs(3, 10))
        .await
        .expect("anonymous callers are an owner of their own");
    served_then_room_after_deleting(&server, (first.id, 3), &alice, owned(3, 10, "alice")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_past_the_owner_byte_quota_is_refused_and_removed() {
    let server = builder_with_spool(MemorySpool::builder())
        .await
        .owner_max_bytes(50_000)
        .build()
        .expect("server");
    let alice = Caller::owner("alice");
    // ~30 KB each: the second passes alice's 50 KB.
    let first = server
        .create_response(owned(30, 1_000, "alice"))
        .await
        .expect("fits");
    refused(
        &server,
        owned(30, 1_000, "alice"),
        "past alice's bytes",
        (Quota::OwnerBytes, 50_000),
    )
    .await;
    server
        .create_response(owned(30, 1_000, "bob"))
        .await
        .expect("bob's bytes are his own");
    let mut spooled = 0;
    for _ in 0..200 {
        spooled = server.spool().expect("spool").list().await.expect("list").len();
        if spooled == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(spooled, 2, "the refused snapshot's segments are removed");
    served_then_room_after_deleting(&server, (first.id, 30), &alice, owned(30, 1_000, "alice")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_at_its_running_query_quota_is_refused_until_one_ends() {
    let gated = Arc::new(dual_testkit::executor::Numbers::new().steps([5, 5]));
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor("gated", Arc::clone(&gated) as Arc<dyn QueryExecutor>)
        .pending_after(std::time::Duration::from_millis(50))
        .owner_max_queries(1)
        .without_sweeper()
        .build()
        .expect("server");
    let gated_for = |owner: &str| CreateResponse::new("gated", json!({})).owner(owner);
    let pending = server.create_response(gated_for("alice")).await.expect("pending");
    assert_eq!(pending.status, dual_core::status::ResourceStatus::Pending);
    refused(
        &server,
        gated_for("alice"),
        "alice's one query is still running",
        (Quota::OwnerQueries, 1),
    )
    .await;
    gated.open();
    let alice = Caller::owner("alice");
    let mut ready = false;
    for _ in 0..400 {
        let record = server.get_resource(pending.id, &alice).await.expect("record");
        if record.status == dual_core::status::ResourceStatus::Ready {
            ready = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(ready, "the pending query ends");
    gated.open();
    server
        .create_response(gated_for("alice"))
        .await
        .expect("a slot again once the query ended");
}

#[tokio::test]
async fn pins_are_capped_per_owner_and_anonymous_pins_can_be_off() {
    let server = builder()
        .owner_max_pins(1)
        .anonymous_pins(false)
        .build()
        .expect("server");
    let alice = Caller::owner("alice");
    let anyone = Caller::anonymous();
    let first = server
        .create_response(owned(1, 1, "alice"))
        .await
        .expect("create");
    let second = server
        .create_response(owned(1, 1, "alice"))
        .await
        .expect("create");
    server
        .pin_resource(first.id, &alice)
        .await
        .expect("the first pin");
    server
        .pin_resource(first.id, &alice)
        .await
        .expect("pinning again is idempotent");
    let refused = server
        .pin_resource(second.id, &alice)
        .await
        .expect_err("past alice's pins");
    assert_eq!(quota_of(&refused), Some((Quota::OwnerPins, 1)), "{refused:?}");
    let record = server.get_resource(second.id, &alice).await.expect("record");
    assert!(!record.is_pinned(), "the refused pin changed nothing");

    let public = server.create_response(blobs(1, 1)).await.expect("create");
    let refused = server
        .pin_resource(public.id, &anyone)
        .await
        .expect_err("anonymous pins are off");
    assert_eq!(quota_of(&refused), Some((Quota::OwnerPins, 0)), "{refused:?}");
    server.delete_resource(first.id, &alice).await.expect("delete");
    server
        .pin_resource(second.id, &alice)
        .await
        .expect("room again after a delete");
}

/// A spool cap reached after the tool call was answered must not lose the announced result: it is
/// served live (recounted, every row readable), never `failed`.
#[tokio::test]
async fn a_spool_cap_reached_after_the_answer_serves_the_result_live() {
    let executor = Arc::new(
        dual_testkit::executor::Numbers::new()
            .counted()
            .steps([10, 9_990]),
    );
    let server = builder_with_spool(MemorySpool::builder().memory_budget(0).max_bytes(200_000))
        .await
        .shared_executor("gated", Arc::clone(&executor) as Arc<dyn QueryExecutor>)
        .pending_after(std::time::Duration::from_millis(100))
        .build()
        .expect("server");
    let anyone = Caller::anonymous();
    let created = server
        .create_response(CreateResponse::new("gated", json!({})).sample_size(5))
        .await
        .expect("answered with the count before the rows pass the cap");
    assert_eq!(created.total_count, 10_000);
    executor.open();
    let record = common::record_once(&server, created.id, |r| !r.is_running(), "running").await;
    assert_eq!(
        record.status,
        dual_core::status::ResourceStatus::Ready,
        "{:?}",
        record.failure
    );
    assert_eq!(record.consistency, dual_core::consistency::Consistency::Live);
    assert_eq!(record.total_count, 10_000);
    let last = server
        .fetch_page(
            created.id,
            &anyone,
            &PageRequest {
                offset: Some(9_995),
                limit: Some(10),
                sort: None,
            },
        )
        .await
        .expect("the last rows, live");
    assert_eq!(last.returned_count, 5);
}
