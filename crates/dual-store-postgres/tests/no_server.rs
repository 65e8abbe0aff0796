//! What the PostgreSQL store does without a PostgreSQL server: configuration errors, an unreachable
//! server, and `Debug` output without the password. Needs nothing but the toolchain.

use std::time::Duration as StdDuration;

use dual_store_postgres::{PostgresStore, PostgresStoreBuilder};
use dual_testkit::store::connect;

#[tokio::test]
async fn bad_configuration_is_rejected_before_connecting() {
    let url = "postgres://user:hunter2@127.0.0.1:5432/test";
    let builders = [
        PostgresStore::builder(url).table("Bad-Name"),
        PostgresStore::builder(url).table("x; DROP TABLE y"),
        PostgresStore::builder(url).schema("1st"),
        PostgresStore::builder(url).pool_size(0),
        PostgresStore::builder(url).operation_timeout(StdDuration::ZERO),
        PostgresStore::builder("postgres://user:hunter2@127.0.0.1:notaport/test"),
    ];
    connect::refuses_bad_configurations(builders.map(PostgresStoreBuilder::connect), "hunter2").await;
}

#[tokio::test]
async fn an_unreachable_server_fails_fast_as_unavailable() {
    connect::fails_fast_when_unreachable(
        |port| {
            PostgresStore::builder(format!("postgres://postgres:hunter2@127.0.0.1:{port}/test"))
                .connect_timeout(StdDuration::from_millis(300))
                .connect()
        },
        "hunter2",
    )
    .await;
}

#[test]
fn debug_output_hides_the_password() {
    let builder = PostgresStore::builder("postgres://user:hunter2@127.0.0.1:5432/test");
    connect::debug_hides_the_secret(&builder, "hunter2", "user:***@127.0.0.1");
}
