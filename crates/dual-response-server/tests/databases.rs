//! The server binary on real databases (issue 43, items 2 and 7): PostgreSQL as a read-only role
//! the test creates, MariaDB as a read-only user the test creates, and a SQLite file — the tool call,
//! every page, an export and the result's view; an unreachable database and a privileged role are
//! refused at start-up with a message naming the URL without its password.
//!
//! Needs the services of `DUAL_TEST_POSTGRES_URL` and `DUAL_TEST_MYSQL_URL` (feature `services`);
//! fails (never skips) without them.
#![cfg(feature = "services")]

mod support;

use std::time::Duration;

use dual_client::FetchAllOptions;
use dual_testkit::services::{MYSQL, POSTGRES};
use http::Method;
use mysql_async::prelude::Queryable;
use support::http::Http;
use support::{Instance, LIMIT, TempDb, rest_client, spawn_child, start_up_error, within};
use tokio::process::Command;

/// Rows of the table each test creates.
const ROWS: u64 = 250;

/// `dual-response serve --addr 127.0.0.1:0 --database URL EXTRA…`, for a database of the test's.
fn serve_database(url: &str, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dual-response"));
    command
        .args([
            "serve",
            "--pending-after-ms",
            "0",
            "--addr",
            "127.0.0.1:0",
            "--database",
            url,
        ])
        .args(extra);
    command
}

/// A name of this run's own.
fn unique(prefix: &str) -> String {
    format!("{prefix}_{}_{:08x}", std::process::id(), fastrand::u32(..))
}

/// `url` with `user` (no password) in place of its user.
fn with_user(url: &str, user: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    format!("{scheme}://{user}@{host}")
}

