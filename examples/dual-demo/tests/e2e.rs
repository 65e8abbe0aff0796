//! End to end over real sockets on 127.0.0.1: an rmcp client against `serve`'s router, the REST API
//! through dual-client, SQLite read directly for comparison, and the binary (`--stdio`, and its start-up
//! failure with an unreachable store). Needs nothing but the toolchain.

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use dual_client::{DualResponseClient, FetchAllOptions, FetchOptions, Sort, SortOrder};
use dual_core::Row;
use dual_demo::dataset::{self, DatasetSize};
use dual_demo::mcp_client;
use dual_demo::serve::{self, Running, ServeOptions};
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ErrorCode, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::time::timeout;

/// Upper bound of any one test's work.
const LIMIT: Duration = Duration::from_secs(90);

struct Fixture {
    running: Running,
    mcp: RunningService<RoleClient, ()>,
    dir: PathBuf,
}

impl Fixture {
    async fn start() -> Self {
        let dir = temp_dir("e2e");
        let db = dir.join("small.sqlite");
        dataset::ensure(&db, DatasetSize::SMALL).expect("dataset");
        let mut options = ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
        options.db = Some(db);
        options.sample_size = 10;
        let running = serve::start(&options).await.expect("server starts");
        let mcp = mcp_client::connect(&running.mcp_url())
            .await
            .expect("MCP client connects");
        Self { running, mcp, dir }
    }

    fn db(&self) -> PathBuf {
        self.dir.join("small.sqlite")
    }

