//! What the PostgreSQL store does without a PostgreSQL server: configuration errors, an unreachable
//! server, and `Debug` output without the password. Needs nothing but the toolchain.

use std::time::{Duration as StdDuration, Instant};

use dual_store::StoreError;
use dual_store_postgres::{ConnectError, PostgresStore};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test]
async fn bad_configuration_is_rejected_before_connecting() {
    let url = "postgres://user:hunter2@127.0.0.1:5432/test";
    for builder in [
        PostgresStore::builder(url).table("Bad-Name"),
        PostgresStore::builder(url).table("x; DROP TABLE y"),
        PostgresStore::builder(url).schema("1st"),
        PostgresStore::builder(url).pool_size(0),
        PostgresStore::builder(url).operation_timeout(StdDuration::ZERO),
        PostgresStore::builder("postgres://user:hunter2@127.0.0.1:notaport/test"),
    ] {
        match builder.connect().await {
            Err(ConnectError::Config(message)) => assert!(!message.contains("hunter2"), "{message}"),
            other => panic!("expected a configuration error, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn an_unreachable_server_fails_fast_as_unavailable() -> TestResult {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let started = Instant::now();
    let result = PostgresStore::builder(format!("postgres://postgres:hunter2@127.0.0.1:{port}/test"))
        .connect_timeout(StdDuration::from_millis(300))
        .connect()
        .await;
    match result {
        Err(ConnectError::Store(StoreError::Unavailable(message))) => {
            assert!(!message.contains("hunter2"), "{message}");
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(
        started.elapsed() < StdDuration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    Ok(())
}

#[test]
fn debug_output_hides_the_password() {
    let builder = PostgresStore::builder("postgres://user:hunter2@127.0.0.1:5432/test");
    let text = format!("{builder:?}");
    assert!(
        !text.contains("hunter2") && text.contains("user:***@127.0.0.1"),
        "{text}"
    );
}
