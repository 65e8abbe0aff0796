//! Describing the database (the tables and views the role may read, their columns, types and
//! nullability) and the "did you mean …" of a query that names a table or column it does not have.

use async_trait::async_trait;
use deadpool_postgres::Pool;
use dual_server::ExecutorError;
use dual_sql::schema::{ColumnSchema, TableSchema, tables_from_columns};
use dual_sql::{DEFAULT_SCHEMA_MAX_TABLES, SchemaSource, Unknown};

use crate::error::pg_error;

/// The columns of the first [`DEFAULT_SCHEMA_MAX_TABLES`] tables and views outside PostgreSQL's own
/// schemas, in table and column order.
const DESCRIBE: &str = "\
SELECT c.table_schema, c.table_name, t.table_type, c.column_name, c.data_type, c.is_nullable = 'YES'
FROM information_schema.columns c
JOIN (SELECT table_schema, table_name, table_type FROM information_schema.tables
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_schema NOT LIKE 'pg\\_toast%'
      ORDER BY table_schema, table_name LIMIT $1) t
  ON t.table_schema = c.table_schema AND t.table_name = c.table_name
ORDER BY c.table_schema, c.table_name, c.ordinal_position";

/// Describes the database of a pool.
pub(crate) struct Describer(pub(crate) Pool);

#[async_trait]
impl SchemaSource for Describer {
    async fn describe(&self) -> Result<Vec<TableSchema>, ExecutorError> {
        let client = self
            .0
            .get()
            .await
            .map_err(|e| ExecutorError::new(format!("describing the database failed: {e}")))?;
        let limit = i64::try_from(DEFAULT_SCHEMA_MAX_TABLES).unwrap_or(i64::MAX);
        let rows = client
            .query(DESCRIBE, &[&limit])
            .await
            .map_err(|e| pg_error(&e, None))?;
        Ok(tables_from_columns(rows.iter().map(|row| {
            let (schema, table, kind): (String, String, String) = (row.get(0), row.get(1), row.get(2));
            let column = ColumnSchema::new(
                row.get::<_, String>(3),
                row.get::<_, String>(4),
                row.get::<_, bool>(5),
            );
            (format!("{schema}.{table}"), kind, column)
        })))
    }
}

/// What PostgreSQL's message says does not exist (`column "x" does not exist`, `relation "x" does
/// not exist`), for [`SchemaCache::explain`](dual_sql::SchemaCache::explain).
pub(crate) fn unknown(message: &str) -> Option<Unknown<'_>> {
    let head = message.split(" (hint: ").next()?;
    let missing = |prefix: &str| head.strip_prefix(prefix)?.strip_suffix(" does not exist");
    missing("column ")
        .map(Unknown::Column)
        .or_else(|| missing("relation ").map(Unknown::Table))
}