/// Calls `query` with `sql` through `instance`'s MCP endpoint, then checks what the person gets:
/// every row page by page, the CSV export and the view.
async fn every_surface(instance: &Instance, sql: &str) {
    let mcp = support::mcp(instance).await;
    let tools = mcp.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert!(
        names.contains(&"query") && names.contains(&"describe_schema"),
        "{names:?}"
    );
    let result = support::query(&mcp, sql).await;
    assert_eq!(result.is_error, Some(false), "{}", support::text_of(&result));
    let rest = rest_client(instance);
    let parsed = dual_rmcp::client::parse_call_tool_result(&result, &rest).expect("a dual response");
    assert_eq!(parsed.total_count(), Some(ROWS), "the exact count");
    let _ = mcp.cancel().await;
    support::written(&parsed).await;
    let rows = parsed
        .fetch_all(FetchAllOptions::new().range_rows(40))
        .await
        .expect("every page");
    assert_eq!(rows.len() as u64, ROWS);
    assert_eq!(rows[0]["id"], serde_json::json!(1));
    assert_eq!(
        rows[ROWS as usize - 1]["label"],
        serde_json::json!(format!("row {ROWS}"))
    );
    let http = Http::new(instance.addr());
    let id = support::id_of(&parsed);
    let get = |path: String| http.send(http.request(Method::GET, &path, None), "");
    let csv = get(format!("/resources/{id}/data?format=csv")).await;
    assert_eq!(csv.status, 200, "{}", csv.text());
    let csv = csv.text();
    assert_eq!(csv.lines().count() as u64, ROWS + 1, "a header and every row");
    assert!(csv.starts_with("id,label"), "{csv}");
    let view = get(format!("/resources/{id}/view")).await;
    assert_eq!(view.status, 200, "{}", view.text());
    let content_type = view.headers.get("content-type").and_then(|v| v.to_str().ok());
    assert!(
        content_type.is_some_and(|v| v.starts_with("text/html")),
        "{content_type:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_through_a_read_only_role() {
    within(LIMIT, async {
        let admin_url = POSTGRES.require();
        let (admin, connection) = tokio_postgres::connect(&admin_url, tokio_postgres::NoTls)
            .await
            .expect("PostgreSQL at DUAL_TEST_POSTGRES_URL");
        tokio::spawn(connection);
        let table = unique("dual_bin");
        let role = unique("dual_bin_reader");
        admin
            .batch_execute(&format!(
                "CREATE TABLE {table} (id integer PRIMARY KEY, label text NOT NULL);
                 INSERT INTO {table} SELECT i, 'row ' || i FROM generate_series(1, {ROWS}) AS i;
                 CREATE ROLE {role} LOGIN;
                 GRANT SELECT ON {table} TO {role};"
            ))
            .await
            .expect("the table and the role");
        let reader = with_user(&admin_url, &role);
        let instance = Instance::launch(serve_database(&reader, &[])).await;
        every_surface(&instance, &format!("SELECT id, label FROM {table} ORDER BY id")).await;
        instance.kill().await;
        // The administrator is refused, and named; with --allow-privileged-role it starts.
        let stderr = start_up_error(serve_database(&admin_url, &[])).await;
        assert!(
            stderr.contains(&dual_store::redact_secrets(&admin_url)),
            "{stderr}"
        );
        assert!(stderr.contains("superuser"), "what was found: {stderr}");
        let instance = Instance::launch(serve_database(&admin_url, &["--allow-privileged-role"])).await;
        instance.kill().await;
        admin
            .batch_execute(&format!("DROP TABLE {table}; DROP ROLE {role};"))
            .await
            .expect("clean up");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_through_a_read_only_user() {
    within(LIMIT, async {
        let admin_url = MYSQL.require();
        let mut admin = mysql_async::Conn::from_url(admin_url.as_str())
            .await
            .expect("MariaDB at DUAL_TEST_MYSQL_URL");
        let schema = unique("dual_bin");
        let user = unique("dual_bin_reader");
        for statement in [
            format!("CREATE DATABASE {schema}"),
            format!("CREATE TABLE {schema}.t (id INT PRIMARY KEY, label VARCHAR(32) NOT NULL)"),
            format!(
                "INSERT INTO {schema}.t WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n \
                 WHERE i < {ROWS}) SELECT i, CONCAT('row ', i) FROM n"
            ),
            format!("CREATE USER '{user}'@'%'"),
            format!("GRANT SELECT ON {schema}.* TO '{user}'@'%'"),
        ] {
            admin.query_drop(&statement).await.expect(&statement);
        }
        let (scheme_host, _) = admin_url.rsplit_once('/').expect("a database in the URL");
        let reader = format!("{}/{schema}", with_user(scheme_host, &user));
        let instance = Instance::launch(serve_database(&reader, &[])).await;
        every_surface(&instance, "SELECT id, label FROM t ORDER BY id").await;
        instance.kill().await;
        for statement in [
            format!("DROP DATABASE {schema}"),
            format!("DROP USER '{user}'@'%'"),
        ] {
            admin.query_drop(&statement).await.expect(&statement);
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_file_by_its_path() {
    within(LIMIT, async {
        let dir = TempDb::new();
        let path = dir.dir().join("reports.sqlite");
        let db = rusqlite::Connection::open(&path).expect("a SQLite file");
        db.execute_batch(&format!(
            "CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {ROWS})
             INSERT INTO items SELECT i, 'row ' || i FROM n;"
        ))
        .expect("the table");
        drop(db);
        let url = format!("sqlite:{}", path.display());
        let instance = Instance::launch(serve_database(&url, &[])).await;
        every_surface(&instance, "SELECT id, label FROM items ORDER BY id").await;
        instance.kill().await;
        // `--db FILE` is the same.
        let mut shorthand = Command::new(env!("CARGO_BIN_EXE_dual-response"));
        shorthand
            .args(["serve", "--addr", "127.0.0.1:0", "--db"])
            .arg(&path);
        let instance = Instance::launch(shorthand).await;
        every_surface(&instance, "SELECT id, label FROM items ORDER BY id").await;
        instance.kill().await;
    })
    .await;
}

#[tokio::test]
async fn an_unreachable_database_is_named_without_its_password() {
    within(Duration::from_secs(60), async {
        let stderr = start_up_error(serve_database("postgres://reader:hunter2@127.0.0.1:1/sales", &[])).await;
        assert!(
            stderr.contains("postgres://reader:***@127.0.0.1:1/sales"),
            "{stderr}"
        );
        assert!(!stderr.contains("hunter2"), "{stderr}");
        let stderr = start_up_error(serve_database("mysql://reader:hunter2@127.0.0.1:1/sales", &[])).await;
        assert!(
            stderr.contains("mysql://reader:***@127.0.0.1:1/sales"),
            "{stderr}"
        );
        assert!(!stderr.contains("hunter2"), "{stderr}");
        let stderr = start_up_error(serve_database("oracle://scott:tiger@h/db", &[])).await;
        assert!(
            stderr.contains("postgres://") && stderr.contains("sqlite:PATH"),
            "{stderr}"
        );
        assert!(!stderr.contains("tiger"), "{stderr}");
        let mut child = spawn_child(
            &mut serve_database("sqlite:/nonexistent/dir/x.db", &[]),
            std::process::Stdio::null(),
            "starts",
        );
        let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
            .await
            .expect("exits")
            .expect("status");
        assert!(!status.success());
    })
    .await;
}
