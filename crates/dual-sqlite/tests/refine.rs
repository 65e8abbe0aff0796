//! Refining a stored result with SQL (`DualResponseServer::refine` on `SqliteRefiner`): the same
//! answers as the SQL run in the source database, no database touched, every refusal, and the
//! owner and expiry rules.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dual_core::{DualResponse, Row};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, QueryExecutor, QueryStart, RowStream, ServerError,
    ServerErrorCode,
};
use dual_sqlite::rusqlite::Connection;
use dual_sqlite::{RefineOptions, SqliteDb, SqliteOptions, SqliteRefiner};
use futures_util::TryStreamExt;
use serde_json::{Value, json};

/// A directory of its own (the source database and the refinements' files), removed when dropped.
struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Dir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("dual-refine-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        Self(dir)
    }

    fn db(&self) -> PathBuf {
        self.0.join("source.sqlite")
    }

    fn scratch(&self) -> PathBuf {
        self.0.join("refine")
    }

    /// The refinements' files left in the scratch directory.
    fn left(&self) -> usize {
        std::fs::read_dir(self.scratch()).map_or(0, |dir| dir.count())
    }
}

/// The source table, named `result` so the same SQL runs on it directly: 2,000 rows with integers,
/// reals, NULLs, ties and Unicode text.
fn source(path: &Path) {
    let conn = Connection::open(path).unwrap_or_else(|e| panic!("{e}"));
    conn.execute_batch(
        "CREATE TABLE result (id INTEGER, state TEXT, kind TEXT, enrollment INTEGER, ratio REAL, name TEXT);
         BEGIN;",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let states = ["NJ", "NY", "CA", "TX", "Zürich", "東京"];
    let kinds = ["public", "private", "for-profit"];
    for i in 0..2_000i64 {
        let state = states[(i % 6) as usize];
        let kind: Option<&str> = if i % 17 == 0 {
            None
        } else {
            Some(kinds[(i % 3) as usize])
        };
        let enrollment: Option<i64> = if i % 13 == 0 {
            None
        } else {
            Some((i * 7919) % 5000)
        };
        let ratio = (i % 50) as f64 / 8.0;
        let name = format!("Institution {} — é{}", i, i % 11);
        conn.execute(
            "INSERT INTO result VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            dual_sqlite::rusqlite::params![i, state, kind, enrollment, ratio, name],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    conn.execute_batch("COMMIT;").unwrap_or_else(|e| panic!("{e}"));
}

fn server(dir: &Dir, snapshot_max_bytes: u64) -> DualResponseServer {
    let db = SqliteDb::open_with(&dir.db(), SqliteOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor("sql", db.sql_executor())
        .snapshot_max_bytes(snapshot_max_bytes)
        .refine_engine(SqliteRefiner::new(RefineOptions::default().dir(dir.scratch())))
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn query(server: &DualResponseServer, sql: &str, owner: Option<&str>) -> DualResponse {
    let mut request = CreateResponse::new("sql", json!({ "sql": sql }));
    if let Some(owner) = owner {
        request = request.owner(owner);
    }
    server
        .create_response(request)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn rows(server: &DualResponseServer, response: &DualResponse, caller: &Caller) -> Vec<Row> {
    let (_, stream) = server
        .stream_rows(response.id, caller, None)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let batches: Vec<_> = stream.try_collect().await.unwrap_or_else(|e| panic!("{e}"));
    batches
        .into_iter()
        .flat_map(|batch| batch.into_rows().unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// The rows of `sql` run on the source database itself, as JSON.
fn direct(path: &Path, sql: &str) -> Vec<Vec<Value>> {
    let conn = Connection::open(path).unwrap_or_else(|e| panic!("{e}"));
    let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let n = stmt.column_count();
    let mut out = Vec::new();
    let mut rows = stmt.query([]).unwrap_or_else(|e| panic!("{e}"));
    while let Some(row) = rows.next().unwrap_or_else(|e| panic!("{e}")) {
        out.push(
            (0..n)
                .map(|i| match row.get_ref(i).unwrap_or_else(|e| panic!("{e}")) {
                    dual_sqlite::rusqlite::types::ValueRef::Null => Value::Null,
                    dual_sqlite::rusqlite::types::ValueRef::Integer(v) => json!(v),
                    dual_sqlite::rusqlite::types::ValueRef::Real(v) => json!(v),
                    dual_sqlite::rusqlite::types::ValueRef::Text(v) => json!(String::from_utf8_lossy(v)),
                    dual_sqlite::rusqlite::types::ValueRef::Blob(_) => panic!("no blobs here"),
                })
                .collect(),
        );
    }
    out
}

fn values(rows: &[Row]) -> Vec<Vec<Value>> {
    rows.iter().map(|row| row.values().cloned().collect()).collect()
}

fn code(result: Result<DualResponse, ServerError>) -> (ServerErrorCode, String) {
    match result {
        Ok(response) => panic!("refined: {} rows", response.total_count),
        Err(error) => (error.code(), dual_core::error::Report::new(&error).to_string()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refinements_answer_as_the_same_sql_in_the_source_database() {
    let dir = Dir::new("same");
    source(&dir.db());
    let server = server(&dir, 64 << 20);
    let caller = Caller::anonymous();
    let parent = query(&server, "SELECT * FROM result", None).await;
    assert_eq!(parent.total_count, 2_000);
    for sql in [
        "SELECT * FROM result WHERE kind = 'public' AND enrollment > 2500",
        "SELECT state, kind, COUNT(*) AS n, SUM(enrollment) AS total, AVG(ratio) AS mean FROM result GROUP BY state, kind ORDER BY state, kind",
        "SELECT kind, COUNT(*) AS n, COUNT(enrollment) AS known FROM result GROUP BY kind ORDER BY kind NULLS FIRST",
        "SELECT id, enrollment FROM result ORDER BY enrollment DESC NULLS LAST, id LIMIT 25",
        "SELECT id, state, enrollment, RANK() OVER (PARTITION BY state ORDER BY enrollment DESC) AS r FROM result WHERE id < 300 ORDER BY state, r, id",
        "SELECT a.state, COUNT(*) AS pairs FROM result a JOIN result b ON a.state = b.state AND a.id = b.id + 6 GROUP BY a.state ORDER BY a.state",
        "SELECT name, upper(state) AS s, length(name) AS len FROM result WHERE state IN ('Zürich', '東京') ORDER BY id LIMIT 40",
        "WITH big AS (SELECT * FROM result WHERE enrollment >= 4000) SELECT state, MAX(enrollment) AS top FROM big GROUP BY state ORDER BY top DESC, state",
    ] {
        let refined = server
            .refine(parent.id, sql, &caller)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {}", dual_core::error::Report::new(&e)));
        let got = rows(&server, &refined, &caller).await;
        let want = direct(&dir.db(), sql);
        assert_eq!(refined.total_count, want.len() as u64, "{sql}");
        assert_eq!(values(&got), want, "{sql}");
        // A refinement of the refinement reads its stored rows in turn.
        let again = server
            .refine(refined.id, "SELECT COUNT(*) AS n FROM result", &caller)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            values(&rows(&server, &again, &caller).await),
            vec![vec![json!(want.len())]],
            "{sql}"
        );
    }
    assert_eq!(dir.left(), 0, "every refinement's file is deleted");
}

/// The source executor, counting the queries it is asked to run.
struct Counting {
    inner: Arc<dual_sqlite::SqliteExecutor>,
    runs: Arc<AtomicUsize>,
}

impl QueryExecutor for Counting {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Arc::clone(&self.inner).stream(params, start)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refinement_needs_no_database() {
    let dir = Dir::new("gone");
    source(&dir.db());
    let db = SqliteDb::open_with(&dir.db(), SqliteOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let runs = Arc::new(AtomicUsize::new(0));
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor(
            "sql",
            Counting {
                inner: Arc::new(db.sql_executor()),
                runs: Arc::clone(&runs),
            },
        )
        .refine_engine(SqliteRefiner::new(RefineOptions::default().dir(dir.scratch())))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    drop(db);
    let caller = Caller::anonymous();
    let parent = query(&server, "SELECT * FROM result WHERE id < 500", None).await;
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // The database file is gone from where it was: nothing can open it.
    std::fs::rename(dir.db(), dir.0.join("moved.sqlite")).unwrap_or_else(|e| panic!("{e}"));
    assert!(SqliteDb::open_with(&dir.db(), SqliteOptions::default()).is_err());
    let refined = server
        .refine(
            parent.id,
            "SELECT state, COUNT(*) AS n FROM result GROUP BY state ORDER BY state",
            &caller,
        )
        .await
        .unwrap_or_else(|e| panic!("{}", dual_core::error::Report::new(&e)));
    assert_eq!(refined.total_count, 6);
    let counted: i64 = rows(&server, &refined, &caller)
        .await
        .iter()
        .map(|row| row["n"].as_i64().unwrap_or_default())
        .sum();
    assert_eq!(counted, 500);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the source executor ran once, for the parent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_result_is_visible_and_nothing_else_runs() {
    let dir = Dir::new("closed");
    source(&dir.db());
    let server = server(&dir, 64 << 20);
    let caller = Caller::anonymous();
    let parent = query(&server, "SELECT * FROM result WHERE id < 50", None).await;
    for (sql, says) in [
        ("ATTACH DATABASE '/etc/passwd' AS p", "query"),
        ("PRAGMA table_info(result)", "query"),
        ("DELETE FROM result", "query"),
        ("CREATE TABLE x (a)", "query"),
        ("SELECT 1; SELECT 2", "statement"),
        ("SELECT * FROM sqlite_master", "prohibited"),
        ("SELECT * FROM sqlite_schema", "prohibited"),
        ("SELECT * FROM pragma_table_info('result')", ""),
        ("SELECT * FROM pragma_database_list", ""),
        ("SELECT load_extension('/tmp/evil.so')", "load_extension"),
        ("SELECT * FROM source_table", "no such table"),
        ("SELECT * FROM main.result r, temp.sqlite_temp_master m", ""),
    ] {
        let (code, message) = code(server.refine(parent.id, sql, &caller).await);
        assert_eq!(code, ServerErrorCode::QueryExecutionFailed, "{sql}: {message}");
        assert!(message.contains(says), "{sql}: {message}");
        assert!(
            message.contains("The table `result` has the columns: id (integer), state (string)"),
            "{sql}: {message}"
        );
    }
    // A plain SQL error carries the engine's message and the columns.
    let (_, message) = code(server.refine(parent.id, "SELECT nme FROM result", &caller).await);
    assert!(message.contains("no such column: nme"), "{message}");
    assert_eq!(dir.left(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owners_expiry_and_limits() {
    let dir = Dir::new("rules");
    source(&dir.db());
    // A snapshot cap that the parent fits and a cross join of it does not.
    let server = server(&dir, 400 << 10);
    let alice = Caller::owner("alice");
    let parent = query(&server, "SELECT id, state FROM result", Some("alice")).await;
    let refined = server
        .refine(parent.id, "SELECT * FROM result WHERE state = 'NJ'", &alice)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let record = server
        .get_resource(refined.id, &alice)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(record.owner.as_deref(), Some("alice"));
    assert!(refined.expires_at <= parent.expires_at);
    assert_eq!(record.query.kind, dual_server::REFINE_KIND);
    // Another owner, and an anonymous caller, get what an unknown id gets.
    for caller in [Caller::owner("bob"), Caller::anonymous()] {
        let (code, _) = code(server.refine(parent.id, "SELECT 1 FROM result", &caller).await);
        assert_eq!(code, ServerErrorCode::ResourceNotFound);
    }
    // Past the snapshot cap: the limit is named.
    let (code_, message) = code(
        server
            .refine(
                parent.id,
                "SELECT a.id, b.state FROM result a, result b WHERE b.id < 40",
                &alice,
            )
            .await,
    );
    assert_eq!(code_, ServerErrorCode::QueryExecutionFailed, "{message}");
    assert!(
        message.contains("snapshot cap") && message.contains("snapshot_max_bytes"),
        "{message}"
    );
    // Expired.
    let short = server
        .create_response(
            CreateResponse::new("sql", json!({"sql": "SELECT id FROM result LIMIT 5"}))
                .owner("alice")
                .expiration(Duration::from_millis(300)),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let refined = server
        .refine(short.id, "SELECT * FROM result", &alice)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(refined.expires_at <= short.expires_at, "no later than the parent");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (code_, _) = code(server.refine(short.id, "SELECT * FROM result", &alice).await);
    assert_eq!(code_, ServerErrorCode::ResourceExpired);
    // Too long a text.
    let long = format!(
        "SELECT 1 FROM result WHERE '{}' = ''",
        "x".repeat(dual_server::MAX_REFINE_SQL_BYTES)
    );
    let (code_, message) = code(server.refine(parent.id, &long, &alice).await);
    assert_eq!(code_, ServerErrorCode::QueryExecutionFailed);
    assert!(message.contains("cap"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_results_and_servers_without_an_engine_say_so() {
    let dir = Dir::new("live");
    source(&dir.db());
    // A cap the result does not fit: served live.
    let server = server(&dir, 1 << 10);
    let caller = Caller::anonymous();
    let live = query(&server, "SELECT * FROM result", None).await;
    let (code_, message) = code(server.refine(live.id, "SELECT 1 FROM result", &caller).await);
    assert_eq!(code_, ServerErrorCode::NotRefinable, "{message}");
    assert!(message.contains("live"), "{message}");

    let db = SqliteDb::open_with(&dir.db(), SqliteOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let plain = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor("sql", db.sql_executor())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let stored = query(&plain, "SELECT * FROM result LIMIT 3", None).await;
    let (code_, message) = code(plain.refine(stored.id, "SELECT 1 FROM result", &caller).await);
    assert_eq!(code_, ServerErrorCode::NotRefinable);
    assert!(message.contains("no refine engine"), "{message}");

    // The kind `refine` reads another result's rows: `create_response` does not run it, only
    // `refine` (which authorized the caller on the parent) does.
    let secret = query(&server, "SELECT * FROM result LIMIT 3", Some("alice")).await;
    let sneaky = server
        .create_response(
            CreateResponse::new(
                dual_server::REFINE_KIND,
                json!({"parent": secret.id.to_string(), "sql": "SELECT * FROM result"}),
            )
            .owner("mallory"),
        )
        .await;
    let (code_, _) = code(sneaky);
    assert_eq!(code_, ServerErrorCode::UnknownQueryKind);

    // The engine's kind is its own.
    let taken = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor(dual_server::REFINE_KIND, db.sql_executor())
        .refine_engine(SqliteRefiner::default())
        .build();
    assert!(taken.is_err());
}
