//! dual-postgres against a real PostgreSQL (feature `services`; `bash .ci/services` starts one at
//! `DUAL_TEST_POSTGRES_URL`, by default `postgres://postgres@127.0.0.1:5432/test`): the type mapping,
//! the read-only guard, the consistent count, the cancel on drop (checked in `pg_stat_activity`) and
//! the database's message for the model; `contract.rs` runs the executor conformance suite (the time
//! limit and pool exhaustion among its cases) and a connection cut mid-stream (through a proxy)
//! failing the result rather than shortening it.
#![cfg(feature = "services")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use dual_core::{PageRequest, Row};
use dual_postgres::{NumericMode, PgDb, PgOptions, PgQuery};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, ExecutorError, QueryExecutor, QueryStart, RowBatch, RowStream,
};
use dual_testkit::Scratch;
use dual_testkit::wait::until_within;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio_postgres::NoTls;

mod contract;
mod privilege;
mod readable;

/// The read-only role the tests connect as (created once, shared by every test): it may read the
/// scratch schemas it is granted, and nothing else.
const READER: &str = "dual_test_reader";

/// A scratch schema and an admin connection to fill it; [`Db::pg`] connects as [`READER`], which
/// may read every table of the schema.
struct Db {
    scratch: Scratch,
    admin: tokio_postgres::Client,
}

impl Db {
    async fn new() -> Self {
        let scratch = Scratch::postgres_schema();
        let (admin, connection) = tokio_postgres::connect(scratch.url(), NoTls)
            .await
            .unwrap_or_else(|e| panic!("admin connection: {e}"));
        tokio::spawn(connection);
        let schema = scratch.name();
        admin
            .batch_execute(&format!(
                "CREATE SCHEMA {schema};
                 GRANT USAGE ON SCHEMA {schema} TO {reader};
                 ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT ON TABLES TO {reader};",
                reader = role(&admin, READER).await,
            ))
            .await
            .unwrap_or_else(|e| panic!("schema: {e}"));
        Self { scratch, admin }
    }

    /// The scratch database's URL for `role` (trust authentication, no password).
    fn url_as(&self, role: &str) -> String {
        let url = self.scratch.url();
        match url.split_once("://") {
            Some((scheme, rest)) => {
                let host = rest.split_once('@').map_or(rest, |(_, host)| host);
                format!("{scheme}://{role}@{host}")
            }
            None => panic!("{url} is not a URL"),
        }
    }

    /// A `PgDb` connected as the privileged role of the URL (the CI's `postgres`), allowed to.
    async fn pg_privileged(&self, options: PgOptions) -> PgDb {
        PgDb::connect(self.scratch.url(), options.allow_privileged_role(true))
            .await
            .unwrap_or_else(|e| panic!("connect: {e}"))
    }

    fn table(&self, name: &str) -> String {
        format!("{}.{name}", self.scratch.name())
    }

    /// A `PgDb` connected as [`READER`].
    async fn pg(&self, options: PgOptions) -> PgDb {
        PgDb::connect(&self.url_as(READER), options)
            .await
            .unwrap_or_else(|e| panic!("connect: {e}"))
    }

