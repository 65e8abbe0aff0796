//! The spool on a real S3-compatible server (`DUAL_TEST_S3_ENDPOINT`, by default moto at
//! `http://127.0.0.1:9000`; `bash .ci/services` starts it; feature `services`): the conformance
//! suite, two instances sharing snapshots, and outages through a fault-injection proxy. Each test
//! creates its own bucket and removes it with everything in it; when the server is unreachable the
//! tests fail, saying how to start it.
#![cfg(feature = "services")]

use std::time::Duration;

use dual_core::ResourceId;
use dual_spool::Spool;
use dual_testkit::proxy::{Mode, Proxy};
use dual_testkit::s3::Bucket;
use dual_testkit::services::S3;
use dual_testkit::spool::outage::Bounds;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_passes_the_conformance_suite() {
    let bucket = Bucket::create("dual-spool-test").await;
    let shared = bucket.clone();
    let outcome = tokio::spawn(async move {
        dual_testkit::spool::run(|| {
            let spool = shared.spool(&format!("suite/{}", ResourceId::new()));
            async move { Spool::new(spool) }
        })
        .await;
    })
    .await;
    bucket.finish(outcome).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instance_b_serves_and_deletes_what_instance_a_wrote() {
    let bucket = Bucket::create("dual-spool-test").await;
    let (a, b) = (
        Spool::new(bucket.spool("shared")),
        Spool::new(bucket.spool("shared")),
    );
    let outcome = async move {
        let id = ResourceId::new();
        let rows = dual_testkit::spool::sample_rows(50);
        let mut writer = a
            .clone()
            .with_segment_limits(dual_testkit::spool::LIMITS)
            .writer(id)
            .await
            .expect("writer");
        for row in &rows {
            writer.append(row).await.expect("append");
        }
        let manifest = writer.finish().await.expect("finish");
        assert_eq!(b.manifest(id).await.expect("B sees the manifest"), manifest);
        let read: Vec<Vec<u8>> = b
            .read_rows(id, 0, 100)
            .await
            .expect("B reads")
            .iter()
            .map(|r| r.to_vec())
            .collect();
        assert_eq!(read, rows);
        assert!(
            b.list()
                .await
                .expect("list")
                .iter()
                .any(|s| s.id == id && s.finished)
        );
        b.delete(id).await.expect("B deletes");
        assert!(
            a.read_rows(id, 0, 1)
                .await
                .expect_err("gone for A too")
                .is_not_found()
        );
        assert!(
            a.list().await.expect("list").is_empty(),
            "no object of the snapshot is left"
        );
    };
    bucket.finish(tokio::spawn(outcome).await).await;
}

/// A failing call may take the request timeout times the tries plus slack; recovery needs a new
/// connection.
const BOUNDS: Bounds = Bounds {
    fail_within: Duration::from_secs(5),
    recover_within: Duration::from_secs(15),
};

async fn outage(mode: Mode) {
    let bucket = Bucket::create("dual-spool-test").await;
    let proxy = Proxy::start(S3.addr().expect("address")).await.expect("proxy");
    let endpoint = S3.url_through(proxy.addr()).expect("endpoint");
    let spool = bucket
        .builder(&endpoint, "outage")
        .timeout(Duration::from_millis(700))
        .connect_timeout(Duration::from_millis(500))
        .retries(1, Duration::from_secs(2))
        .build()
        .expect("S3 spool");
    let spool = Spool::new(spool);
    let result = tokio::spawn(async move {
        dual_testkit::spool::outage::outage_and_recovery(
            &spool,
            || proxy.set(mode),
            || proxy.set(Mode::Open),
            BOUNDS,
        )
        .await;
    })
    .await;
    bucket.finish(result).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connections_are_retryable_storage_errors_and_recover() {
    outage(Mode::Refuse).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_network_times_out_as_a_storage_error_and_recovers() {
    outage(Mode::Blackhole).await;
}
