//! One store round trip per read (issue 23): every read authorizes the caller and counts the access
//! in one `record_access` call, which counts nothing for a caller that may not see the resource.

mod common;

use std::sync::Arc;

use dual_core::{
    PageRequest, ResourceId, Sort, SortOrder, consistency::Consistency, range::RowRange,
    status::ResourceStatus,
};
use dual_server::dual_store::ResourceStore;
use dual_server::{Caller, CreateResponse, DualResponseServer, ServerError, ServerErrorCode};
use dual_testkit::BreakableStore;
use serde_json::json;

/// A server over a store that counts its calls, with snapshots or without (live resources).
fn server(snapshots: bool) -> (DualResponseServer, Arc<BreakableStore>) {
    let store = Arc::new(BreakableStore::new("not broken in these tests"));
    let builder = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_store(Arc::clone(&store) as Arc<dyn ResourceStore>)
        .shared_executor("institutions", common::shared())
        .without_sweeper();
    let builder = if snapshots {
        builder
    } else {
        builder.without_snapshots()
    };
    (builder.build().expect("server"), store)
}

/// A ready resource of 30 rows owned by `tenant-a`.
async fn owned(server: &DualResponseServer, consistency: Consistency) -> ResourceId {
    let id = server
        .create_response(CreateResponse::new("institutions", json!({"n": 30})).owner("tenant-a"))
        .await
        .expect("created")
        .id;
    let record = server
        .get_resource(id, &Caller::owner("tenant-a"))
        .await
        .expect("record");
    assert_eq!(
        (record.status, record.consistency),
        (ResourceStatus::Ready, consistency)
    );
    id
}

/// How many store calls `read` makes, and its error code.
async fn calls_of<T>(
    store: &BreakableStore,
    read: impl Future<Output = Result<T, ServerError>>,
) -> (u64, Option<ServerErrorCode>) {
    let before = store.calls();
    let code = read.await.err().map(|e| e.code());
    (store.calls() - before, code)
}

/// Every read of `id` as `caller`, each with the number of store calls it made and its error code.
async fn reads(
    server: &DualResponseServer,
    store: &BreakableStore,
    id: ResourceId,
    caller: &Caller,
) -> Vec<(&'static str, (u64, Option<ServerErrorCode>))> {
    let page = PageRequest::default();
    let sorted = PageRequest {
        sort: Some(Sort::new("enrollment", SortOrder::Desc)),
        ..PageRequest::default()
    };
    vec![
        ("metadata", calls_of(store, server.metadata(id, caller)).await),
        (
            "fetch_page",
            calls_of(store, server.fetch_page(id, caller, &page)).await,
        ),
        (
            "sorted fetch_page",
            calls_of(store, server.fetch_page(id, caller, &sorted)).await,
        ),
        (
            "fetch_page_encoded",
            calls_of(store, server.fetch_page_encoded(id, caller, &page)).await,
        ),
        (
            "fetch_page_within",
            calls_of(store, server.fetch_page_within(id, caller, &page, 1024)).await,
        ),
        (
            "stream_range",
            calls_of(
                store,
                server.stream_range(id, caller, None, RowRange::new(5, Some(10))),
            )
            .await,
        ),
        (
            "export_range",
            calls_of(store, server.export_range(id, caller, None, RowRange::ALL)).await,
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_is_one_store_call_and_counts_one_access() {
    for (snapshots, consistency) in [(true, Consistency::Snapshot), (false, Consistency::Live)] {
        let (server, store) = server(snapshots);
        let id = owned(&server, consistency).await;
        let seen = reads(&server, &store, id, &Caller::owner("tenant-a")).await;
        for (read, (calls, code)) in &seen {
            assert_eq!(*code, None, "{consistency:?} {read} succeeds");
            assert_eq!(*calls, 1, "{consistency:?} {read}: one store call");
        }
        let record = server
            .get_resource(id, &Caller::owner("tenant-a"))
            .await
            .expect("record");
        assert_eq!(
            record.access_count,
            seen.len() as u64,
            "{consistency:?}: each read counted once"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strangers_reads_are_one_store_call_each_and_leave_the_count_alone() {
    let (server, store) = server(true);
    let id = owned(&server, Consistency::Snapshot).await;
    let (calls, code) = calls_of(
        &store,
        server.fetch_page(id, &Caller::owner("tenant-a"), &PageRequest::default()),
    )
    .await;
    assert_eq!((calls, code), (1, None), "the owner's page");
    for stranger in [Caller::owner("tenant-b"), Caller::anonymous()] {
        for (read, (calls, code)) in reads(&server, &store, id, &stranger).await {
            assert_eq!(
                code,
                Some(ServerErrorCode::ResourceNotFound),
                "{stranger:?} {read}: exactly an unknown id"
            );
            assert_eq!(calls, 1, "{stranger:?} {read}: one store call");
        }
    }
    let record = server
        .get_resource(id, &Caller::owner("tenant-a"))
        .await
        .expect("record");
    assert_eq!(record.access_count, 1, "only the owner's page counted");
    assert!(record.last_accessed_at.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_sort_is_counted_the_record_being_read_anyway() {
    let (server, _store) = server(true);
    let id = owned(&server, Consistency::Snapshot).await;
    let owner = Caller::owner("tenant-a");
    let bad = PageRequest {
        sort: Some(Sort::new("nope", SortOrder::Asc)),
        ..PageRequest::default()
    };
    let code = common::error_code(server.fetch_page(id, &owner, &bad).await, "no such column");
    assert_eq!(code, ServerErrorCode::InvalidRequest);
    let record = server.get_resource(id, &owner).await.expect("record");
    assert_eq!(record.access_count, 1, "the refused page counted");
}