    async fn exec(&self, sql: &str) {
        self.admin
            .batch_execute(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// Creates the login role `name` with no privileges, unless it exists (tests run in parallel
/// processes), and returns its name.
async fn role<'n>(admin: &tokio_postgres::Client, name: &'n str) -> &'n str {
    let create = format!(
        "DO $$ BEGIN CREATE ROLE {name} LOGIN;
         EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
    );
    admin
        .batch_execute(&create)
        .await
        .unwrap_or_else(|e| panic!("role {name}: {e}"));
    name
}

/// Every row of `stream`, or its first error.
async fn collect(mut stream: RowStream) -> Result<Vec<Row>, ExecutorError> {
    let mut rows = Vec::new();
    while let Some(batch) = stream.next().await {
        rows.extend(batch?.into_rows()?);
    }
    Ok(rows)
}

/// The rows of the model's `sql` with `params`, through the snapshot's stream, and the count it
/// announced.
async fn run(db: &PgDb, sql: &str, params: Value) -> (Result<Vec<Row>, ExecutorError>, Option<u64>) {
    let executor = Arc::new(db.sql_executor());
    let (start, announced) = start_channel();
    let rows = collect(executor.stream(json!({"sql": sql, "params": params}), start)).await;
    (rows, announced.await.ok().and_then(|s| s.total))
}

/// A server over `pg`'s SQL executor and the resource of `sql` it created.
async fn created(pg: &PgDb, sql: String) -> (DualResponseServer, dual_core::DualResponse) {
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor("sql", pg.sql_executor())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let created = server
        .create_response(CreateResponse::new("sql", json!({ "sql": sql })))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (server, created)
}

/// A `QueryStart` whose signal the test reads.
fn start_channel() -> (QueryStart, tokio::sync::oneshot::Receiver<dual_server::Started>) {
    QueryStart::channel()
}

#[tokio::test]
async fn types_round_trip_as_documented() {
    let db = Db::new().await;
    let t = db.table("types");
    db.exec(&format!(
        "CREATE TABLE {t} (i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, n numeric(12,3), b bool,
           s text, v varchar(5), d date, tm time, ts timestamp, tz timestamptz, iv interval, u uuid,
           j json, jb jsonb, by bytea, ai int4[], at text[][]);
         INSERT INTO {t} VALUES (-2, 40000, 9007199254740993, 1.5, 'NaN', 12345.678, true, 'Zoë 東京',
           'abc', '2024-02-29', '13:45:06.5', '2024-02-29 13:45:06.123456', '2024-02-29 13:45:06+02',
           '1 year 2 months 3 days 04:05:06.5', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
           '{{\"a\": [1, 2]}}', '{{\"b\": null}}', '\\xdeadbeef', '{{1,NULL,3}}', '{{{{a,b}},{{c,d}}}}');
         INSERT INTO {t} DEFAULT VALUES;"
    ))
    .await;
    let pg = db.pg(PgOptions::default()).await;
    let (rows, count) = run(
        &pg,
        &format!("SELECT * FROM {t} ORDER BY i2 NULLS LAST"),
        Value::Null,
    )
    .await;
    let rows = rows.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(count, Some(2), "the consistent count");
    let want = json!({
        "i2": -2, "i4": 40000, "i8": 9_007_199_254_740_993_i64, "f4": 1.5, "f8": "NaN", "n": "12345.678",
        "b": true, "s": "Zoë 東京", "v": "abc", "d": "2024-02-29", "tm": "13:45:06.5",
        "ts": "2024-02-29T13:45:06.123456", "tz": "2024-02-29T11:45:06Z", "iv": "P1Y2M3DT4H5M6.5S",
        "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "j": {"a": [1, 2]}, "jb": {"b": null},
        "by": "base64:3q2+7w==", "ai": [1, null, 3], "at": [["a", "b"], ["c", "d"]],
    });
    assert_eq!(Value::Object(rows[0].clone()), want);
    assert!(rows[1].values().all(Value::is_null), "NULLs: {:?}", rows[1]);

    let as_numbers = db.pg(PgOptions::default().numeric(NumericMode::Number)).await;
    let (rows, _) = run(
        &as_numbers,
        &format!("SELECT n FROM {t} WHERE n IS NOT NULL"),
        Value::Null,
    )
    .await;
    assert_eq!(
        rows.ok().map(|r| Value::Object(r[0].clone())),
        Some(json!({"n": 12345.678}))
    );

    // Through a server: snapshot → page, the same JSON.
    let (server, created) = created(&pg, format!("SELECT * FROM {t} ORDER BY i2 NULLS LAST")).await;
    assert_eq!(created.total_count, 2);
    // The types come from the prepared statement, not from the rows.
    let types: Vec<(String, dual_core::ColumnType)> = created
        .columns
        .iter()
        .map(|c| (c.name.clone(), c.column_type))
        .collect();
    use dual_core::ColumnType as T;
    let want_types = [
        ("i2", T::Integer),
        ("i4", T::Integer),
        ("i8", T::Integer),
        ("f4", T::Number),
        ("f8", T::Number),
        ("n", T::String),
        ("b", T::Boolean),
        ("s", T::String),
        ("v", T::String),
        ("d", T::Date),
        ("tm", T::String),
        ("ts", T::Datetime),
        ("tz", T::Datetime),
        ("iv", T::String),
        ("u", T::String),
        ("j", T::Json),
        ("jb", T::Json),
        ("by", T::String),
        ("ai", T::Json),
        ("at", T::Json),
    ];
    assert_eq!(types, want_types.map(|(n, t)| (n.to_owned(), t)));
    let page = server
        .fetch_page(created.id, &Caller::anonymous(), &PageRequest::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page.data.first().map(|r| Value::Object(r.clone())), Some(want));
}

