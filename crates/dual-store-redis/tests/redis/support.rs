//! A per-test key namespace on the Redis of `DUAL_TEST_REDIS_URL` that cleans up after itself, record
//! fixtures.

use std::time::Duration;

use dual_core::ResourceRecord;
use dual_store::{ResourceStore, StoreError};
use dual_store_redis::{RedisStore, RedisStoreBuilder};
use dual_testkit::Scratch;
pub(crate) use dual_testkit::services::REDIS;
use time::OffsetDateTime;

/// A key namespace unique to one test: `dual-test:{random}:` on the Redis of `DUAL_TEST_REDIS_URL`
/// (a [`Scratch`]). Each store made from it gets its own prefix below it; every key below it is
/// deleted when the namespace is dropped (also when the test panics), and nothing else is ever
/// touched.
#[derive(Debug)]
pub(crate) struct Namespace(Scratch);

impl Namespace {
    /// A fresh namespace; panics (failing the test) with how to start Redis when it is unreachable.
    pub(crate) fn new() -> Self {
        Self(Scratch::redis_prefix())
    }

    /// A fresh, unused key prefix below the namespace.
    pub(crate) fn prefix(&self) -> String {
        format!("{}{}:", self.0.name(), self.0.next())
    }

    /// A builder for a store with a fresh prefix; the test picks its other options.
    pub(crate) fn builder(&self) -> RedisStoreBuilder {
        RedisStore::builder(self.0.url()).key_prefix(self.prefix())
    }

    /// A connected store with a fresh prefix. Panics (failing the test) when Redis is unreachable.
    pub(crate) async fn store(&self) -> RedisStore {
        connected(self.builder()).await
    }

    /// Like [`Namespace::store`], for a store that keeps expired records for `grace`.
    pub(crate) async fn store_with_grace(&self, grace: Duration) -> RedisStore {
        connected(self.builder().grace(grace)).await
    }

    /// A plain connection for inspecting what the store wrote.
    pub(crate) async fn raw(&self) -> redis::aio::MultiplexedConnection {
        let client = match redis::Client::open(self.0.url()) {
            Ok(client) => client,
            Err(e) => REDIS.unreachable(e),
        };
        match client.get_multiplexed_async_connection().await {
            Ok(con) => con,
            Err(e) => REDIS.unreachable(e),
        }
    }
}

/// One record saved by a store, with a plain connection to look at (or corrupt) what it wrote:
/// `(store, raw connection, record, the record's hash key)`.
pub(crate) type Saved = (
    RedisStore,
    redis::aio::MultiplexedConnection,
    ResourceRecord,
    String,
);

impl Namespace {
    /// Saves `record` with `store` (a store of this namespace).
    pub(crate) async fn save(&self, store: RedisStore, record: ResourceRecord) -> Result<Saved, StoreError> {
        store.save(&record).await?;
        let key = format!("{}r:{}", store.key_prefix(), record.id);
        Ok((store, self.raw().await, record, key))
    }

    /// Saves `record` with a fresh store of this namespace.
    pub(crate) async fn saved(&self, record: ResourceRecord) -> Result<Saved, StoreError> {
        self.save(self.store().await, record).await
    }

    /// Saves a pinned record created now with a fresh store of this namespace; the record's
    /// `created_at` is that now.
    pub(crate) async fn saved_pinned(&self) -> Result<Saved, StoreError> {
        self.saved(record(OffsetDateTime::now_utc(), None)).await
    }
}

/// The store `builder` connects. Panics (failing the test) when Redis is unreachable.
async fn connected(builder: RedisStoreBuilder) -> RedisStore {
    match builder.connect().await {
        Ok(store) => store,
        Err(e) => REDIS.unreachable(e),
    }
}

/// A small record created at `now` that expires at `expires_at` (`None`: pinned).
pub(crate) fn record(now: OffsetDateTime, expires_at: Option<OffsetDateTime>) -> ResourceRecord {
    dual_testkit::store::record("test", now, expires_at)
}
