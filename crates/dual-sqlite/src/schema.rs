//! Describing the database (its tables and views, their columns, types and nullability) and the
//! "did you mean …" of a query that names a table or column it does not have.

use std::sync::Arc;

use async_trait::async_trait;
use dual_server::ExecutorError;
use dual_sql::schema::{ColumnSchema, TableKind, TableSchema};
use dual_sql::{DEFAULT_SCHEMA_MAX_TABLES, SchemaSource, Unknown};

use crate::cancel::Cancel;
use crate::pool::{Pool, Use};
use crate::stream::take_error;

/// Describes the database of a pool, on a blocking thread with one of its connections.
pub(crate) struct Describer(pub(crate) Arc<Pool>);

#[async_trait]
impl SchemaSource for Describer {
    async fn describe(&self) -> Result<Vec<TableSchema>, ExecutorError> {
        let pool = Arc::clone(&self.0);
        tokio::task::spawn_blocking(move || {
            let lease = pool
                .get(Use::Query, &Arc::new(Cancel::default()))
                .map_err(take_error)?;
            describe(lease.conn())
                .map_err(|e| ExecutorError::new(format!("describing the database failed: {e}")))
        })
        .await
        .map_err(|_| ExecutorError::new("describing the database was cancelled"))?
    }
}

/// The tables and views of `conn` (not SQLite's own), at most [`DEFAULT_SCHEMA_MAX_TABLES`], by name.
fn describe(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<TableSchema>> {
    let mut tables = conn.prepare_cached(
        "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') \
         AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name LIMIT ?1",
    )?;
    let limit = i64::try_from(DEFAULT_SCHEMA_MAX_TABLES).unwrap_or(i64::MAX);
    let found: Vec<(String, String)> = tables
        .query_map([limit], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut columns =
        conn.prepare_cached("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1) ORDER BY cid")?;
    found
        .into_iter()
        .map(|(name, kind)| {
            let cols = columns
                .query_map([&name], |row| {
                    let not_null: bool = row.get(2)?;
                    let pk: i64 = row.get(3)?;
                    Ok(ColumnSchema::new(
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        !not_null && pk == 0,
                    ))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let kind = if kind == "view" {
                TableKind::View
            } else {
                TableKind::Table
            };
            Ok(TableSchema::new(name, kind, cols))
        })
        .collect()
}

/// What SQLite's message says does not exist (`no such column: x`, `no such table: x`), for
/// [`SchemaCache::explain`](dual_sql::SchemaCache::explain): the model reads the suggestion and writes the query again.
pub(crate) fn unknown(message: &str) -> Option<Unknown<'_>> {
    message
        .strip_prefix("no such column: ")
        .map(Unknown::Column)
        .or_else(|| message.strip_prefix("no such table: ").map(Unknown::Table))
}
