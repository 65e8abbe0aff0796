//! A refinement's temporary database: the file (deleted on drop), the parent's rows written into it
//! as the table `result`, and the seal its reading connections get.

use std::path::{Path, PathBuf};

use dual_core::{Column, ColumnType};
use dual_server::{ExecutorError, RowBatch, RowStream};
use futures_util::StreamExt;
use rusqlite::Connection;
use rusqlite::types::{ToSqlOutput, ValueRef};
use serde_json::Value;

use super::decode::row_cells;
use crate::convert::quote_identifier;
use crate::seal::RESULT_TABLE;

/// Batches between the parent's stream and the blocking thread that writes them.
const LOAD_BUFFER: usize = 4;

/// A temporary database file, removed (with any journal) when dropped.
#[derive(Debug)]
pub(crate) struct TempDb {
    path: PathBuf,
}

impl TempDb {
    /// A new, unused file name in `dir` (the file is made by the loader).
    pub(crate) fn create(dir: &Path) -> Result<Self, ExecutorError> {
        std::fs::create_dir_all(dir).map_err(|error| {
            tracing::warn!(error = %error, "a refinement's temporary directory could not be made");
            ExecutorError::overloaded(
                "the refinement's temporary directory could not be made (the server's disk): try again later",
                std::time::Duration::from_secs(1),
            )
        })?;
        let name = format!("dual-refine-{}.sqlite", ulid::Ulid::new());
        Ok(Self { path: dir.join(name) })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let mut path = self.path.clone().into_os_string();
            path.push(suffix);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => tracing::warn!(error = %error, "a refinement's temporary file was left"),
            }
        }
    }
}

/// The declared type of a `result` column, so SQLite's affinity keeps each value as it came and the
/// refined columns read back with the parent's types where they pass through unchanged.
fn declared(column_type: ColumnType) -> &'static str {
    match column_type {
        ColumnType::Integer => "INTEGER",
        ColumnType::Number => "REAL",
        ColumnType::Boolean => "BOOLEAN",
        ColumnType::Date => "DATE",
        // Text, and JSON kept as its text (SQLite's json functions read it).
        _ => "TEXT",
    }
}

/// Writes `rows` into a new database at `path` as the table `result` with `columns`, on a blocking
/// thread fed batch by batch; the number of rows written.
pub(crate) async fn load(
    path: PathBuf,
    columns: Vec<Column>,
    mut rows: RowStream,
    cache_kib: u32,
) -> Result<u64, ExecutorError> {
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<RowBatch>(LOAD_BUFFER);
    let writer = tokio::task::spawn_blocking(move || -> Result<u64, ExecutorError> {
        let conn = create(&path, &columns, cache_kib).map_err(|error| failed(&error))?;
        let transaction = conn.unchecked_transaction().map_err(|error| failed(&error))?;
        let names: Vec<String> = columns.iter().map(|column| column.name.clone()).collect();
        let mut written = 0u64;
        {
            let placeholders = vec!["?"; columns.len()].join(", ");
            let mut insert = conn
                .prepare(&format!("INSERT INTO {RESULT_TABLE} VALUES ({placeholders})"))
                .map_err(|error| failed(&error))?;
            while let Some(batch) = receiver.blocking_recv() {
                match batch {
                    // Stored rows: read straight into the columns' values, no map built.
                    RowBatch::Json(rows) => {
                        let rows: Vec<bytes::Bytes> = rows.iter().collect();
                        let mut cells = Vec::with_capacity(names.len());
                        for json in &rows {
                            row_cells(json, &names, &mut cells).map_err(|error| {
                                ExecutorError::new(format!("a stored row is not a JSON object: {error}"))
                            })?;
                            for (i, cell) in cells.iter().enumerate() {
                                insert
                                    .raw_bind_parameter(i + 1, cell.bound())
                                    .map_err(|error| failed(&error))?;
                            }
                            insert.raw_execute().map_err(|error| failed(&error))?;
                            written += 1;
                        }
                    }
                    other => {
                        for row in other.into_rows()? {
                            for (i, name) in names.iter().enumerate() {
                                let value = row.get(name).unwrap_or(&Value::Null);
                                insert
                                    .raw_bind_parameter(i + 1, bound(value))
                                    .map_err(|error| failed(&error))?;
                            }
                            insert.raw_execute().map_err(|error| failed(&error))?;
                            written += 1;
                        }
                    }
                }
            }
        }
        transaction.commit().map_err(|error| failed(&error))?;
        Ok(written)
    });
    // The parent's rows go to the writer as they come; a failure ends the load.
    let mut read_error = None;
    while let Some(batch) = rows.next().await {
        match batch {
            Ok(batch) => {
                if sender.send(batch).await.is_err() {
                    break;
                }
            }
            Err(error) => {
                read_error = Some(error);
                break;
            }
        }
    }
    drop(sender);
    let written = writer.await.map_err(|error| {
        tracing::warn!(error = %error, "a refinement's load stopped");
        ExecutorError::new("the refinement's table could not be written (its load stopped)")
    })?;
    match read_error {
        // The server's own message (retryable when its storage failed): passed on as it is.
        Some(error) => Err(error),
        None => written,
    }
}

/// The new database and its table.
fn create(path: &Path, columns: &[Column], cache_kib: u32) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    // Written once by this connection alone, read afterwards: no journal, no sync, no sharing.
    conn.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA locking_mode = EXCLUSIVE;",
    )?;
    conn.pragma_update(None, "cache_size", -i64::from(cache_kib))?;
    let mut ddl = format!("CREATE TABLE {RESULT_TABLE} (");
    for (i, column) in columns.iter().enumerate() {
        if i > 0 {
            ddl.push_str(", ");
        }
        ddl.push_str(&quote_identifier(&column.name));
        ddl.push(' ');
        ddl.push_str(declared(column.column_type));
    }
    ddl.push(')');
    conn.execute(&ddl, [])?;
    Ok(conn)
}

/// A JSON value as SQLite stores it: `null` NULL, booleans 1/0, numbers as integers where they are
/// (else reals), text as text, arrays and objects as their JSON text.
fn bound(value: &Value) -> ToSqlOutput<'_> {
    match value {
        Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
        Value::Bool(b) => ToSqlOutput::Borrowed(ValueRef::Integer(i64::from(*b))),
        Value::Number(n) => match n.as_i64() {
            Some(i) => ToSqlOutput::Borrowed(ValueRef::Integer(i)),
            None => ToSqlOutput::Borrowed(ValueRef::Real(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        other => ToSqlOutput::Owned(rusqlite::types::Value::Text(other.to_string())),
    }
}

/// The temporary table could not be written (the disk full, the directory gone): no fault of the
/// SQL, so retryable, and the file's path and the OS's words go to the log only.
fn failed(error: &rusqlite::Error) -> ExecutorError {
    tracing::warn!(error = %dual_core::escape::log_safe(&crate::guard::sqlite_message(error)), "a refinement's table could not be written");
    ExecutorError::overloaded(
        "the refinement's temporary table could not be written (the server's disk): try again later",
        std::time::Duration::from_secs(1),
    )
}
