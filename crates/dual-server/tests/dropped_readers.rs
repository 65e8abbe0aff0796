//! The server drops the executor's stream whenever a live export stops early (docs/DESIGN.md §3,
//! the executor contract): a reader that goes away, and a ranged export that has its rows. (A
//! deleted pending resource and the time limit: tests/pending.rs.)

use std::sync::Arc;

use dual_core::range::RowRange;
use dual_server::{Caller, CreateResponse, DualResponseServer, QueryExecutor};
use dual_testkit::executor::Numbers;
use futures_util::StreamExt;
use serde_json::json;

async fn live(executor: &Arc<Numbers>) -> (DualResponseServer, dual_core::ResourceId) {
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor("numbers", Arc::clone(executor) as Arc<dyn QueryExecutor>)
        .without_snapshots()
        .without_sweeper()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let created = server
        .create_response(CreateResponse::new("numbers", json!({"n": 10_000, "batch": 500})))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (server, created.id)
}

#[tokio::test]
async fn a_reader_that_goes_away_drops_the_executors_stream() {
    let executor = Arc::new(Numbers::new());
    let (server, id) = live(&executor).await;
    let (_, mut stream) = server
        .export_range(id, &Caller::anonymous(), None, RowRange::ALL)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(stream.next().await.is_some_and(|batch| batch.is_ok()));
    assert_eq!(executor.alive(), 1, "the export is under way");
    drop(stream);
    assert_eq!(executor.alive(), 0, "dropped with the reader's stream");
}

#[tokio::test]
async fn a_ranged_export_drops_the_executors_stream_once_it_has_its_rows() {
    let executor = Arc::new(Numbers::new());
    let (server, id) = live(&executor).await;
    let range = RowRange::new(0, Some(1_200));
    let (_, mut stream) = server
        .export_range(id, &Caller::anonymous(), None, range)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut rows = 0;
    while let Some(batch) = stream.next().await {
        rows += batch.unwrap_or_else(|e| panic!("{e}")).len();
        if rows >= 1_200 {
            break;
        }
    }
    assert_eq!(rows, 1_200);
    assert_eq!(
        executor.alive(),
        0,
        "dropped after the last row, before the reader lets go"
    );
    drop(stream);
}
