//! dual-sqlite against the executor conformance suite of dual-testkit (`dual_testkit::database`),
//! on a SQLite file of its own.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use dual_server::QueryExecutor;
use dual_sql::SchemaCache;
use dual_sqlite::{SqliteDb, SqliteOptions, SqliteQuery};
use dual_testkit::database::{Database, Limits};
use serde_json::{Value, json};

/// A SQLite file, removed when dropped.
struct Sqlite {
    path: PathBuf,
}

impl Drop for Sqlite {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Sqlite {
    fn db(&self, options: SqliteOptions) -> SqliteDb {
        SqliteDb::open_with(&self.path, options).unwrap_or_else(|e| panic!("{e}"))
    }
}

#[async_trait]
impl Database for Sqlite {
    /// `pool_size` streams at once: SQLite's pool keeps one connection more than its export slots,
    /// for pages and counts.
    async fn executor(&self, limits: Limits) -> Arc<dyn QueryExecutor> {
        let options = SqliteOptions::default()
            .pool_size(limits.pool_size + 1)
            .export_slots(limits.pool_size)
            .wait(limits.wait)
            .time_limit(limits.time_limit)
            .max_value_bytes(limits.max_value_bytes);
        Arc::new(self.db(options).sql_executor())
    }

    async fn execute(&self, sql: &str) {
        let conn = dual_sqlite::rusqlite::Connection::open(&self.path).unwrap_or_else(|e| panic!("{e}"));
        conn.execute_batch(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    fn table(&self, name: &str) -> String {
        name.to_owned()
    }

    fn slow_query(&self, seconds: u32) -> String {
        format!(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {}) SELECT count(*) AS n FROM c",
            u64::from(seconds) * 20_000_000
        )
    }

    fn param(&self, n: usize) -> String {
        format!("?{n}")
    }

    async fn schema(&self) -> SchemaCache {
        self.db(SqliteOptions::default()).schema().clone()
    }

    async fn query_executor(&self, select: String) -> Arc<dyn QueryExecutor> {
        Arc::new(self.db(SqliteOptions::default()).query_executor(move |params| {
            let n = params["n"].as_u64().ok_or("`n` is required")?;
            let n = i64::try_from(n).map_err(|_| "`n` is too large")?;
            Ok(SqliteQuery::new(select.clone()).bind(n))
        }))
    }

    fn typed_table(&self, table: &str) -> (String, Vec<Value>) {
        (
            format!(
                "CREATE TABLE {table} (id INTEGER, r REAL, s TEXT, b BLOB, n NUMERIC, d DATE);
                 INSERT INTO {table} VALUES (1, 1.5, 'Zoë 東京 \"q\"', x'deadbeef', 12.5, '2024-02-29'),
                                            (2, NULL, NULL, NULL, NULL, NULL);"
            ),
            vec![
                json!({"id": 1, "r": 1.5, "s": "Zoë 東京 \"q\"", "b": "base64:3q2+7w==", "n": 12.5, "d": "2024-02-29"}),
                json!({"id": 2, "r": null, "s": null, "b": null, "n": null, "d": null}),
            ],
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_keeps_the_executor_contract() {
    let path = std::env::temp_dir().join(format!("dual-sqlite-conformance-{}.sqlite", std::process::id()));
    let _ = std::fs::remove_file(&path);
    dual_testkit::database::run(Arc::new(Sqlite { path })).await;
}
