//! A per-test schema in the database of `DUAL_TEST_POSTGRES_URL` that drops itself, record fixtures.

use dual_core::ResourceRecord;
use dual_store::{ResourceStore, StoreError};
use dual_store_postgres::{PostgresStore, PostgresStoreBuilder};
use dual_testkit::Scratch;
pub(crate) use dual_testkit::services::POSTGRES;
use time::OffsetDateTime;
use tokio_postgres::NoTls;

/// A schema unique to one test, `dual_test_{random}` (a [`Scratch`]). Each store made from it gets
/// its own table in it; the schema and everything in it is dropped when the namespace is dropped
/// (also when the test panics), and nothing else is ever touched.
#[derive(Debug)]
pub(crate) struct Namespace(Scratch);

impl Namespace {
    /// A fresh namespace; panics (failing the test) with how to start PostgreSQL when it is
    /// unreachable.
    pub(crate) fn new() -> Self {
        Self(Scratch::postgres_schema())
    }

    /// The schema's name.
    pub(crate) fn schema(&self) -> &str {
        self.0.name()
    }

    /// A fresh, unused table name in the schema.
    pub(crate) fn table(&self) -> String {
        format!("t{}", self.0.next())
    }

    /// A builder for a store with a fresh table; the test picks its other options.
    pub(crate) fn builder(&self) -> PostgresStoreBuilder {
        self.builder_at(self.0.url().to_owned())
    }

    /// Like [`Namespace::builder`], for a store that reaches the database at `url` (a proxy).
    pub(crate) fn builder_at(&self, url: String) -> PostgresStoreBuilder {
        PostgresStore::builder(url)
            .schema(self.schema().to_owned())
            .table(self.table())
            .pool_size(8)
    }

    /// A connected store with a fresh table. Panics (failing the test) when PostgreSQL is unreachable.
    pub(crate) async fn store(&self) -> PostgresStore {
        match self.builder().connect().await {
            Ok(store) => store,
            Err(e) => POSTGRES.unreachable(e),
        }
    }

    /// A plain connection for inspecting what the store wrote.
    pub(crate) async fn raw(&self) -> tokio_postgres::Client {
        match tokio_postgres::connect(self.0.url(), NoTls).await {
            Ok((client, connection)) => {
                tokio::spawn(connection);
                client
            }
            Err(e) => POSTGRES.unreachable(e),
        }
    }
}

/// One pinned record saved by a fresh store at [`now_micros`], with a plain connection to look at (or
/// corrupt) what it wrote: `(store, raw connection, record, now)`.
pub(crate) type Saved = (
    PostgresStore,
    tokio_postgres::Client,
    ResourceRecord,
    OffsetDateTime,
);

impl Namespace {
    /// Saves a pinned record with a fresh store of this namespace.
    pub(crate) async fn saved(&self) -> Result<Saved, StoreError> {
        let store = self.store().await;
        let now = now_micros();
        let record = record(now, None);
        store.save(&record).await?;
        Ok((store, self.raw().await, record, now))
    }
}

/// A small record created at `now` that expires at `expires_at` (`None`: pinned).
pub(crate) fn record(now: OffsetDateTime, expires_at: Option<OffsetDateTime>) -> ResourceRecord {
    dual_testkit::store::record("test", now, expires_at)
}

/// The current time truncated to whole microseconds, PostgreSQL's resolution.
pub(crate) fn now_micros() -> OffsetDateTime {
    let now = OffsetDateTime::now_utc();
    now.replace_nanosecond(now.nanosecond() / 1_000 * 1_000)
        .unwrap_or(now)
}
