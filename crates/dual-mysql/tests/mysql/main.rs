//! dual-mysql against a real MariaDB or MySQL (feature `services`; `bash .ci/services` starts
//! MariaDB at `DUAL_TEST_MYSQL_URL`, by default `mysql://root@127.0.0.1:3306/test`): the executor
//! conformance suite of dual-testkit, the cancel checked in the server's process list, and a
//! connection cut mid-stream (through a proxy) failing the stream rather than shortening it.
#![cfg(feature = "services")]

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use dual_mysql::{MyDb, MyOptions, MyQuery};
use dual_server::{QueryExecutor, QueryStart};
use dual_sql::SchemaCache;
use dual_testkit::database::{Database, Limits, fails_when_cut};
use dual_testkit::services::MYSQL;
use dual_testkit::wait::until_within;
use futures_util::StreamExt;
use mysql_async::prelude::Queryable;
use serde_json::{Value, json};

mod privilege;

/// The read-only user the tests connect as (created once, shared by every test): it may read the
/// scratch databases it is granted, and nothing else.
const READER: &str = "dual_test_reader";

/// A database of one test on the server, dropped at the end (also when the test fails).
struct Scratch {
    url: String,
    name: String,
    /// Whether [`Scratch::db`] connects as the URL's privileged user (allowed to) rather than
    /// [`READER`].
    privileged: bool,
}

impl Scratch {
    async fn new() -> Self {
        let url = MYSQL.require();
        let name = dual_testkit::unique_name("dual_test_");
        let mut admin = admin(&url).await;
        for sql in [
            format!("CREATE DATABASE {name}"),
            format!("CREATE USER IF NOT EXISTS '{READER}'@'%'"),
            format!("GRANT SELECT, SHOW VIEW ON {name}.* TO '{READER}'@'%'"),
        ] {
            admin.query_drop(sql).await.unwrap_or_else(|e| panic!("{e}"));
        }
        Self {
            url,
            name,
            privileged: false,
        }
    }

    /// The URL of the scratch database as the connection's own (the URL's path names it), so that
    /// its schema is the test's tables, for `user` (`None`: the URL's own).
    fn url_as(&self, user: Option<&str>) -> String {
        let base = self
            .url
            .rsplit_once('/')
            .map_or(self.url.as_str(), |(base, _)| base);
        let base = match (user, base.split_once("://")) {
            (Some(user), Some((scheme, rest))) => {
                let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
                format!("{scheme}://{user}@{host}")
            }
            _ => base.to_owned(),
        };
        format!("{base}/{}", self.name)
    }

    /// An executor's database over the scratch database, as [`READER`] (or the privileged user).
    async fn db(&self, options: MyOptions) -> MyDb {
        let (url, options) = if self.privileged {
            (self.url_as(None), options.allow_privileged_role(true))
        } else {
            (self.url_as(Some(READER)), options)
        };
        MyDb::connect(&url, options)
            .await
            .unwrap_or_else(|e| panic!("connect: {e}"))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let (url, name) = (self.url.clone(), self.name.clone());
        // A runtime of its own: the test's may be gone or busy.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
            if let Ok(runtime) = runtime {
                runtime.block_on(async {
                    if let Ok(mut conn) = mysql_async::Conn::from_url(&url).await {
                        let _ = conn.query_drop(format!("DROP DATABASE IF EXISTS {name}")).await;
                        let _ = conn
                            .query_drop(format!("REVOKE ALL PRIVILEGES ON {name}.* FROM '{READER}'@'%'"))
                            .await;
                        let _ = conn.disconnect().await;
                    }
                });
            }
        })
        .join();
    }
}

async fn admin(url: &str) -> mysql_async::Conn {
    mysql_async::Conn::from_url(url)
        .await
        .unwrap_or_else(|e| panic!("admin connection: {e}"))
}

#[async_trait]
impl Database for Scratch {
    async fn executor(&self, limits: Limits) -> Arc<dyn QueryExecutor> {
        let options = MyOptions::default()
            .pool_size(limits.pool_size)
            .wait(limits.wait)
            .time_limit(limits.time_limit)
            .max_value_bytes(limits.max_value_bytes);
        Arc::new(self.db(options).await.sql_executor())
    }

