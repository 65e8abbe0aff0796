//! Shared by this crate's tests of the `services` feature: a per-test schema in the database of
//! `DUAL_TEST_POSTGRES_URL` that drops itself, record fixtures.
#![allow(
    dead_code,
    reason = "each test binary uses a different part of the support module"
)]

use std::sync::atomic::{AtomicUsize, Ordering};

use dual_core::{Column, ColumnType, QuerySpec, ResourceId, ResourceRecord};
use dual_store_postgres::{PostgresStore, PostgresStoreBuilder};
pub(crate) use dual_testkit::services::POSTGRES;
use time::OffsetDateTime;
use tokio_postgres::NoTls;

/// A schema unique to one test, `dual_test_{random}`. Each store made from it gets its own table in
/// it; the schema and everything in it is dropped when the namespace is dropped (also when the test
/// panics), and nothing else is ever touched.
#[derive(Debug)]
pub(crate) struct Namespace {
    url: String,
    schema: String,
    next: AtomicUsize,
}

impl Namespace {
    /// A fresh namespace; panics (failing the test) with how to start PostgreSQL when it is
    /// unreachable.
    pub(crate) fn new() -> Self {
        Self {
            url: POSTGRES.require(),
            schema: format!("dual_test_{:016x}", fastrand::u64(..)),
            next: AtomicUsize::new(0),
        }
    }

    /// The schema's name.
    pub(crate) fn schema(&self) -> &str {
        &self.schema
    }

    /// A fresh, unused table name in the schema.
    pub(crate) fn table(&self) -> String {
        format!("t{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// A builder for a store with a fresh table; the test picks its other options.
    pub(crate) fn builder(&self) -> PostgresStoreBuilder {
        self.builder_at(self.url.clone())
    }

    /// Like [`Namespace::builder`], for a store that reaches the database at `url` (a proxy).
    pub(crate) fn builder_at(&self, url: String) -> PostgresStoreBuilder {
        PostgresStore::builder(url)
            .schema(self.schema.clone())
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
        match tokio_postgres::connect(&self.url, NoTls).await {
            Ok((client, connection)) => {
                tokio::spawn(connection);
                client
            }
            Err(e) => POSTGRES.unreachable(e),
        }
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let url = self.url.clone();
        let sql = format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.schema);
        // Drop may run inside the test's runtime, which cannot be blocked on; a thread of its own
        // with a small runtime can.
        let cleanup = std::thread::spawn(move || -> Result<(), String> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let (client, connection) = tokio_postgres::connect(&url, NoTls)
                    .await
                    .map_err(|e| e.to_string())?;
                tokio::spawn(connection);
                client.batch_execute(&sql).await.map_err(|e| e.to_string())
            })
        });
        match cleanup.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("could not drop the test schema {}: {e}", self.schema),
            Err(_) => eprintln!("dropping the test schema {} panicked", self.schema),
        }
    }
}

/// A small record created at `now` that expires at `expires_at` (`None`: pinned).
pub(crate) fn record(now: OffsetDateTime, expires_at: Option<OffsetDateTime>) -> ResourceRecord {
    ResourceRecord {
        id: ResourceId::new(),
        name: "test".to_owned(),
        query: QuerySpec::new("test", serde_json::json!({"b": 1, "a": [true, null]})),
        columns: vec![Column::new("n", ColumnType::Integer)],
        total_count: 1,
        sample: vec![serde_json::Map::from_iter([(
            "n".to_owned(),
            serde_json::json!(1),
        )])]
        .into(),
        created_at: now,
        expires_at,
        access_count: 0,
        last_accessed_at: None,
        owner: None,
        metadata: serde_json::Value::Null,
        consistency: dual_core::Consistency::Live,
        status: dual_core::ResourceStatus::Ready,
        lease_expires_at: None,
        failure: None,
    }
}

/// The current time truncated to whole microseconds, PostgreSQL's resolution.
pub(crate) fn now_micros() -> OffsetDateTime {
    let now = OffsetDateTime::now_utc();
    now.replace_nanosecond(now.nanosecond() / 1_000 * 1_000)
        .unwrap_or(now)
}
