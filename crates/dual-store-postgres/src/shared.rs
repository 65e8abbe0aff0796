//! What every call of a store shares: the pool, the statements, the timeout, and the bounded
//! round trip every statement runs through.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use deadpool_postgres::{Object, Pool};
use dual_store::StoreError;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, Statement};

use crate::error::{breaks_connection, map_pg_error, map_pool_error};
use crate::sql::Sql;

pub(crate) type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

pub(crate) struct Shared {
    pub(crate) pool: Pool,
    pub(crate) sql: Sql,
    pub(crate) timeout: Duration,
    pub(crate) purge_batch: i64,
    /// The connection string with its password redacted, for `Debug`.
    pub(crate) url: String,
    pub(crate) closed: AtomicBool,
}

impl Shared {
    /// A pooled connection, or why there is none within the connect timeout.
    pub(crate) async fn client(&self, op: &'static str) -> Result<Object, StoreError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        self.pool.get().await.map_err(|e| map_pool_error(op, e))
    }

    /// Turns the outcome of a bounded call into the store's answer. A connection that timed out or
    /// broke is taken out of the pool and closed: a silent socket would otherwise fail the next call
    /// too, and the pool replaces it with a fresh one on demand.
    pub(crate) fn finish<T>(
        &self,
        op: &'static str,
        client: Object,
        outcome: Result<Result<T, tokio_postgres::Error>, tokio::time::error::Elapsed>,
    ) -> Result<T, StoreError> {
        match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => {
                if breaks_connection(&error) {
                    drop(Object::take(client));
                }
                Err(map_pg_error(op, error))
            }
            Err(_) => {
                drop(Object::take(client));
                let timeout = self.timeout;
                tracing::warn!(op, ?timeout, "postgres store call timed out");
                Err(StoreError::unavailable(format!(
                    "postgres {op} timed out after {timeout:?}"
                )))
            }
        }
    }

    /// Runs a prepared query within the operation timeout.
    pub(crate) async fn rows(
        &self,
        op: &'static str,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Vec<Row>, StoreError> {
        self.prepared(op, sql, async |client, statement| {
            client.query(statement, params).await
        })
        .await
    }

    /// Runs a prepared statement within the operation timeout, answering the rows it touched.
    pub(crate) async fn execute(
        &self,
        op: &'static str,
        sql: &str,
        params: Params<'_>,
    ) -> Result<u64, StoreError> {
        self.prepared(op, sql, async |client, statement| {
            client.execute(statement, params).await
        })
        .await
    }

    /// Prepares `sql` (cached per connection) and runs `call` with it, within the operation timeout.
    async fn prepared<T>(
        &self,
        op: &'static str,
        sql: &str,
        call: impl AsyncFnOnce(&Object, &Statement) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, StoreError> {
        let client = self.client(op).await?;
        let outcome = tokio::time::timeout(self.timeout, async {
            let statement = client.prepare_cached(sql).await?;
            call(&client, &statement).await
        })
        .await;
        self.finish(op, client, outcome)
    }
}