    async fn execute(&self, sql: &str) {
        let mut conn = admin(&self.url).await;
        conn.query_drop(format!("USE {}", self.name))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        conn.query_drop(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        let _ = conn.disconnect().await;
    }

    fn table(&self, name: &str) -> String {
        format!("{}.{name}", self.name)
    }

    fn slow_query(&self, seconds: u32) -> String {
        format!(
            "SELECT BENCHMARK({}, MD5('dual')) AS busy",
            u64::from(seconds) * 5_000_000
        )
    }

    fn param(&self, _n: usize) -> String {
        "?".to_owned()
    }

    async fn schema(&self) -> SchemaCache {
        self.db(MyOptions::default()).await.schema().clone()
    }

    async fn query_executor(&self, select: String) -> Arc<dyn QueryExecutor> {
        Arc::new(self.db(MyOptions::default()).await.query_executor(move |params| {
            let n = params["n"].as_u64().ok_or("`n` is required")?;
            Ok(MyQuery::new(select.clone()).bind(n))
        }))
    }

    fn quote(&self, name: &str) -> String {
        format!("`{}`", name.replace('`', "``"))
    }

    fn typed_table(&self, table: &str) -> (String, Vec<Value>) {
        (
            format!(
                "CREATE TABLE {table} (id BIGINT, d DOUBLE, n DECIMAL(8,2), s VARCHAR(20), b VARBINARY(4),
                   dt DATE, ts DATETIME(3), t TIME);
                 INSERT INTO {table} VALUES (1, -0.5, 7.25, 'Zoë \"q\"', x'00ff', '1999-12-31',
                   '2024-02-29 23:59:59.500', '-25:30:00'),
                   (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL);"
            ),
            vec![
                json!({"id": 1, "d": -0.5, "n": "7.25", "s": "Zoë \"q\"", "b": "base64:AP8=", "dt": "1999-12-31",
                       "ts": "2024-02-29T23:59:59.5", "t": "-25:30:00"}),
                json!({"id": 2, "d": null, "n": null, "s": null, "b": null, "dt": null, "ts": null, "t": null}),
            ],
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_keeps_the_executor_contract_as_a_read_only_user() {
    dual_testkit::database::run(Arc::new(Scratch::new().await)).await;
}

/// The guard, not the user, refuses what the model may not do: the suite passes as `root` too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_keeps_the_executor_contract_as_a_privileged_user_allowed_to_start() {
    let mut scratch = Scratch::new().await;
    scratch.privileged = true;
    dual_testkit::database::run(Arc::new(scratch)).await;
}

/// Queries of this test (by a marker in their SQL) that the server runs.
async fn running(url: &str, marker: &str) -> usize {
    let mut conn = admin(url).await;
    let rows: Vec<String> = conn
        .exec(
            "SELECT info FROM information_schema.processlist WHERE info LIKE CONCAT('%', ?, '%') AND id <> CONNECTION_ID()",
            (marker,),
        )
        .await
        .unwrap_or_else(|e| panic!("processlist: {e}"));
    let _ = conn.disconnect().await;
    rows.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_stream_kills_the_query_on_the_server_within_two_seconds() {
    let scratch = Scratch::new().await;
    let db = scratch.db(MyOptions::default().pool_size(1)).await;
    let marker = dual_testkit::unique_name("dual_kill_");
    let executor = Arc::new(db.sql_executor());
    let mut stream = Arc::clone(&executor).stream(
        json!({"sql": format!("SELECT BENCHMARK(2000000000, MD5('x')) AS {marker}")}),
        QueryStart::detached(),
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(500), stream.next())
            .await
            .is_err()
    );
    until_within(
        "the query running on the server",
        Duration::from_secs(5),
        async || running(&scratch.url, &marker).await > 0,
    )
    .await;
    drop(stream);
    until_within(
        "the server killing the query",
        Duration::from_secs(2),
        async || running(&scratch.url, &marker).await == 0,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn into_outfile_and_ddl_never_reach_the_server() {
    let scratch = Scratch::new().await;
    let db = scratch.db(MyOptions::default()).await;
    let executor = Arc::new(db.sql_executor());
    for sql in [
        format!("SELECT 1 INTO OUTFILE '/tmp/{}.txt'", scratch.name),
        format!("CREATE TABLE {}.created (x INT)", scratch.name),
    ] {
        let mut stream = Arc::clone(&executor).stream(json!({"sql": sql}), QueryStart::detached());
        let first = stream.next().await;
        assert!(matches!(first, Some(Err(_))), "{sql}: {first:?}");
    }
    let mut conn = admin(&scratch.url).await;
    let tables: Vec<String> = conn
        .exec(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ?",
            (scratch.name.clone(),),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(tables.is_empty(), "{tables:?}");
    assert!(!std::path::Path::new(&format!("/tmp/{}.txt", scratch.name)).exists());
}

/// Two columns of one name would lose one in a row object: refused before any row, saying how.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_columns_of_one_name_are_refused() {
    let scratch = Scratch::new().await;
    let executor = Arc::new(scratch.db(MyOptions::default()).await.sql_executor());
    let mut stream =
        Arc::clone(&executor).stream(json!({"sql": "SELECT 1 AS id, 2 AS id"}), QueryStart::detached());
    let message = match stream.next().await {
        Some(Err(error)) => error.message().to_owned(),
        other => panic!("{other:?}"),
    };
    assert!(message.contains("two columns named `id`"), "{message}");
}

/// The database connection cut in the middle of a stream (the server gone, a network partition):
/// the stream ends with an error, never as a short result, and nothing comes after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_cut_mid_stream_fails_the_stream_never_shortens_it() {
    use dual_testkit::proxy::Proxy;

    const DIGITS: &str = "(SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL \
                          SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL \
                          SELECT 8 UNION ALL SELECT 9)";
    let scratch = Scratch::new().await;
    let upstream = MYSQL.addr().unwrap_or_else(|e| panic!("{e}"));
    let proxy = Proxy::start(upstream)
        .await
        .unwrap_or_else(|e| panic!("proxy: {e}"));
    // mysql_async moves a connection to 127.0.0.1 onto the server's Unix socket unless told not to,
    // which would bypass the proxy.
    let url = MYSQL.url_through(proxy.addr()).unwrap_or_else(|e| panic!("{e}"));
    let separator = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{separator}prefer_socket=false");
    let options = MyOptions::default().fetch_rows(200).allow_privileged_role(true);
    let db = MyDb::connect(&url, options)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    // 1,000,000 rows of about 40 bytes: far more than the socket buffers between the two.
    let sql = format!(
        "SELECT a.n + 10 * b.n + 100 * c.n + 1000 * d.n + 10000 * e.n + 100000 * f.n AS id, \
         MD5(a.n + 10 * b.n) AS h FROM {DIGITS} a, {DIGITS} b, {DIGITS} c, {DIGITS} d, {DIGITS} e, {DIGITS} f"
    );
    let executor = Arc::new(db.sql_executor());
    let stream = Arc::clone(&executor).stream(json!({"sql": sql}), QueryStart::detached());
    let error = fails_when_cut(stream, &proxy, 1_000_000, Duration::from_secs(60)).await;
    assert!(!error.to_string().is_empty());
    drop(scratch);
}

/// A count slower than `count_wait` is stopped (`KILL QUERY`) and the rows are counted as they
/// come, in the same transaction: a query of two seconds takes about two, not four (count, then
/// stream), and its start is told without a count.
#[tokio::test]
async fn a_slow_count_is_stopped_and_the_query_runs_once() {
    let scratch = Scratch::new().await;
    let db = scratch
        .db(MyOptions::default().count_wait(Duration::from_millis(300)))
        .await;
    let executor = Arc::new(db.sql_executor());
    let (start, announced) = QueryStart::channel();
    let started = std::time::Instant::now();
    let mut stream = executor.stream(
        // `LIMIT`: the wrapped query is materialized, so its count sleeps as long as its rows.
        json!({"sql": "SELECT SLEEP(2) AS x LIMIT 1"}),
        start,
    );
    let mut rows = 0;
    while let Some(batch) = stream.next().await {
        rows += batch.unwrap_or_else(|e| panic!("{}", e.message())).len();
    }
    let elapsed = started.elapsed();
    assert_eq!(rows, 1);
    assert_eq!(
        announced.await.ok().and_then(|s| s.total),
        None,
        "no count was announced"
    );
    assert!(
        elapsed < Duration::from_millis(3_500),
        "the count and the rows ran one after the other: {elapsed:?}"
    );
}

/// Nothing a query leaves on its session outlives it (issue 42, item 4): a named lock (`GET_LOCK`)
/// is free for another session once the query ended, and a user variable it set is gone for the
/// next query on the same pooled connection (the pool resets each connection it takes back and runs
/// the session's setup again). The model's SQL may not call `GET_LOCK` (the guard refuses it); a
/// developer's query may, and is what this checks, on a pool of one connection.
#[tokio::test]
async fn a_named_lock_or_user_variable_never_outlives_its_query() {
    let scratch = Scratch::new().await;
    let db = scratch
        .db(MyOptions::default().pool_size(1).snapshot_connections(1))
        .await;
    let lock = format!("{}_lock", scratch.name);
    let model = Arc::new(db.sql_executor());
    let model_live = model.live().unwrap_or_else(|| panic!("pages live"));
    let refused = model_live
        .fetch(
            &json!({"sql": format!("SELECT GET_LOCK('{lock}', 0) AS taken")}),
            dual_server::RowWindow::new(0, 5),
        )
        .await;
    assert!(
        refused.is_err_and(|e| e.message().contains("sql_function_refused")),
        "the model's SQL may not take one"
    );
    let taking = format!("SELECT GET_LOCK('{lock}', 0) AS taken, @leak := 'secret' AS v");
    let executor = Arc::new(db.query_executor(move |params| {
        Ok(MyQuery::new(params["sql"].as_str().unwrap_or(&taking).to_owned()))
    }));
    let live = executor.live().unwrap_or_else(|| panic!("pages live"));
    let page = live
        .fetch(&json!({}), dual_server::RowWindow::new(0, 5))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page[0]["taken"], json!(1));
    let mut other = admin(&scratch.url).await;
    let mut free = None;
    for _ in 0..100 {
        free = other
            .query_first::<i64, _>(format!("SELECT IS_FREE_LOCK('{lock}')"))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if free == Some(1) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(free, Some(1), "the lock was released with the query's session");
    let page = live
        .fetch(
            &json!({"sql": "SELECT @leak AS v"}),
            dual_server::RowWindow::new(0, 5),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page[0]["v"], Value::Null, "no user variable crosses queries");
    // The session's setup came back with the reset: still in UTC.
    let page = live
        .fetch(
            &json!({"sql": "SELECT @@session.time_zone AS tz"}),
            dual_server::RowWindow::new(0, 5),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page[0]["tz"], json!("+00:00"));
}

/// Every value readable (issue 42, item 5; docs/TYPES.md): bits as numbers, spatial values as
/// well-known text, binary strings as `base64:…`, sets and enums as their text, MariaDB's JSON (a
/// `LONGTEXT`) as its text, in the stream and in live pages alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_type_reads_as_text_or_json_a_person_can_read() {
    let scratch = Scratch::new().await;
    let t = scratch.table("readable");
    scratch
        .execute(&format!(
            "CREATE TABLE {t} (id INT, bits BIT(3), place POINT, shape GEOMETRY, doc JSON,
               tags SET('a','b','c'), size ENUM('s','m'), fixed BINARY(2), raw VARBINARY(8), big BLOB,
               yr YEAR, addr INET6, uid UUID);
             INSERT INTO {t} VALUES (1, b'101', ST_GeomFromText('POINT(1 2)'),
               ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))', 4326), '{{\"a\": [1, 2]}}', 'a,c', 'm',
               x'00ff', x'deadbeef', '', 2024, '::1', '123e4567-e89b-12d3-a456-426655440000');"
        ))
        .await;
    let want = json!({
        "id": 1, "bits": 5, "place": "POINT(1 2)", "shape": "SRID=4326;POLYGON((0 0,1 0,1 1,0 0))",
        "doc": "{\"a\": [1, 2]}", "tags": "a,c", "size": "m", "fixed": "base64:AP8=",
        "raw": "base64:3q2+7w==", "big": "base64:", "yr": 2024, "addr": "::1",
        "uid": "123e4567-e89b-12d3-a456-426655440000",
        "line": "LINESTRING(0 0,1.5 -2)", "obj": "{\"k\": [true, null]}", "bin": "base64:AA==",
        // A bit-value literal is a binary string, not a BIT column.
        "b8": "base64:/w==",
    });
    let sql = format!(
        "SELECT *, ST_GeomFromText('LINESTRING(0 0,1.5 -2)') AS line, JSON_EXTRACT('{{\"k\": [true, null]}}', '$') AS obj,
           UNHEX('00') AS bin, b'11111111' AS b8 FROM {t}"
    );
    let executor = Arc::new(scratch.db(MyOptions::default()).await.sql_executor());
    let mut stream = Arc::clone(&executor).stream(json!({ "sql": sql }), QueryStart::detached());
    let mut rows = Vec::new();
    while let Some(batch) = stream.next().await {
        rows.extend(
            batch
                .and_then(dual_server::RowBatch::into_rows)
                .unwrap_or_else(|e| panic!("{e}")),
        );
    }
    let got = rows.first().map(|r| Value::Object(r.clone())).unwrap_or_default();
    for (name, value) in want.as_object().into_iter().flatten() {
        assert_eq!(&got[name], value, "{name}");
    }
    assert_eq!(got, want, "no other column");
    let live = executor.live().unwrap_or_else(|| panic!("pages live"));
    let page = live
        .fetch(&json!({ "sql": sql }), dual_server::RowWindow::new(0, 5))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page.first().map(|r| Value::Object(r.clone())), Some(got));
}
