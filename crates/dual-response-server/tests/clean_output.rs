//! Clean output from the real binary (issue 21, findings 6–8): executor text with a newline and ESC
//! never forges a log line nor reaches stderr raw; `HEAD /{id}/data` answers from the checks alone;
//! CSV exports neutralise formulas; the MCP text table escapes control characters; an export that
//! fails before its first row is an error status, not a closed connection. Issue 42, item 6: `ESC`
//! and a right-to-left override in the model's SQL (a column alias, a comment) reach the summary,
//! the names, `resources/list`, the REST metadata and `dual-response report`'s terminal output escaped;
//! the report's CSV file keeps the data exact.

mod support;

use http::{Method, StatusCode, header};
use rmcp::model::ReadResourceRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;
use support::http::Http;
use support::{Instance, LIMIT, id_of, mcp, query, rest_client, text_of, within};

/// The events of the hostile query's failures, each of which must log the hostile text escaped.
const FAILURES: [&str; 3] = [
    "tool call failed",
    "resources/read failed",
    "query execution failed",
];
/// A JSON path SQLite refuses, and whose text it repeats in its error: a newline, a forged line, a
/// screen clear.
const HOSTILE_PATH: &str = "'x'||char(10)||'FORGED'||char(27)||'[2J'";

/// A server of live resources (snapshots off, so every page and export runs the SQL again), an MCP
/// session with it and a REST client of it.
async fn live() -> (Instance, RunningService<RoleClient, ()>, Http) {
    let instance = Instance::start_memory(&["--snapshot-max-mb", "0"]).await;
    let client = mcp(&instance).await;
    let http = Http::new(instance.addr());
    (instance, client, http)
}

