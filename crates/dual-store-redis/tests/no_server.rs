//! What the Redis store does without a Redis server: configuration errors, an unreachable server,
//! and `Debug` output without the password. Needs nothing but the toolchain.

use std::time::Duration as StdDuration;

use dual_store_redis::{RedisStore, RedisStoreBuilder};
use dual_testkit::store::connect;

#[tokio::test]
async fn bad_configuration_is_rejected_before_connecting() {
    let builders = [
        RedisStore::builder("redis://127.0.0.1:6379").key_prefix(""),
        RedisStore::builder("redis://127.0.0.1:6379").operation_timeout(StdDuration::ZERO),
        RedisStore::builder("redis://127.0.0.1:6379").purge_batch(0),
        RedisStore::builder("http://:hunter2@127.0.0.1:6379"),
    ];
    connect::refuses_bad_configurations(builders.map(RedisStoreBuilder::connect), "hunter2").await;
}

#[tokio::test]
async fn an_unreachable_server_fails_fast_as_unavailable() {
    connect::fails_fast_when_unreachable(
        |port| {
            RedisStore::builder(format!("redis://:hunter2@127.0.0.1:{port}"))
                .operation_timeout(StdDuration::from_millis(500))
                .connect_timeout(StdDuration::from_millis(200))
                .connect()
        },
        "hunter2",
    )
    .await;
}

#[test]
fn debug_output_hides_the_password() {
    let builder = RedisStore::builder("redis://user:hunter2@127.0.0.1:6379/0");
    connect::debug_hides_the_secret(&builder, "hunter2", "user:***@127.0.0.1");
}
