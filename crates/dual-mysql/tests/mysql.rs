//! dual-mysql against a real MariaDB or MySQL (feature `services`; `bash .ci/services` starts
//! MariaDB at `DUAL_TEST_MYSQL_URL`, by default `mysql://root@127.0.0.1:3306/test`): the executor
//! conformance suite of dual-testkit, the cancel checked in the server's process list, and a
//! connection cut mid-stream (through a proxy) failing the stream rather than shortening it.
#![cfg(feature = "services")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use dual_mysql::{MyDb, MyOptions};
use dual_server::{QueryExecutor, QueryStart, RowWindow};
use dual_testkit::database::{Database, Limits, fails_when_cut};
use dual_testkit::services::MYSQL;
use futures_util::StreamExt;
use mysql_async::prelude::Queryable;
use serde_json::{Value, json};

/// A database of one test on the server, dropped at the end (also when the test fails).
struct Scratch {
    url: String,
    name: String,
}

impl Scratch {
    async fn new() -> Self {
        let url = MYSQL.require();
        let name = format!("dual_test_{:016x}", fastrand_id());
        admin(&url)
            .await
            .query_drop(format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        Self { url, name }
    }

    async fn db(&self, options: MyOptions) -> MyDb {
        MyDb::connect(&self.url, options)
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

fn fastrand_id() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos() % u128::from(u64::MAX)).unwrap_or(0))
        .unwrap_or(0)
        ^ u64::from(std::process::id())
}

#[async_trait]
impl Database for Scratch {
    async fn executor(&self, limits: Limits) -> Arc<dyn QueryExecutor> {
        let options = MyOptions::default()
            .pool_size(limits.pool_size)
            .wait(limits.wait)
            .time_limit(limits.time_limit);
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
                json!({"id": 1, "d": -0.5, "n": "7.25", "s": "Zoë \"q\"", "b": "AP8=", "dt": "1999-12-31",
                       "ts": "2024-02-29T23:59:59.5", "t": "-25:30:00"}),
                json!({"id": 2, "d": null, "n": null, "s": null, "b": null, "dt": null, "ts": null, "t": null}),
            ],
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_keeps_the_executor_contract() {
    dual_testkit::database::run(Arc::new(Scratch::new().await)).await;
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
    let marker = format!("dual_kill_{}", fastrand_id());
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
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(&scratch.url, &marker).await == 0 {
        assert!(Instant::now() < deadline, "the query never ran");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(2);
    while running(&scratch.url, &marker).await > 0 {
        assert!(Instant::now() < deadline, "the server still runs the query");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describes_its_tables_and_suggests_close_names_without_applying_them() {
    let scratch = Scratch::new().await;
    scratch
        .execute(
            "CREATE TABLE institutions (id INT PRIMARY KEY, enrollment INT, state VARCHAR(2) NOT NULL);
             CREATE VIEW public_ones AS SELECT id, state FROM institutions;",
        )
        .await;
    // The scratch database as the connection's own (the URL's path names it).
    let base = scratch
        .url
        .rsplit_once('/')
        .map_or(scratch.url.as_str(), |(base, _)| base);
    let url = format!("{base}/{}", scratch.name);
    let db = MyDb::connect(&url, MyOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let tables = db.schema().tables().await.unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["institutions", "public_ones"]);
    let columns: Vec<(&str, &str, bool)> = tables[0]
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.data_type.as_str(), c.nullable))
        .collect();
    assert_eq!(
        columns,
        [
            ("id", "int(11)", false),
            ("enrollment", "int(11)", true),
            ("state", "varchar(2)", false)
        ]
    );
    assert_eq!(tables[1].kind, dual_core::schema::TableKind::View);
    let executor = Arc::new(db.sql_executor());
    let mut stream = Arc::clone(&executor).stream(
        json!({"sql": "SELECT enrolment FROM institutions"}),
        QueryStart::detached(),
    );
    let message = match stream.next().await {
        Some(Err(error)) => error.message().to_owned(),
        other => panic!("{other:?}"),
    };
    assert!(message.starts_with("Unknown column 'enrolment'"), "{message}");
    assert!(message.ends_with("Did you mean `enrollment`?"), "{message}");
    let mut stream = Arc::clone(&executor).stream(
        json!({"sql": "SELECT * FROM institution"}),
        QueryStart::detached(),
    );
    let message = match stream.next().await {
        Some(Err(error)) => error.message().to_owned(),
        other => panic!("{other:?}"),
    };
    assert!(message.ends_with("Did you mean `institutions`?"), "{message}");
    // Two columns of one name would lose one in a row object: refused before any row, saying how.
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
    let db = MyDb::connect(&url, MyOptions::default().fetch_rows(200))
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_paging_counts_sorts_and_seeks() {
    let scratch = Scratch::new().await;
    let db = scratch.db(MyOptions::default()).await;
    let table = format!("{}.numbers", scratch.name);
    let mut admin = admin(&scratch.url).await;
    admin
        .query_drop(format!(
            "CREATE TABLE {table} (id INT PRIMARY KEY, `odd name` VARCHAR(10))"
        ))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let values: Vec<String> = (1..=50).map(|i| format!("({i}, 'n{i}')")).collect();
    admin
        .query_drop(format!("INSERT INTO {table} VALUES {}", values.join(", ")))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let select = format!("SELECT id, `odd name` FROM {table} WHERE id <= ?");
    let executor = db.query_executor(move |params| {
        let n = params["n"].as_u64().ok_or("`n` is required")?;
        Ok(dual_mysql::MyQuery::new(select.clone()).bind(n))
    });
    let live = executor.live().unwrap_or_else(|| panic!("live paging"));
    let params = json!({"n": 50});
    assert_eq!(live.count(&params).await.ok(), Some(50));
    let sort = dual_core::Sort::new("id", dual_core::SortOrder::Desc);
    let rows = live
        .fetch(&params, RowWindow::new(10, 3).sorted(Some(&sort)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<u64> = rows.iter().filter_map(|r| r["id"].as_u64()).collect();
    assert_eq!(ids, [40, 39, 38]);
    let by_name = dual_core::Sort::new("odd name", dual_core::SortOrder::Asc);
    let rows = live
        .fetch(&params, RowWindow::new(0, 2).sorted(Some(&by_name)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows[0]["odd name"], "n1");
    assert_eq!(rows[1]["odd name"], "n10", "text order");
    let refused = live.count(&json!({})).await.err().map(|e| e.message().to_owned());
    assert_eq!(refused.as_deref(), Some("`n` is required"));
    // The model's SQL pages live too, with its own parameters.
    let sql = Arc::new(db.sql_executor());
    let live = sql.live().unwrap_or_else(|| panic!("live paging"));
    let params = json!({"sql": format!("SELECT id FROM {table} WHERE id > ?"), "params": [45]});
    assert_eq!(live.count(&params).await.ok(), Some(5));
    let rows = live
        .fetch(&params, RowWindow::new(1, 10))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.len(), 4);
}
