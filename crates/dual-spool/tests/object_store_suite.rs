//! The conformance suite on the object store backend with `object_store`'s in-memory store (no
//! server needed); the S3 tests (feature `services`) run it against a real S3-compatible server.

use std::sync::Arc;
use std::time::Duration;

use dual_core::ResourceId;
use dual_spool::{ObjectStoreSpool, Spool};
use dual_testkit::BreakableSpool;
use dual_testkit::spool::outage::Bounds;
use object_store::memory::InMemory;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_object_store_passes_the_conformance_suite() {
    let store = Arc::new(InMemory::new());
    dual_testkit::spool::run(|| {
        let store = store.clone();
        async move {
            let prefix = format!("suite/{}", ResourceId::new());
            Spool::new(ObjectStoreSpool::new(store, &prefix).expect("prefix"))
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spools_on_the_bucket_root_and_on_prefixes_do_not_see_each_other_or_foreign_objects() {
    use object_store::{ObjectStoreExt, PutPayload, path::Path};
    let store = Arc::new(InMemory::new());
    let root = Spool::new(ObjectStoreSpool::new(store.clone(), "").expect("root"));
    let nested = Spool::new(ObjectStoreSpool::new(store.clone(), "a/b").expect("prefix"));
    store
        .put(&Path::from("unrelated/file.txt"), PutPayload::from_static(b"x"))
        .await
        .expect("foreign object");
    let id = ResourceId::new();
    let mut writer = nested.writer(id).await.expect("writer");
    writer.append(b"{}").await.expect("append");
    writer.finish().await.expect("finish");
    assert!(
        root.list().await.expect("list").is_empty(),
        "nested objects are not the root's"
    );
    assert_eq!(nested.list().await.expect("list").len(), 1);
    assert!(
        root.read_rows(id, 0, 1)
            .await
            .expect_err("other prefix")
            .is_not_found()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switched_off_object_store_fails_retryably_and_recovers() {
    let backend = BreakableSpool::new(ObjectStoreSpool::new(Arc::new(InMemory::new()), "x").expect("prefix"));
    let bounds = Bounds {
        fail_within: Duration::from_secs(2),
        recover_within: Duration::from_secs(5),
    };
    dual_testkit::spool::outage::switched_off(&backend, bounds).await;
}

#[tokio::test]
async fn an_object_store_spool_is_shared_and_keeps_no_count() {
    let spool = Spool::new(ObjectStoreSpool::new(Arc::new(InMemory::new()), "p").expect("prefix"));
    assert!(spool.is_shared(), "every instance on the bucket reads it");
    assert_eq!(spool.usage(), None);
    let local = Spool::new(dual_spool::MemorySpool::new().expect("memory spool"));
    assert!(!local.is_shared() && local.usage().is_some());
}
