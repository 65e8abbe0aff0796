//! Describing the database (the tables and views of the connection's database, their columns,
//! types and nullability) and the "did you mean …" of a query that names a table or column it does
//! not have.

use async_trait::async_trait;
use dual_server::ExecutorError;
use dual_sql::schema::{ColumnSchema, TableSchema, tables_from_columns};
use dual_sql::{DEFAULT_SCHEMA_MAX_TABLES, SchemaSource, Unknown};
use mysql_async::Pool;
use mysql_async::prelude::Queryable;

/// The columns of the first [`DEFAULT_SCHEMA_MAX_TABLES`] tables and views of the current database,
/// in table and column order.
const DESCRIBE: &str = "\
SELECT c.table_name, t.table_type, c.column_name, c.column_type, c.is_nullable = 'YES'
FROM information_schema.columns c
JOIN (SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = DATABASE()
      ORDER BY table_name LIMIT ?) t ON t.table_name = c.table_name
WHERE c.table_schema = DATABASE()
ORDER BY c.table_name, c.ordinal_position";

/// Describes the database of a pool.
pub(crate) struct Describer(pub(crate) Pool);

#[async_trait]
impl SchemaSource for Describer {
    async fn describe(&self) -> Result<Vec<TableSchema>, ExecutorError> {
        let failed =
            |e: mysql_async::Error| ExecutorError::new(format!("describing the database failed: {e}"));
        let mut conn = self.0.get_conn().await.map_err(failed)?;
        let limit = u64::try_from(DEFAULT_SCHEMA_MAX_TABLES).unwrap_or(u64::MAX);
        let rows: Vec<(String, String, String, String, bool)> =
            conn.exec(DESCRIBE, (limit,)).await.map_err(failed)?;
        Ok(tables_from_columns(rows.into_iter().map(
            |(table, kind, column, data_type, nullable)| {
                (table, kind, ColumnSchema::new(column, data_type, nullable))
            },
        )))
    }
}

/// What the server's message says does not exist (`Unknown column 'x' in '…'`, `Table 'db.x'
/// doesn't exist`), for [`SchemaCache::explain`](dual_sql::SchemaCache::explain).
pub(crate) fn unknown(message: &str) -> Option<Unknown<'_>> {
    if let Some(rest) = message.strip_prefix("Unknown column ") {
        return quoted(rest).map(Unknown::Column);
    }
    message
        .strip_prefix("Table ")
        .filter(|rest| rest.ends_with("doesn't exist"))
        .and_then(quoted)
        .map(Unknown::Table)
}

/// The first text between single quotes in `rest`.
fn quoted(rest: &str) -> Option<&str> {
    rest.split('\'').nth(1)
}