#[tokio::test]
async fn writes_ddl_several_statements_and_transaction_control_are_refused_before_they_run() {
    let db = Db::new().await;
    let t = db.table("kept");
    db.exec(&format!(
        "CREATE TABLE {t} (x int, label text); INSERT INTO {t} (x) VALUES (1), (2);"
    ))
    .await;
    let pg = db.pg(PgOptions::default()).await;
    // What every executor refuses, and PostgreSQL's own ways to write, change a setting or lock rows.
    let mut refused = dual_testkit::database::refused_statements(&t);
    refused.extend([
        format!("WITH gone AS (DELETE FROM {t} RETURNING x) SELECT * FROM gone"),
        "SET statement_timeout = 0".to_owned(),
        format!("SELECT * FROM {t} FOR UPDATE"),
    ]);
    for sql in refused {
        let (rows, _) = run(&pg, &sql, Value::Null).await;
        let error = rows.err().unwrap_or_else(|| panic!("ran: {sql}"));
        assert!(!error.message().is_empty(), "{sql}");
    }
    let (rows, count) = run(&pg, &format!("SELECT x FROM {t} ORDER BY x"), Value::Null).await;
    assert_eq!(
        (rows.map(|r| r.len()).ok(), count),
        (Some(2), Some(2)),
        "nothing was written"
    );
}

#[tokio::test]
async fn a_large_result_streams_in_batches_with_its_exact_count_and_bound_params() {
    let db = Db::new().await;
    let pg = db.pg(PgOptions::default().fetch_rows(500)).await;
    let executor = Arc::new(pg.sql_executor());
    let (start, announced) = start_channel();
    let mut stream = executor.stream(
        json!({"sql": "SELECT g AS id, md5(g::text) AS h FROM generate_series(1, $1::int) g WHERE g % $2 = 0",
               "params": [20000, 2]}),
        start,
    );
    let mut ids = Vec::new();
    while let Some(batch) = stream.next().await {
        let batch = batch
            .and_then(RowBatch::into_rows)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(batch.len() <= 500, "a batch of {} rows", batch.len());
        ids.extend(batch.iter().filter_map(|r| r["id"].as_u64()));
    }
    assert_eq!(announced.await.ok().and_then(|s| s.total), Some(10_000));
    assert_eq!(ids, (1..=10_000).map(|i| i * 2).collect::<Vec<u64>>());
    // A value is bound, never interpolated.
    let (rows, _) = run(&pg, "SELECT $1::text AS v", json!(["x'); DROP TABLE y; --"])).await;
    assert_eq!(
        rows.ok().map(|r| r[0]["v"].clone()),
        Some(json!("x'); DROP TABLE y; --"))
    );
    let (rows, _) = run(&pg, "SELECT $1::int AS v", json!([])).await;
    assert!(rows.is_err(), "a missing parameter is an error");
    let (rows, _) = run(&pg, "SELECT $1::int AS v", json!({"a": 1})).await;
    assert!(rows.err().is_some_and(|e| e.message().contains("array")));
}

#[tokio::test]
async fn wide_rows_make_small_batches() {
    let db = Db::new().await;
    let pg = db.pg(PgOptions::default().batch_bytes(300_000)).await;
    let executor = Arc::new(pg.sql_executor());
    let mut stream = executor.stream(
        json!({"sql": "SELECT g AS id, repeat('x', 100000) AS wide FROM generate_series(1, 120) g"}),
        QueryStart::detached(),
    );
    let (mut sizes, mut ids) = (Vec::new(), Vec::new());
    while let Some(batch) = stream.next().await {
        let rows = batch
            .and_then(RowBatch::into_rows)
            .unwrap_or_else(|e| panic!("{e}"));
        sizes.push(rows.len());
        ids.extend(rows.iter().filter_map(|r| r["id"].as_u64()));
    }
    assert_eq!(ids, (1..=120).collect::<Vec<u64>>(), "every row once, in order");
    // The first fetches (16 rows, before any width is known) are the only ones past 300 kB: after
    // them, each asks for about 300 kB of these 100 kB rows.
    assert_eq!(sizes.get(..2), Some(&[16, 16][..]), "{sizes:?}");
    assert!(sizes[2..].iter().all(|&n| n <= 3), "{sizes:?}");
}

#[tokio::test]
async fn a_query_error_carries_postgres_message_for_the_model() {
    let db = Db::new().await;
    let pg = db.pg(PgOptions::default()).await;
    let (rows, _) = run(&pg, "SELECT nope FROM pg_class", Value::Null).await;
    let error = rows.err().unwrap_or_else(|| panic!("ran"));
    assert!(
        error.message().contains("nope") && error.message().contains("does not exist"),
        "{}",
        error.message()
    );
    // Two columns of one name (a join's `SELECT *`) would lose one in a row object: refused, saying how.
    let (rows, _) = run(&pg, "SELECT 1 AS id, 'a' AS name, 2 AS id", Value::Null).await;
    let error = rows.err().unwrap_or_else(|| panic!("ran"));
    assert!(
        error.message().contains("two columns named `id`"),
        "{}",
        error.message()
    );
}

