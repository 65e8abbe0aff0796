//! What every executor of one [`PgDb`](crate::PgDb) shares — its pools, options, schema cache and
//! the database's own functions — and the steps every statement takes: a read-only transaction under
//! the time limit, a statement prepared with its text-only columns cast, a count.

use std::sync::Arc;

use deadpool_postgres::{Pool, Transaction};
use dual_server::ExecutorError;
use dual_sql::SchemaCache;
use tokio_postgres::types::Type;
use tokio_postgres::{IsolationLevel, Statement};

use crate::as_text;
use crate::decode::BoxError;
use crate::error::pg_error;
use crate::options::PgOptions;
use crate::query::PgQuery;
use crate::session::Session;
use crate::text::refs;

/// The database behind a [`PgDb`](crate::PgDb) and its executors.
pub(crate) struct Shared {
    pub(crate) pool: Pool,
    /// The connections of snapshot streams (see [`PgOptions::snapshot_connections`]).
    pub(crate) snapshots: Pool,
    pub(crate) options: PgOptions,
    pub(crate) schema: SchemaCache,
    /// The database's own functions, found when it connected: refused to the model's SQL unless
    /// its function policy allows them.
    pub(crate) user_functions: Arc<Vec<String>>,
}

impl Shared {
    pub(crate) fn error(&self, error: &tokio_postgres::Error) -> ExecutorError {
        pg_error(error, Some(self.options.time_limit))
    }

    /// A read-only, repeatable-read transaction on `session`'s connection, every statement under
    /// the time limit.
    pub(crate) async fn begin<'s>(&self, session: &'s mut Session) -> Result<Transaction<'s>, ExecutorError> {
        let txn = session
            .conn()?
            .build_transaction()
            .read_only(true)
            .isolation_level(IsolationLevel::RepeatableRead)
            .start()
            .await
            .map_err(|e| self.error(&e))?;
        let millis = self.options.time_limit.as_millis().max(1);
        txn.batch_execute(&format!("SET LOCAL statement_timeout = {millis}"))
            .await
            .map_err(|e| self.error(&e))?;
        Ok(txn)
    }

    /// `sql` prepared, its columns of types without a binary decoder cast to text ([`as_text`]).
    pub(crate) async fn prepare(&self, txn: &Transaction<'_>, sql: &str) -> Result<Statement, ExecutorError> {
        let statement = txn.prepare(sql).await.map_err(|e| self.error(&e))?;
        let columns: Vec<(&str, &Type)> = statement
            .columns()
            .iter()
            .map(|c| (c.name(), c.type_()))
            .collect();
        match as_text::wrapped(sql, &columns) {
            None => Ok(statement),
            Some(wrapped) => txn.prepare(&wrapped).await.map_err(|e| self.error(&e)),
        }
    }

    /// `SELECT count(*)` of `query` in `txn`.
    pub(crate) async fn count_rows(
        &self,
        txn: &Transaction<'_>,
        query: &PgQuery,
    ) -> Result<u64, ExecutorError> {
        let texts = query.texts();
        let sql = format!("SELECT count(*) FROM (\n{}\n) AS dual_count", query.sql());
        let row = txn
            .query_one(&sql, &refs(&texts))
            .await
            .map_err(|e| self.error(&e))?;
        let total: i64 = row.try_get(0).map_err(|e| self.error(&e))?;
        Ok(u64::try_from(total).unwrap_or_default())
    }
}

/// A value of column `name` that could not be decoded.
pub(crate) fn unreadable(name: &str, ty: &Type, error: &BoxError) -> ExecutorError {
    ExecutorError::new(format!("column `{name}` ({ty}) could not be read: {error}"))
}
