//! A tool call over a slow query: `pending` at `pending_after` (whatever the executor does with its
//! count meanwhile), then the time limit fails the result with an error that names it; and a tool
//! call that waits for the end answers that error instead of hanging.

use std::sync::Arc;
use std::time::{Duration, Instant};

use dual_core::status::ResourceStatus;
use dual_server::{Caller, CreateResponse, DualResponseServer, DualResponseServerBuilder};
use serde_json::Value;

use super::{Database, Limits, sql};

/// The server's `pending_after` in these cases: short, so that an executor that started the clock
/// only after its count (which waits up to `count_wait`, 2 s by default) is caught.
const PENDING_AFTER: Duration = Duration::from_millis(400);

/// The query's time limit in these cases.
const TIME_LIMIT: Duration = Duration::from_millis(1_500);

async fn server(
    db: &dyn Database,
    build: impl FnOnce(DualResponseServerBuilder) -> DualResponseServerBuilder,
) -> DualResponseServer {
    let limits = Limits {
        time_limit: TIME_LIMIT,
        ..Limits::default()
    };
    let builder = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor("sql", db.executor(limits).await);
    build(builder).build().unwrap_or_else(|e| panic!("{e}"))
}

/// A query slower than `pending_after` answers `pending` within about `pending_after` — not after
/// its count, nor at its end — and its result then fails at the time limit, saying so.
pub async fn a_slow_query_answers_pending_then_fails_at_its_time_limit(db: Arc<dyn Database>) {
    let server = server(db.as_ref(), |b| b.pending_after(PENDING_AFTER)).await;
    let started = Instant::now();
    let created = server
        .create_response(CreateResponse::new("sql", sql(&db.slow_query(20), Value::Null)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let answered = started.elapsed();
    assert_eq!(created.status, ResourceStatus::Pending);
    assert!(
        answered < PENDING_AFTER + Duration::from_millis(900),
        "`pending` came after {answered:?}, not at pending_after ({PENDING_AFTER:?})"
    );
    let anyone = Caller::anonymous();
    let record = loop {
        let record = server
            .get_resource(created.id, &anyone)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if record.status != ResourceStatus::Pending {
            break record;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "still pending after {:?} with a time limit of {TIME_LIMIT:?}",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(record.status, ResourceStatus::Failed);
    let failure = record
        .failure
        .unwrap_or_else(|| panic!("a failed record says why"));
    assert!(
        failure.message.contains("time limit of 1500 ms"),
        "names its limit: {}",
        failure.message
    );
}

/// A tool call that waits for the end (`wait_for_end`) of a query that passes its time limit is
/// answered with the error that names the limit, within seconds of it — never left hanging.
pub async fn a_tool_call_waiting_for_the_end_gets_the_time_limit_error(db: Arc<dyn Database>) {
    let server = server(db.as_ref(), DualResponseServerBuilder::wait_for_end).await;
    let started = Instant::now();
    let answered = tokio::time::timeout(
        Duration::from_secs(15),
        server.create_response(CreateResponse::new("sql", sql(&db.slow_query(20), Value::Null))),
    )
    .await
    .unwrap_or_else(|_| panic!("the tool call hung past its time limit"));
    let error = answered
        .err()
        .unwrap_or_else(|| panic!("ran through the time limit"));
    let message = dual_core::error::Report::new(&error).to_string();
    assert!(
        message.contains("time limit of 1500 ms"),
        "names its limit: {message}"
    );
    assert!(
        started.elapsed() < TIME_LIMIT + Duration::from_secs(5),
        "answered after {:?}",
        started.elapsed()
    );
}