    async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        self.mcp
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
            .await
            .expect("tools/call answers")
    }

    async fn stop(self) {
        let _ = self.mcp.cancel().await;
        self.running.shutdown().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn temp_dir(name: &str) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "dual-demo-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `sql` on the file directly and returns the rows as JSON objects.
fn sqlite_rows(db: &Path, sql: &str) -> Vec<Row> {
    let conn = rusqlite::Connection::open(db).expect("open");
    let mut stmt = conn.prepare(sql).expect("prepare");
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let rows = stmt
        .query_map([], |row| {
            let mut out = Row::new();
            for (i, name) in names.iter().enumerate() {
                let value = match row.get_ref(i)? {
                    rusqlite::types::ValueRef::Null => Value::Null,
                    rusqlite::types::ValueRef::Integer(n) => json!(n),
                    rusqlite::types::ValueRef::Real(f) => json!(f),
                    rusqlite::types::ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                    rusqlite::types::ValueRef::Blob(_) => Value::Null,
                };
                out.insert(name.clone(), value);
            }
            Ok(out)
        })
        .expect("query");
    rows.collect::<Result<_, _>>().expect("rows")
}

fn table_digest(db: &Path) -> (Vec<Row>, Vec<Row>) {
    (
        sqlite_rows(db, "SELECT COUNT(*) AS n, SUM(enrollment) AS e FROM institutions"),
        sqlite_rows(
            db,
            "SELECT (SELECT COUNT(*) FROM degrees_awarded) AS n, (SELECT group_concat(name) FROM sqlite_master) AS s",
        ),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_with_the_output_schema() {
    timeout(LIMIT, async {
        let fixture = Fixture::start().await;
        let tools = fixture.mcp.list_all_tools().await.expect("tools/list");
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort_unstable();
        assert_eq!(names, ["query", "search_institutions"]);
        for tool in &tools {
            assert_eq!(
                tool.output_schema.as_deref(),
                Some(&*dual_rmcp::output_schema()),
                "{}",
                tool.name
            );
        }
        let templates = fixture
            .mcp
            .list_resource_templates(None)
            .await
            .expect("templates");
        assert_eq!(
            templates.resource_templates[0].uri_template,
            "resource://{id}{?offset,limit,sort}"
        );
        fixture.stop().await;
    })
    .await
    .expect("within the time limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_then_fetch_every_row_over_rest_matches_sqlite() {
    timeout(LIMIT, async {
        let fixture = Fixture::start().await;
        let sql = "SELECT d.id, i.name, i.state, d.year, d.field, d.count FROM degrees_awarded d \
                   JOIN institutions i ON i.id = d.institution_id WHERE d.year >= 2020 ORDER BY d.id";
        let result = fixture.call("query", json!({ "sql": sql })).await;
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));

        // structuredContent validates against the declared output schema.
        let schema = Value::Object((*dual_rmcp::output_schema()).clone());
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let structured = result.structured_content.clone().expect("structuredContent");
        assert!(validator.is_valid(&structured), "{structured}");

        let expected = sqlite_rows(&fixture.db(), sql);
        let client = DualResponseClient::new();
        let parsed = dual_rmcp::parse_call_tool_result(&result, &client).expect("a dual response");
        assert_eq!(parsed.total_count(), Some(expected.len() as u64));
        assert_eq!(parsed.sample(), &expected[..10]);
        assert_eq!(
            parsed.resource_url(),
            format!(
                "http://{}/resources/{}",
                fixture.running.addr,
                structured["resource"]["uri"]
                    .as_str()
                    .and_then(|u| u.strip_prefix("resource://"))
                    .unwrap_or_default()
            )
        );
        let types: Vec<String> = parsed
            .columns()
            .iter()
            .map(|c| c.column_type.to_string())
            .collect();
        assert_eq!(
            types,
            ["integer", "string", "string", "integer", "string", "integer"]
        );

        // Every row, through the streamed export, and through pages.
        let all = parsed.fetch_all(FetchAllOptions::new()).await.expect("fetch_all");
        assert_eq!(all, expected);
        let paged = parsed
            .fetch_all(FetchAllOptions::new().batch_size(97).parallelism(3))
            .await
            .expect("fetch_all in pages");
        assert_eq!(paged, expected);

        // A sorted page re-executes the query with ORDER BY.
        let page = parsed
            .fetch(
                FetchOptions::new()
                    .limit(5)
                    .sort(Sort::new("count", SortOrder::Desc)),
            )
            .await
            .expect("a sorted page");
        let mut counts: Vec<i64> = expected.iter().filter_map(|r| r["count"].as_i64()).collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let got: Vec<i64> = page.data.iter().filter_map(|r| r["count"].as_i64()).collect();
        assert_eq!(got, counts[..5]);
        assert!(page.has_next);
        fixture.stop().await;
    })
    .await
    .expect("within the time limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_read_serves_pages_of_the_link() {
    timeout(LIMIT, async {
        let fixture = Fixture::start().await;
        let result = fixture.call("search_institutions", json!({"state": "CA"})).await;
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        let link = result
            .content
            .iter()
            .find_map(|c| c.as_resource_link())
            .expect("a resource_link block")
            .clone();
        assert_eq!(link.mime_type.as_deref(), Some("application/json"));
        let expected = sqlite_rows(
            &fixture.db(),
            "SELECT id, name, city, state, control, level, enrollment, founded FROM institutions \
             WHERE state = 'CA' ORDER BY id",
        );
        assert!(
            expected.len() > 3,
            "the small dataset has Californian institutions"
        );

        let read = fixture
            .mcp
            .read_resource(ReadResourceRequestParams::new(format!(
                "{}?offset=1&limit=2",
                link.uri
            )))
            .await
            .expect("resources/read");
        let [ResourceContents::TextResourceContents { text, .. }] = read.contents.as_slice() else {
            panic!("one text content expected: {read:?}");
        };
        let page: Value = serde_json::from_str(text).expect("JSON page");
        assert_eq!(page["total_count"], expected.len());
        assert_eq!(
            (page["offset"].as_u64(), page["returned_count"].as_u64()),
            (Some(1), Some(2))
        );
        assert_eq!(page["data"], json!(expected[1..3]));
        assert_eq!(page["next_offset"], 3);

        let missing = fixture
            .mcp
            .read_resource(ReadResourceRequestParams::new(
                "resource://01ARZ3NDEKTSV4RRFFQ69G5FAV",
            ))
            .await
            .expect_err("unknown resource");
        let ServiceError::McpError(error) = missing else {
            panic!("an MCP error expected: {missing:?}");
        };
        assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
        fixture.stop().await;
    })
    .await
    .expect("within the time limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_sql_is_an_error_result_with_sqlites_message() {
    timeout(LIMIT, async {
        let fixture = Fixture::start().await;
        let result = fixture
            .call("query", json!({"sql": "SELECT nope FROM institutions"}))
            .await;
        assert_eq!(result.is_error, Some(true));
        assert!(
            text_of(&result).contains("no such column: nope"),
            "{}",
            text_of(&result)
        );
        assert!(result.structured_content.is_none());

        let result = fixture
            .call("query", json!({"sql": "SELEC * FROM institutions"}))
            .await;
        assert_eq!(result.is_error, Some(true));
        assert!(text_of(&result).contains("SELECT"), "{}", text_of(&result));

        let result = fixture.call("query", json!({})).await;
        assert_eq!(result.is_error, Some(true));
        assert!(text_of(&result).contains("sql"), "{}", text_of(&result));

        let result = fixture
            .call("search_institutions", json!({"control": "secret"}))
            .await;
        assert_eq!(result.is_error, Some(true));
        assert!(text_of(&result).contains("control"), "{}", text_of(&result));
        fixture.stop().await;
    })
    .await
    .expect("within the time limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_statements_are_refused_and_change_nothing() {
    timeout(LIMIT, async {
        let fixture = Fixture::start().await;
        let before = table_digest(&fixture.db());
        for sql in [
            "DELETE FROM institutions",
            "DROP TABLE institutions",
            "INSERT INTO institutions (id, name, city, state, control, level, enrollment, founded) \
             VALUES (999999, 'x', 'x', 'NJ', 'public', '4-year', 1, 2000)",
            "UPDATE institutions SET enrollment = 0",
            "WITH doomed AS (SELECT id FROM institutions) DELETE FROM institutions WHERE id IN doomed",
            "SELECT 1; DELETE FROM institutions",
            "SELECT 1; DROP TABLE degrees_awarded;",
        ] {
            let result = fixture.call("query", json!({ "sql": sql })).await;
            assert_eq!(result.is_error, Some(true), "{sql}");
            let text = text_of(&result);
            assert!(
                text.contains("read-only") || text.contains("one statement"),
                "{sql}: {text}"
            );
        }
        assert_eq!(table_digest(&fixture.db()), before);
        let result = fixture
            .call("query", json!({"sql": "SELECT COUNT(*) AS n FROM institutions"}))
            .await;
        let structured = result.structured_content.expect("structuredContent");
        assert_eq!(structured["results"][0]["n"], DatasetSize::SMALL.institutions);
        fixture.stop().await;
    })
    .await
    .expect("within the time limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_resources_are_404_over_rest() {
    timeout(LIMIT, async {
        let fixture = Fixture::start().await;
        let client = DualResponseClient::new();
        let error = client
            .resource(&format!(
                "http://{}/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV",
                fixture.running.addr
            ))
            .expect("a resource handle")
            .fetch(FetchOptions::new())
            .await
            .expect_err("unknown resource");
        assert!(error.is_not_found(), "{error}");
        fixture.stop().await;
    })
    .await
    .expect("within the time limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_mode_answers_initialize() {
    let dir = temp_dir("stdio");
    let db = dir.join("small.sqlite");
    dataset::ensure(&db, DatasetSize::SMALL).expect("dataset");
    let mut child = support::stdio::command(&db, "warn")
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let initialize = support::stdio::initialize_line("e2e");
    let answer = timeout(LIMIT, async {
        stdin.write_all(initialize.as_bytes()).await.expect("write");
        stdin.flush().await.expect("flush");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).await.expect("read");
        line
    })
    .await
    .expect("an answer within the time limit");
    let answer: Value = serde_json::from_str(&answer).expect("a JSON-RPC line");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["serverInfo"]["name"], "dual-demo");
    assert!(answer["result"]["capabilities"]["tools"].is_object(), "{answer}");
    assert!(
        answer["result"]["capabilities"]["resources"].is_object(),
        "{answer}"
    );
    drop(stdin);
    let _ = child.kill().await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_writes_every_row_as_csv() {
    timeout(LIMIT, async {
        let fixture = Fixture::start().await;
        let csv = fixture.dir.join("report.csv");
        let sql = "SELECT id, name, state FROM institutions ORDER BY id";
        dual_demo::report::run(&dual_demo::report::ReportOptions {
            mcp: fixture.running.mcp_url(),
            sql: sql.to_owned(),
            csv: Some(csv.clone()),
            rows: 5,
            token: None,
        })
        .await
        .expect("the report runs");
        let text = std::fs::read_to_string(&csv).expect("the CSV file");
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("id,name,state"));
        let expected = sqlite_rows(&fixture.db(), sql);
        assert_eq!(lines.clone().count(), expected.len());
        let first = &expected[0];
        let name = first["name"].as_str().unwrap_or_default();
        let quoted = if name.contains(',') {
            format!("\"{name}\"")
        } else {
            name.to_owned()
        };
        assert_eq!(
            lines.next(),
            Some(
                format!(
                    "{},{quoted},{}",
                    first["id"],
                    first["state"].as_str().unwrap_or_default()
                )
                .as_str()
            )
        );

        let refused = dual_demo::report::run(&dual_demo::report::ReportOptions {
            mcp: fixture.running.mcp_url(),
            sql: "DELETE FROM institutions".to_owned(),
            csv: None,
            rows: 5,
            token: None,
        })
        .await
        .expect_err("a refused query fails the report");
        assert!(refused.to_string().contains("read-only"), "{refused}");
        fixture.stop().await;
    })
    .await
    .expect("within the time limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_store_fails_start_up_with_a_redacted_message() {
    timeout(LIMIT, async {
        let dir = temp_dir("unreachable-store");
        let db = dir.join("small.sqlite");
        dataset::ensure(&db, DatasetSize::SMALL).expect("dataset");
        let refused = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = refused.local_addr().expect("addr").port();
        drop(refused);
        for store in [
            format!("redis://:hunter2@127.0.0.1:{port}/0"),
            format!("postgres://postgres:hunter2@127.0.0.1:{port}/test"),
        ] {
            let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_dual-demo"))
                .args([
                    "serve",
                    "--addr",
                    "127.0.0.1:0",
                    "--store-timeout-ms",
                    "500",
                    "--db",
                ])
                .arg(&db)
                .args(["--store", &store])
                .env("NO_COLOR", "1")
                .kill_on_drop(true)
                .output()
                .await
                .expect("the binary runs");
            assert!(!output.status.success(), "{store}");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains("cannot open the"), "{stderr}");
            assert!(stderr.contains(":***@127.0.0.1"), "{stderr}");
            assert!(!stderr.contains("hunter2"), "{stderr}");
        }
        let _ = std::fs::remove_dir_all(dir);
    })
    .await
    .expect("within the time limit");
}

/// A query that outlives `--pending-after-ms`: the tool result says `pending`, and `report` waits
/// for the query (its spinner) and then fetches every row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_waits_for_a_pending_query_then_fetches_every_row() {
    timeout(LIMIT, async {
        let dir = temp_dir("pending");
        let db = dir.join("small.sqlite");
        dataset::ensure(&db, DatasetSize::SMALL).expect("dataset");
        let mut options = ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
        options.db = Some(db);
        options.pending_after = Some(Duration::from_millis(1));
        let running = serve::start(&options).await.expect("server starts");
        // About two million steps of SQLite: long past a millisecond, short for a test.
        let sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) \
                   SELECT x FROM c WHERE x % 10000 = 0";
        let mcp = mcp_client::connect(&running.mcp_url())
            .await
            .expect("MCP client connects");
        let arguments = json!({ "sql": sql }).as_object().cloned().unwrap_or_default();
        let result = mcp
            .call_tool(CallToolRequestParams::new("query").with_arguments(arguments))
            .await
            .expect("tools/call answers");
        let structured = result.structured_content.clone().unwrap_or_default();
        assert_eq!(structured["metadata"]["status"], "pending", "{structured}");
        let _ = mcp.cancel().await;

        let csv = dir.join("pending.csv");
        dual_demo::report::run(&dual_demo::report::ReportOptions {
            mcp: running.mcp_url(),
            sql: sql.to_owned(),
            csv: Some(csv.clone()),
            rows: 5,
            token: None,
        })
        .await
        .expect("the report waits for the query and runs");
        let text = std::fs::read_to_string(&csv).expect("the CSV file");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.first(), Some(&"x"));
        assert_eq!(lines.len(), 201, "the header and every row");
        assert_eq!(lines.last(), Some(&"2000000"));
        running.shutdown().await;
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await
    .expect("within the time limit");
}
