//! The conformance suite every executor passes (`dual_testkit::database`: the guard, the types,
//! the bounds, the schema and its suggestions, live paging), and a connection cut mid-stream, both
//! over the scratch schema of [`Db`].

use std::sync::Arc;
use std::time::Duration;

use dual_postgres::{PgDb, PgOptions, PgQuery};
use dual_server::{Caller, CreateResponse, DualResponseServer, QueryExecutor};
use dual_sql::SchemaCache;
use dual_testkit::database::fails_when_cut;
use dual_testkit::proxy::{Mode, Proxy};
use dual_testkit::services::POSTGRES;
use serde_json::{Value, json};

use crate::{Db, start_channel};

/// The scratch schema as the executor conformance suite's database, connected as the read-only
/// role the tests create, or as the CI's privileged role (allowed to).
struct Conformance {
    db: Db,
    privileged: bool,
}

impl Conformance {
    async fn pg(&self, options: PgOptions) -> PgDb {
        if self.privileged {
            self.db.pg_privileged(options).await
        } else {
            self.db.pg(options).await
        }
    }
}

#[async_trait::async_trait]
impl dual_testkit::database::Database for Conformance {
    async fn executor(&self, limits: dual_testkit::database::Limits) -> Arc<dyn QueryExecutor> {
        let options = PgOptions::default()
            .pool_size(limits.pool_size)
            .wait(limits.wait)
            .time_limit(limits.time_limit)
            .max_value_bytes(limits.max_value_bytes);
        Arc::new(self.pg(options).await.sql_executor())
    }

    async fn execute(&self, sql: &str) {
        self.db.exec(sql).await;
    }

    fn table(&self, name: &str) -> String {
        self.db.table(name)
    }

    fn slow_query(&self, seconds: u32) -> String {
        format!("SELECT 1 AS one FROM pg_sleep({seconds})")
    }

    fn param(&self, n: usize) -> String {
        format!("${n}")
    }

    async fn schema(&self) -> SchemaCache {
        self.pg(PgOptions::default()).await.schema().clone()
    }

    async fn query_executor(&self, select: String) -> Arc<dyn QueryExecutor> {
        Arc::new(self.pg(PgOptions::default()).await.query_executor(move |params| {
            let n = params["n"].as_u64().ok_or("`n` is required")?;
            Ok(PgQuery::new(select.clone()).bind(n))
        }))
    }

    fn typed_table(&self, table: &str) -> (String, Vec<Value>) {
        (
            format!(
                "CREATE TABLE {table} (id int8, f float8, n numeric(8,2), b bool, s text, d date,
                   tz timestamptz, u uuid, j jsonb, by bytea, a text[]);
                 INSERT INTO {table} VALUES (1, -0.5, 7.25, false, 'Zoë \"q\"', '1999-12-31',
                   '2024-02-29 23:59:59.5+00', '00000000-0000-0000-0000-000000000001', '[1, \"x\"]',
                   '\\x00ff', '{{a,NULL}}'),
                   (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);"
            ),
            vec![
                json!({"id": 1, "f": -0.5, "n": "7.25", "b": false, "s": "Zoë \"q\"", "d": "1999-12-31",
                       "tz": "2024-02-29T23:59:59.5Z", "u": "00000000-0000-0000-0000-000000000001",
                       "j": [1, "x"], "by": "base64:AP8=", "a": ["a", null]}),
                json!({"id": 2, "f": null, "n": null, "b": null, "s": null, "d": null, "tz": null, "u": null,
                       "j": null, "by": null, "a": null}),
            ],
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_the_executor_contract_as_a_read_only_role() {
    let db = Db::new().await;
    dual_testkit::database::run(Arc::new(Conformance {
        db,
        privileged: false,
    }))
    .await;
}

/// The guard, not the role, refuses what the model may not do: the suite passes as a superuser too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_the_executor_contract_as_a_privileged_role_allowed_to_start() {
    let db = Db::new().await;
    dual_testkit::database::run(Arc::new(Conformance { db, privileged: true })).await;
}

/// A proxy in front of PostgreSQL, and a `PgDb` through it that fetches 200 rows at a time.
async fn through_proxy() -> (Proxy, PgDb) {
    let upstream = POSTGRES.addr().unwrap_or_else(|e| panic!("{e}"));
    let proxy = Proxy::start(upstream)
        .await
        .unwrap_or_else(|e| panic!("proxy: {e}"));
    let url = POSTGRES
        .url_through(proxy.addr())
        .unwrap_or_else(|e| panic!("{e}"));
    let options = PgOptions::default().fetch_rows(200).allow_privileged_role(true);
    let pg = PgDb::connect(&url, options)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    (proxy, pg)
}

/// The database connection cut in the middle of a stream (PostgreSQL gone, a network partition):
/// the stream ends with an error naming the lost connection, never as a short result, and a
/// resource whose snapshot was being written turns `failed`, never `ready` with fewer rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_cut_mid_stream_fails_the_result_never_shortens_it() {
    let sql = json!({"sql": "SELECT g AS id, md5(g::text) AS h FROM generate_series(1, 300000) g"});

    // The executor's stream: a batch, the cut, then an error and nothing after it.
    let (proxy, pg) = through_proxy().await;
    let executor = Arc::new(pg.sql_executor());
    let (start, _announced) = start_channel();
    let stream = executor.stream(sql.clone(), start);
    let error = fails_when_cut(stream, &proxy, 300_000, Duration::from_secs(60)).await;
    let message = error.to_string().to_lowercase();
    assert!(
        message.contains("connection") || message.contains("closed") || message.contains("postgres"),
        "a message that says what was lost: {error}"
    );

    // Behind a server: the snapshot being written fails the resource; its count is never shortened.
    let (proxy, pg) = through_proxy().await;
    let server = DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .shared_executor("sql", Arc::new(pg.sql_executor()) as Arc<dyn QueryExecutor>)
        .pending_after(Duration::from_millis(1))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let created = server
        .create_response(CreateResponse::new("sql", sql))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    proxy.set(Mode::Refuse);
    let caller = Caller::anonymous();
    let mut record = server
        .get_resource(created.id, &caller)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..600 {
        if record.status != dual_core::status::ResourceStatus::Pending && record.spooled_rows.is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        record = server
            .get_resource(created.id, &caller)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    match record.status {
        dual_core::status::ResourceStatus::Failed => {
            let failure = record
                .failure
                .unwrap_or_else(|| panic!("a failed record says why"));
            assert_eq!(
                failure.code,
                dual_core::status::FailureCode::QueryExecutionFailed,
                "{failure:?}"
            );
        }
        // The whole result may have been read before the cut reached the connection: then every row.
        dual_core::status::ResourceStatus::Ready => assert_eq!(record.total_count, 300_000),
        other => panic!("still {other:?} 30 s after the cut"),
    }
}