/// Runs `sql` through the `query` tool; the resource id of its (successful) result.
async fn create(instance: &Instance, client: &RunningService<RoleClient, ()>, sql: &str) -> (String, String) {
    let result = query(client, sql).await;
    assert_eq!(result.is_error, Some(false), "{sql}: {}", text_of(&result));
    let parsed =
        dual_rmcp::client::parse_call_tool_result(&result, &rest_client(instance)).expect("a dual response");
    let uri = parsed
        .resource_uri()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("resource://{}", id_of(&parsed)));
    (id_of(&parsed), uri)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn executor_text_with_a_newline_and_esc_never_forges_a_log_line() {
    within(LIMIT, async {
        let (instance, client, http) = live().await;

        // The tool call itself fails (its sample runs the path).
        let failed = query(
            &client,
            &format!("SELECT json_extract('{{}}', {HOSTILE_PATH}) AS v"),
        )
        .await;
        assert_eq!(failed.is_error, Some(true), "{}", text_of(&failed));

        // A live resource whose first 20 rows are fine (the sample), every later one fails. No ORDER
        // BY: the count (`SELECT COUNT(*) FROM (…)`) is flattened and never evaluates the column.
        let (id, uri) = create(
            &instance,
            &client,
            &format!(
                "SELECT id, CASE WHEN id > 20 THEN json_extract('{{}}', {HOSTILE_PATH}) ELSE name END AS v \
                 FROM institutions"
            ),
        )
        .await;
        let read = client
            .read_resource(ReadResourceRequestParams::new(format!("{uri}?offset=30&limit=5")))
            .await;
        assert!(read.is_err(), "resources/read of failing rows: {read:?}");
        let page = http.page(&id, &serde_json::json!({"offset": 30})).await;
        assert_eq!(page.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", page.text());
        let export = http
            .send(
                http.request(Method::GET, &format!("/resources/{id}/data"), None),
                "",
            )
            .await;
        assert_eq!(
            export.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{}",
            export.text()
        );
        assert_eq!(export.json()["error"], "query_failed");
        let _ = client.cancel().await;

        // The events are logged as they happen; give stderr's reader a moment to catch up.
        let mut log = instance.log();
        for _ in 0..50 {
            if FAILURES.iter().all(|event| log.contains(event)) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            log = instance.log();
        }
        assert!(!log.contains('\u{1b}'), "a raw ESC reached stderr:\n{log}");
        for line in log.lines() {
            assert!(!line.starts_with("FORGED"), "a forged line:\n{log}");
            if line.contains("FORGED") {
                assert!(line.contains(r"\nFORGED\u{1b}[2J"), "escaped in place: {line}");
            }
        }
        dual_testkit::logs::assert_each_line_escapes(&log, &FAILURES, r"\nFORGED\u{1b}[2J");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_csv_table_and_early_failures_over_the_wire() {
    within(LIMIT, async {
        let (instance, client, http) = live().await;

        // HEAD /{id}/data: the GET's headers, no body, no access counted.
        let (id, _) = create(
            &instance,
            &client,
            "SELECT id, name FROM institutions ORDER BY id",
        )
        .await;
        let accesses = || async {
            let reply = http
                .send(http.request(Method::GET, &format!("/resources/{id}"), None), "")
                .await;
            reply.json()["access_count"].as_u64().unwrap_or_default()
        };
        let first = accesses().await;
        let formats = [
            "text/csv",
            "application/x-ndjson",
            "application/vnd.apache.arrow.stream",
        ];
        for accept in formats {
            let request = |method| {
                http.request(method, &format!("/resources/{id}/data?sort=name:desc"), None)
                    .header(header::ACCEPT, accept)
                    .header(header::ACCEPT_ENCODING, "gzip")
            };
            let head = http.send(request(Method::HEAD), "").await;
            assert_eq!(head.status, StatusCode::OK, "{accept}");
            assert!(head.body.is_empty());
            let get = http.send(request(Method::GET), "").await;
            assert_eq!(get.status, StatusCode::OK, "{accept}");
            assert!(!get.body.is_empty());
            for name in [
                header::CONTENT_TYPE,
                header::CONTENT_ENCODING,
                header::CACHE_CONTROL,
                header::VARY,
            ] {
                assert_eq!(
                    head.headers.get(&name),
                    get.headers.get(&name),
                    "{accept}: {name}"
                );
            }
        }
        assert_eq!(
            accesses().await,
            first + formats.len() as u64 + 1,
            "the GETs and this metadata read counted, the HEADs did not"
        );
        let missing = http
            .send(
                http.request(Method::HEAD, "/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV/data", None),
                "",
            )
            .await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);

        // CSV: formulas neutralised in values and headers; a JSON number stays a number.
        let (id, _) = create(
            &instance,
            &client,
            "SELECT '=HYPERLINK(\"https://evil.example\")' AS \"=f\", -5 AS n, '-5' AS s, '@x' AS a",
        )
        .await;
        let csv = http
            .send(
                http.request(Method::GET, &format!("/resources/{id}/data"), None)
                    .header(header::ACCEPT, "text/csv"),
                "",
            )
            .await;
        assert_eq!(
            csv.text(),
            "'=f,n,s,a\r\n\"'=HYPERLINK(\"\"https://evil.example\"\")\",-5,'-5,'@x\r\n"
        );

        // The MCP text table: NUL and ESC escaped, one line per row.
        let result = query(
            &client,
            "SELECT 'a'||char(0)||'b'||char(27)||'[2J'||char(9)||'c' AS v",
        )
        .await;
        let table = result
            .content
            .get(1)
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert_eq!(
            table,
            r"v:string".to_owned() + "\n" + r"a\u{0}b\u{1b}[2J\tc",
            "{table:?}"
        );

        // An Arrow export whose first row does not fit its column (the sample said integer): a 500
        // with a JSON body, not a connection closed without an answer; an executor failing at once
        // the same in every format.
        let (id, _) = create(
            &instance,
            &client,
            &format!(
                "SELECT CASE WHEN id > 20 THEN 'text' ELSE id END AS v, \
                 CASE WHEN id > 40 THEN json_extract('{{}}', {HOSTILE_PATH}) ELSE 1 END AS w, name \
                 FROM institutions"
            ),
        )
        .await;
        let arrow = http
            .send(
                http.request(
                    Method::GET,
                    &format!("/resources/{id}/data?offset=30&limit=5"),
                    None,
                )
                .header(header::ACCEPT, "application/vnd.apache.arrow.stream"),
                "",
            )
            .await;
        assert_eq!(
            arrow.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{}",
            arrow.text()
        );
        assert_eq!(arrow.json()["error"], "query_failed");
        for accept in ["application/json", "application/x-ndjson", "text/csv"] {
            let reply = http
                .send(
                    http.request(Method::GET, &format!("/resources/{id}/data?offset=45"), None)
                        .header(header::ACCEPT, accept),
                    "",
                )
                .await;
            assert_eq!(
                reply.status,
                StatusCode::INTERNAL_SERVER_ERROR,
                "{accept}: {}",
                reply.text()
            );
            let body: Value = reply.json();
            assert_eq!(body["error"], "query_failed", "{accept}");
            assert!(!reply.text().contains("FORGED"), "no internals: {}", reply.text());
        }
        let _ = client.cancel().await;
    })
    .await;
}

/// The model's SQL with a terminal escape in a column alias and in a comment, and a right-to-left
/// override in a value and in the comment (the demo names a result after its SQL, comments included).
/// Short enough (under 80 characters) for the demo's title to keep all of it.
const HOSTILE_SQL: &str = "SELECT id AS \"x\u{1b}[2J\", '\u{202e}gnp.exe' AS f FROM institutions LIMIT 3 \
                           -- \u{1b}]0;\u{7}\u{202e}";

/// Whether `text` holds a character that acts instead of showing (a line feed aside).
fn hidden(text: &str) -> bool {
    text.chars().any(|c| c != '\n' && dual_core::escape::is_hidden(c))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_and_overrides_in_the_sql_reach_every_name_escaped() {
    within(LIMIT, async {
        let (instance, client, http) = live().await;
        let result = query(&client, HOSTILE_SQL).await;
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        let content = serde_json::to_value(&result.content).expect("serialises");
        let summary = content[0]["text"].as_str().unwrap_or_default();
        let table = content[1]["text"].as_str().unwrap_or_default();
        let link_name = content[2]["name"].as_str().unwrap_or_default();
        let structured = result.structured_content.clone().unwrap_or_default();
        let structured_name = structured["resource"]["name"].as_str().unwrap_or_default();
        for (what, text) in [
            ("summary", summary),
            ("table", table),
            ("resource_link.name", link_name),
            ("structuredContent.resource.name", structured_name),
        ] {
            assert!(!hidden(text), "{what} carries a raw control: {text:?}");
        }
        let name = r#"SELECT id AS "x\u{1b}[2J", '\u{202e}gnp.exe' AS f FROM institutions LIMIT 3 -- \u{1b}]0;\u{7}\u{202e}"#;
        assert!(summary.starts_with(&format!("{name}: ")), "{summary}");
        assert_eq!(link_name, name);
        assert_eq!(structured_name, name);
        assert!(table.starts_with(r"x\u{1b}[2J:integer|f:string"), "{table}");

        // resources/list: the name, and the alias in the description.
        let listed = client.list_all_resources().await.expect("resources/list");
        let entry = listed
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("the result is listed escaped: {listed:?}"));
        let description = entry.description.clone().unwrap_or_default();
        assert!(description.contains(r"x\u{1b}[2J"), "{description}");
        assert!(!hidden(&description), "{description:?}");

        // The REST metadata names it the same; its sample is data, byte for byte.
        let parsed = dual_rmcp::client::parse_call_tool_result(&result, &rest_client(&instance)).expect("a dual response");
        let metadata = http
            .send(http.request(Method::GET, &format!("/resources/{}", id_of(&parsed)), None), "")
            .await;
        assert_eq!(metadata.json()["name"], name, "{}", metadata.text());
        assert_eq!(structured["results"][0]["f"], "\u{202e}gnp.exe", "data stays exact");
        assert!(structured["results"][0]["x\u{1b}[2J"].is_number(), "data stays exact: {structured}");
        let _ = client.cancel().await;

        // dual-response report: a terminal gets every line escaped, the CSV file the data exact.
        let printed = report(&instance, &[]).await;
        assert!(!printed.contains('\u{1b}') && !hidden(&printed), "raw controls on the terminal:\n{printed}");
        assert!(printed.contains(&format!("{name}: ")), "the summary, escaped:\n{printed}");
        assert!(printed.contains(r"x\u{1b}[2J") && printed.contains(r"\u{202e}gnp.exe"), "{printed}");
        let dir = std::env::temp_dir().join(format!("dual-demo-clean-{}-{:x}", std::process::id(), fastrand::u64(..)));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let csv = dir.join("report.csv");
        let printed = report(&instance, &["--csv", csv.to_str().expect("a UTF-8 path")]).await;
        assert!(!hidden(&printed), "{printed:?}");
        let written = std::fs::read_to_string(&csv).expect("the CSV file");
        let _ = std::fs::remove_dir_all(&dir);
        let mut lines = written.lines();
        assert_eq!(lines.next(), Some("x\u{1b}[2J,f"), "the file keeps the data exact");
        assert!(
            lines.next().is_some_and(|line| line.ends_with(",\u{202e}gnp.exe")),
            "the file keeps the data exact: {written:?}"
        );
    })
    .await;
}

/// Runs `dual-response report` with [`HOSTILE_SQL`] against `instance` (`extra` arguments after it); its
/// stdout, which must be a success.
async fn report(instance: &Instance, extra: &[&str]) -> String {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_dual-response"))
        .args(["report", "--mcp", &instance.mcp_url(), "--sql", HOSTILE_SQL])
        .args(extra)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("dual-response report runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "dual-response report failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}
