//! End to end over real sockets on 127.0.0.1: an rmcp client against `serve`'s router, the REST API
//! through dual-client, SQLite read directly for comparison, and the binary (`--stdio`, and its start-up
//! failure with an unreachable store). Needs nothing but the toolchain.

mod support;

use std::path::Path;
use std::time::Duration;

use dual_client::{DualResponseClient, FetchAllOptions, FetchOptions, Sort, SortOrder};
use dual_core::Row;
use dual_response_server::ipeds::dataset::DatasetSize;
use dual_response_server::mcp_client;
use dual_response_server::serve::ServeOptions;
use rmcp::ServiceError;
use rmcp::model::{ErrorCode, ReadResourceRequestParams, ResourceContents};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use support::in_process::InProcess;
use support::{TempDb, call, query, serve_command, start_up_error, text_of, within};

/// Upper bound of any one test's work.
const LIMIT: Duration = Duration::from_secs(90);

/// Runs `test` within [`LIMIT`] against a server of 10-row samples and a connected MCP client.
async fn with_mcp(test: impl AsyncFnOnce(&InProcess, &RunningService<RoleClient, ()>)) {
    let configure = |o: &mut ServeOptions| o.sample_size = 10;
    InProcess::run(LIMIT, configure, async |server| {
        let mcp = mcp_client::connect(&server.mcp_url())
            .await
            .expect("MCP client connects");
        test(server, &mcp).await;
        let _ = mcp.cancel().await;
    })
    .await;
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
    with_mcp(async |_server, mcp| {
        let tools = mcp.list_all_tools().await.expect("tools/list");
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort_unstable();
        assert_eq!(names, ["query", "refine", "search_institutions"]);
        for tool in &tools {
            assert_eq!(
                tool.output_schema.as_deref(),
                Some(&*dual_rmcp::tool_result::output_schema()),
                "{}",
                tool.name
            );
        }
        let templates = mcp.list_resource_templates(None).await.expect("templates");
        assert_eq!(
            templates.resource_templates[0].uri_template,
            "resource://{id}{?offset,limit,sort}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_then_fetch_every_row_over_rest_matches_sqlite() {
    with_mcp(async |server, mcp| {
        let sql = "SELECT d.id, i.name, i.state, d.year, d.field, d.count FROM degrees_awarded d \
                   JOIN institutions i ON i.id = d.institution_id WHERE d.year >= 2020 ORDER BY d.id";
        let result = call(mcp, "query", json!({ "sql": sql })).await;
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));

        // structuredContent validates against the declared output schema.
        let schema = Value::Object((*dual_rmcp::tool_result::output_schema()).clone());
        let validator = jsonschema::validator_for(&schema).expect("schema compiles");
        let structured = result.structured_content.clone().expect("structuredContent");
        assert!(validator.is_valid(&structured), "{structured}");

        let expected = sqlite_rows(&server.db(), sql);
        let client = DualResponseClient::new();
        let parsed = dual_rmcp::client::parse_call_tool_result(&result, &client).expect("a dual response");
        assert_eq!(parsed.total_count(), Some(expected.len() as u64));
        assert_eq!(parsed.sample(), &expected[..10]);
        assert_eq!(
            parsed.resource_url(),
            format!(
                "http://{}/resources/{}",
                server.addr(),
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

        // The column profile, fetched by the client, agrees with SQLite over the same SQL.
        let profile = parsed.profile().await.expect("the profile");
        assert!(
            profile.complete && profile.rows == expected.len() as u64,
            "{profile:?}"
        );
        if let Some(carried) = structured.get("profile") {
            assert_eq!(
                carried,
                &serde_json::to_value(&profile).unwrap_or_default(),
                "the tool result's profile"
            );
        }
        let truth = sqlite_rows(
            &server.db(),
            &format!(
                "SELECT COUNT(DISTINCT state) AS states, MIN(year) AS first, MAX(year) AS last, \
                 AVG(count) AS mean, MIN(name) AS least_name, COUNT(DISTINCT field) AS fields FROM ({sql})"
            ),
        );
        let truth = &truth[0];
        let column = |name: &str| {
            profile
                .columns
                .iter()
                .find(|c| c.name == name)
                .unwrap_or_else(|| panic!("no {name} in {profile:?}"))
        };
        assert_eq!(Some(column("state").distinct), truth["states"].as_u64());
        assert_eq!(Some(column("field").distinct), truth["fields"].as_u64());
        assert_eq!(column("year").min.as_ref(), Some(&truth["first"]));
        assert_eq!(column("year").max.as_ref(), Some(&truth["last"]));
        assert_eq!(column("name").min.as_ref(), Some(&truth["least_name"]));
        let (mean, exact) = (
            column("count").mean.unwrap_or_default(),
            truth["mean"].as_f64().unwrap_or_default(),
        );
        assert!((mean - exact).abs() <= exact.abs() * 1e-12, "{mean} {exact}");
        assert_eq!(column("id").nulls, 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refine_answers_follow_ups_from_the_stored_rows_over_mcp_and_rest() {
    with_mcp(async |server, mcp| {
        let sql = "SELECT d.id, i.state, i.control, d.year, d.count FROM degrees_awarded d \
                   JOIN institutions i ON i.id = d.institution_id WHERE d.year >= 2020";
        let result = call(mcp, "query", json!({ "sql": sql })).await;
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        let uri = result.structured_content.as_ref().expect("structuredContent")["resource"]["uri"]
            .as_str()
            .expect("a uri")
            .to_owned();

        // Over MCP: the same answer as SQLite gives for the same question of the same rows.
        let follow_up = "SELECT state, control, COUNT(*) AS n, SUM(count) AS total FROM result \
                         GROUP BY state, control ORDER BY total DESC, state, control";
        let refined = call(mcp, "refine", json!({ "uri": uri, "sql": follow_up })).await;
        assert_eq!(refined.is_error, Some(false), "{}", text_of(&refined));
        let client = DualResponseClient::new();
        let parsed = dual_rmcp::client::parse_call_tool_result(&refined, &client).expect("a dual response");
        let expected = sqlite_rows(
            &server.db(),
            &format!(
                "SELECT state, control, COUNT(*) AS n, SUM(count) AS total FROM ({sql}) \
                 GROUP BY state, control ORDER BY total DESC, state, control"
            ),
        );
        assert_eq!(parsed.total_count(), Some(expected.len() as u64));
        let all = parsed.fetch_all(FetchAllOptions::new()).await.expect("fetch_all");
        assert_eq!(all, expected);

        // A SQL error names the engine's complaint and the columns of `result`.
        let wrong = call(
            mcp,
            "refine",
            json!({ "uri": uri, "sql": "SELECT nope FROM result" }),
        )
        .await;
        assert_eq!(wrong.is_error, Some(true));
        let text = text_of(&wrong);
        assert!(
            text.contains("no such column: nope") && text.contains("state (string)"),
            "{text}"
        );

        // Over REST: POST /{id}/query answers 201 with the new result and its Location.
        let id = uri.strip_prefix("resource://").expect("resource://");
        let url = format!("http://{}/resources/{id}/query", server.addr());
        let http = post_json(
            &url,
            &json!({"sql": "SELECT COUNT(*) AS n FROM result"}).to_string(),
        )
        .await;
        assert_eq!(http.0, 201, "{}", http.2);
        let body: Value = serde_json::from_str(&http.2).expect("JSON");
        let total = sqlite_rows(&server.db(), &format!("SELECT COUNT(*) AS n FROM ({sql})"));
        assert_eq!(body["results"][0]["n"], total[0]["n"], "{body}");
        assert!(
            http.1.is_some_and(|location| location.contains("/resources/")),
            "a Location"
        );
        let refused = post_json(&url, r#"{"sql": "DELETE FROM result"}"#).await;
        assert_eq!(refused.0, 400, "{}", refused.2);
        assert!(refused.2.contains("invalid_request"), "{}", refused.2);
    })
    .await;
}

/// `POST url` with a JSON `body`: the status, the `Location` header and the body.
async fn post_json(url: &str, body: &str) -> (u16, Option<String>, String) {
    let request = hyper::Request::post(url)
        .header("content-type", "application/json")
        .body(http_body_util::Full::new(bytes::Bytes::from(body.to_owned())))
        .expect("a request");
    let reply = support::http::exchange(request).await;
    let location = reply
        .headers
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    (reply.status.as_u16(), location, reply.text())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_read_serves_pages_of_the_link() {
    with_mcp(async |server, mcp| {
        let result = call(mcp, "search_institutions", json!({"state": "CA"})).await;
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        let link = result
            .content
            .iter()
            .find_map(|c| c.as_resource_link())
            .expect("a resource_link block")
            .clone();
        assert_eq!(link.mime_type.as_deref(), Some("application/json"));
        let expected = sqlite_rows(
            &server.db(),
            "SELECT id, name, city, state, control, level, enrollment, founded FROM institutions \
             WHERE state = 'CA' ORDER BY id",
        );
        assert!(
            expected.len() > 3,
            "the small dataset has Californian institutions"
        );

        let read = mcp
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

        let missing = mcp
            .read_resource(ReadResourceRequestParams::new(
                "resource://01ARZ3NDEKTSV4RRFFQ69G5FAV",
            ))
            .await
            .expect_err("unknown resource");
        let ServiceError::McpError(error) = missing else {
            panic!("an MCP error expected: {missing:?}");
        };
        assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_sql_is_an_error_result_with_sqlites_message() {
    with_mcp(async |_server, mcp| {
        let result = call(mcp, "query", json!({"sql": "SELECT nope FROM institutions"})).await;
        assert_eq!(result.is_error, Some(true));
        assert!(
            text_of(&result).contains("no such column: nope"),
            "{}",
            text_of(&result)
        );
        assert!(result.structured_content.is_none());

        let result = call(mcp, "query", json!({"sql": "SELEC * FROM institutions"})).await;
        assert_eq!(result.is_error, Some(true));
        assert!(text_of(&result).contains("SELECT"), "{}", text_of(&result));

        let result = call(mcp, "query", json!({})).await;
        assert_eq!(result.is_error, Some(true));
        assert!(text_of(&result).contains("sql"), "{}", text_of(&result));

        let result = call(mcp, "search_institutions", json!({"control": "secret"})).await;
        assert_eq!(result.is_error, Some(true));
        assert!(text_of(&result).contains("control"), "{}", text_of(&result));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_statements_are_refused_and_change_nothing() {
    with_mcp(async |server, mcp| {
        let before = table_digest(&server.db());
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
            let result = call(mcp, "query", json!({ "sql": sql })).await;
            assert_eq!(result.is_error, Some(true), "{sql}");
            let text = text_of(&result);
            assert!(
                text.contains("only reads") && text.contains("(sql_"),
                "says why, with its code, and what to send: {sql}: {text}"
            );
        }
        assert_eq!(table_digest(&server.db()), before);
        let result = call(
            mcp,
            "query",
            json!({"sql": "SELECT COUNT(*) AS n FROM institutions"}),
        )
        .await;
        let structured = result.structured_content.expect("structuredContent");
        assert_eq!(structured["results"][0]["n"], DatasetSize::SMALL.institutions);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_resources_are_404_over_rest() {
    with_mcp(async |server, _mcp| {
        let client = DualResponseClient::new();
        let error = client
            .resource(&format!(
                "http://{}/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV",
                server.addr()
            ))
            .expect("a resource handle")
            .fetch(FetchOptions::new())
            .await
            .expect_err("unknown resource");
        assert!(error.is_not_found(), "{error}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_mode_answers_initialize() {
    let db = TempDb::new();
    let (mut child, stdin, answer) =
        within(LIMIT, support::stdio::initialized(&db.path(), "warn", "e2e")).await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["serverInfo"]["name"], "dual-demo");
    assert!(answer["result"]["capabilities"]["tools"].is_object(), "{answer}");
    assert!(
        answer["result"]["capabilities"]["resources"].is_object(),
        "{answer}"
    );
    drop(stdin);
    let _ = child.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_writes_every_row_as_csv() {
    with_mcp(async |server, _mcp| {
        let csv = server.dir().join("report.csv");
        let sql = "SELECT id, name, state FROM institutions ORDER BY id";
        server
            .report(sql, Some(csv.clone()), None)
            .await
            .expect("the report runs");
        let text = std::fs::read_to_string(&csv).expect("the CSV file");
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("id,name,state"));
        let expected = sqlite_rows(&server.db(), sql);
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

        let refused = server
            .report("DELETE FROM institutions", None, None)
            .await
            .expect_err("a refused query fails the report");
        assert!(refused.to_string().contains("sql_not_a_query"), "{refused}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_store_fails_start_up_with_a_redacted_message() {
    within(LIMIT, async {
        let db = TempDb::new();
        let refused = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = refused.local_addr().expect("addr").port();
        drop(refused);
        for store in [
            format!("redis://:hunter2@127.0.0.1:{port}/0"),
            format!("postgres://postgres:hunter2@127.0.0.1:{port}/test"),
        ] {
            let mut refused = serve_command(&db.path());
            refused
                .args(["--store-timeout-ms", "500", "--store", &store])
                .env("NO_COLOR", "1");
            let stderr = start_up_error(refused).await;
            assert!(stderr.contains("cannot open the"), "{stderr}");
            assert!(stderr.contains(":***@127.0.0.1"), "{stderr}");
            assert!(!stderr.contains("hunter2"), "{stderr}");
        }
    })
    .await;
}

/// A query that outlives `--pending-after-ms`: the tool result says `pending`, and `report` waits
/// for the query (its spinner) and then fetches every row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_waits_for_a_pending_query_then_fetches_every_row() {
    let configure = |o: &mut ServeOptions| o.pending_after = Some(Duration::from_millis(1));
    InProcess::run(LIMIT, configure, async |server| {
        // About two million steps of SQLite: long past a millisecond, short for a test.
        let sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) \
                   SELECT x FROM c WHERE x % 10000 = 0";
        let mcp = mcp_client::connect(&server.mcp_url())
            .await
            .expect("MCP client connects");
        let result = query(&mcp, sql).await;
        let structured = result.structured_content.clone().unwrap_or_default();
        assert_eq!(structured["metadata"]["status"], "pending", "{structured}");
        let _ = mcp.cancel().await;

        let csv = server.dir().join("pending.csv");
        server
            .report(sql, Some(csv.clone()), None)
            .await
            .expect("the report waits for the query and runs");
        let text = std::fs::read_to_string(&csv).expect("the CSV file");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.first(), Some(&"x"));
        assert_eq!(lines.len(), 201, "the header and every row");
        assert_eq!(lines.last(), Some(&"2000000"));
    })
    .await;
}