/// Backends of this test's queries (by a marker in their SQL) that are running.
async fn running(db: &Db, marker: &str) -> i64 {
    let row = db
        .admin
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%' || $1 || '%' \
             AND pid <> pg_backend_pid()",
            &[&marker],
        )
        .await
        .unwrap_or_else(|e| panic!("pg_stat_activity: {e}"));
    row.get(0)
}

#[tokio::test]
async fn dropping_the_stream_stops_the_query_on_the_server_within_two_seconds() {
    let db = Db::new().await;
    let pg = db.pg(PgOptions::default().pool_size(1)).await;
    let marker = dual_testkit::unique_name("dual_cancel_");
    let executor = Arc::new(pg.sql_executor());
    let mut stream = Arc::clone(&executor).stream(
        json!({"sql": format!("SELECT pg_sleep(60) AS {marker}")}),
        QueryStart::detached(),
    );
    let poll = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
    assert!(poll.is_err(), "the query answered before it was cancelled");
    until_within(
        "the query running on the server",
        Duration::from_secs(5),
        async || running(&db, &marker).await == 1,
    )
    .await;
    let dropped = Instant::now();
    drop(stream);
    until_within(
        "the backend stopping the query",
        Duration::from_secs(2),
        async || running(&db, &marker).await == 0,
    )
    .await;
    // The pool's one connection is free again for the next query.
    let (rows, _) = run(&pg, "SELECT 1 AS one", Value::Null).await;
    assert_eq!(rows.ok().map(|r| r.len()), Some(1));
    assert!(dropped.elapsed() < Duration::from_secs(4));
}

#[tokio::test]
async fn the_csv_and_arrow_exports_honour_the_type_mapping() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Float64Type, Int64Type};

    let db = Db::new().await;
    let t = db.table("exported");
    db.exec(&format!(
        "CREATE TABLE {t} (id int8, f float8, n numeric(8,2), d date, tz timestamptz, j jsonb, a int4[]);
         INSERT INTO {t} VALUES (1, 'Infinity', 1.50, '2024-02-29', '2024-02-29 12:00:00+00', '{{\"k\": 1}}', '{{1,2}}'),
                               (2, 0.25, NULL, NULL, NULL, NULL, NULL);"
    ))
    .await;
    let pg = db.pg(PgOptions::default()).await;
    let (server, created) = created(&pg, format!("SELECT * FROM {t} ORDER BY id")).await;
    let id = created.id;
    let handler = dual_http::DualHttp::new(server);
    let export = |accept: &'static str| dual_testkit::database::export(&handler, id, accept);
    let csv = String::from_utf8(export("text/csv").await.to_vec()).unwrap_or_default();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "id,f,n,d,tz,j,a");
    assert_eq!(
        lines[1],
        r#"1,Infinity,1.50,2024-02-29,2024-02-29T12:00:00Z,"{""k"":1}","[1,2]""#
    );
    assert_eq!(lines[2], "2,0.25,,,,,");

    let arrow = export("application/vnd.apache.arrow.stream").await;
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(arrow.to_vec()), None)
        .unwrap_or_else(|e| panic!("{e}"));
    let batches: Vec<_> = reader.map(|b| b.unwrap_or_else(|e| panic!("{e}"))).collect();
    let batch = &batches[0];
    assert_eq!(batch.column(0).as_primitive::<Int64Type>().value(1), 2);
    let floats = batch.column(1).as_primitive::<Float64Type>();
    assert_eq!((floats.value(0), floats.value(1)), (f64::INFINITY, 0.25));
    assert_eq!(
        batch.column(2).as_string::<i32>().value(0),
        "1.50",
        "numeric stays exact"
    );
    assert_eq!(
        batch.column(3).as_primitive::<Date32Type>().value(0),
        19_782,
        "2024-02-29 as days since 1970"
    );
    assert!(batch.column(3).is_null(1));
    assert_eq!(
        batch.column(4).as_string::<i32>().value(0),
        "2024-02-29T12:00:00Z"
    );
    assert_eq!(batch.column(5).as_string::<i32>().value(0), r#"{"k":1}"#);
    assert_eq!(batch.column(6).as_string::<i32>().value(0), "[1,2]");
}

/// The count runs beside the stream, in the stream's exported snapshot: a query of two seconds
/// takes about two, not four (count, then stream), and still announces its exact count.
#[tokio::test]
async fn the_count_runs_beside_the_stream_not_before_it() {
    let db = Db::new().await;
    let pg = db
        .pg(PgOptions::default().count_wait(Duration::from_secs(10)))
        .await;
    let started = Instant::now();
    let (rows, count) = run(
        &pg,
        "SELECT x FROM generate_series(1, 3) AS x, pg_sleep(2) AS s",
        Value::Null,
    )
    .await;
    let elapsed = started.elapsed();
    assert_eq!(rows.map(|rows| rows.len()).ok(), Some(3));
    assert_eq!(count, Some(3), "the consistent count");
    assert!(
        elapsed < Duration::from_millis(3_500),
        "count and stream ran one after the other: {elapsed:?}"
    );
}

/// With the library's default `pending_after` (2 s), a long query answers `pending` at once
/// instead of holding the tool call until it ends.
#[tokio::test]
async fn a_long_query_answers_pending_with_the_library_defaults() {
    let db = Db::new().await;
    let pg = db.pg(PgOptions::default()).await;
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor("sql", pg.sql_executor())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let created = server
        .create_response(CreateResponse::new(
            "sql",
            json!({"sql": "SELECT 1 AS one FROM pg_sleep(30)"}),
        ))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let answered = started.elapsed();
    assert_eq!(created.status, dual_core::status::ResourceStatus::Pending);
    assert!(
        answered < Duration::from_millis(3_500),
        "answered after {answered:?}"
    );
    server
        .delete_resource(created.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Whether another session can take the advisory lock `key` now (and gives it back at once).
async fn lock_is_free(db: &Db, key: i64) -> bool {
    let free: bool = db
        .admin
        .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
        .await
        .and_then(|row| row.try_get(0))
        .unwrap_or_else(|e| panic!("{e}"));
    if free {
        db.exec(&format!("SELECT pg_advisory_unlock({key})")).await;
    }
    free
}

/// A session-level advisory lock a query takes never outlives the query (issue 42, item 4): on the
/// snapshot's stream, its count beside it, and a live page and count, the pooled connection is reset
/// before it goes back, so another session takes the lock at once. The model's SQL may not call
/// `pg_advisory_lock` at all (the guard refuses it); a developer's query may, and is what this
/// checks, with pools of one connection so the next query would reuse a dirty one.
#[tokio::test]
async fn an_advisory_lock_never_outlives_its_query() {
    let db = Db::new().await;
    let pg = db
        .pg(PgOptions::default().pool_size(1).snapshot_connections(1))
        .await;
    let refused = run(&pg, "SELECT pg_advisory_lock(4241)", Value::Null).await.0;
    assert!(
        refused.is_err_and(|e| e.message().contains("sql_function_refused")),
        "the model's SQL may not take one"
    );
    // The developer's query: `SELECT pg_advisory_lock(<n>) …`, failing after the lock when `fail`.
    let executor = Arc::new(pg.query_executor(|params| {
        let key = params["key"].as_i64().ok_or("`key` is required")?;
        let tail = if params["fail"] == json!(true) {
            " AND 1 / 0 = 1"
        } else {
            ""
        };
        Ok(PgQuery::new(format!(
            "SELECT pg_advisory_lock({key}) IS NOT NULL{tail} AS locked"
        )))
    }));
    let rows = collect(Arc::clone(&executor).stream(json!({"key": 4242}), start_channel().0)).await;
    assert_eq!(rows.map(|rows| rows.len()).ok(), Some(1));
    assert!(lock_is_free(&db, 4242).await, "the stream's lock was released");

    let live = executor.live().unwrap_or_else(|| panic!("pages live"));
    let page = live
        .fetch(&json!({"key": 4243}), dual_server::RowWindow::new(0, 5))
        .await;
    assert_eq!(page.map(|rows| rows.len()).ok(), Some(1));
    assert!(lock_is_free(&db, 4243).await, "the page's lock was released");
    assert_eq!(live.count(&json!({"key": 4244})).await.ok(), Some(1));
    assert!(lock_is_free(&db, 4244).await, "the count's lock was released");

    // A query that fails after taking the lock releases it too.
    let rows =
        collect(Arc::clone(&executor).stream(json!({"key": 4245, "fail": true}), start_channel().0)).await;
    assert!(rows.is_err());
    assert!(
        lock_is_free(&db, 4245).await,
        "the failed query's lock was released"
    );
}
