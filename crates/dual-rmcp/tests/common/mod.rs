//! What the tests over a real SQLite database share: the database (`orders`, a view
//! `big_orders`), a server with its `sql` executor, [`DatabaseMcp`] over them served in this
//! process, raw JSON-RPC sessions with it ([`raw_mcp`]), and reading tool results.
#![allow(
    dead_code,
    reason = "each test binary uses a different part of the common module"
)]

pub(crate) mod raw_mcp;

use std::path::PathBuf;

use dual_rmcp::DatabaseMcp;
use dual_rmcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, GetTaskParams, JsonObject, TaskStatus,
};
use dual_rmcp::rmcp::service::RunningService;
use dual_rmcp::rmcp::{ClientHandler, Peer, RoleClient, ServerHandler, ServiceExt};
use dual_server::DualResponseServer;
use dual_sqlite::{SqliteDb, SqliteOptions};
use serde_json::{Value, json};
use tokio::io::DuplexStream;

/// What the database holds, as [`Fixture::database_mcp`] tells the model.
pub(crate) const DESCRIPTION: &str = "Sales orders.";

/// A SQLite database in a directory of its own (removed when dropped) and a server over it.
pub(crate) struct Fixture {
    pub(crate) db: SqliteDb,
    pub(crate) server: DualResponseServer,
    dir: PathBuf,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Fixture {
    /// [`DatabaseMcp`] over this database and its server.
    pub(crate) fn database_mcp(&self) -> DatabaseMcp {
        self.database_mcp_on(&self.server)
    }

    /// [`DatabaseMcp`] over this database's schema and `server` (whose `sql` kind may be another
    /// executor: a gated one, say).
    pub(crate) fn database_mcp_on(&self, server: &DualResponseServer) -> DatabaseMcp {
        DatabaseMcp::new(server.clone(), self.db.schema().clone(), "sql", DESCRIPTION)
    }
}

/// Three orders (`EU` 50 and 150, `US` 300) and the view `big_orders` (total over 100), in a
/// directory named after `prefix`.
pub(crate) fn fixture(prefix: &str) -> Fixture {
    let dir = std::env::temp_dir().join(dual_testkit::unique_name(prefix));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join("db.sqlite");
    let conn = dual_sqlite::rusqlite::Connection::open(&path).unwrap_or_else(|e| panic!("{e}"));
    conn.execute_batch(
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, region TEXT NOT NULL, total REAL);
         CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100;
         INSERT INTO orders (region, total) VALUES ('EU', 50), ('EU', 150), ('US', 300);",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    drop(conn);
    let db = SqliteDb::open_with(&path, SqliteOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let server = DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor("sql", db.sql_executor())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    Fixture { db, server, dir }
}

/// `value` as tool arguments (an empty object for anything but an object).
pub(crate) fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// The text blocks of `result`, one per line.
pub(crate) fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The URI of the resource a `query` of every order made: the result checked to be no error and to
/// count the three orders.
pub(crate) fn orders_uri(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(false), "{}", text(result));
    let structured = result.structured_content.clone().unwrap_or_default();
    assert_eq!(structured["metadata"]["total_count"], 3);
    structured["resource"]["uri"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Calls `query` with `SELECT * FROM orders` as a task (the client declares tasks) and polls
/// `tasks/get` until it completes (at most 5 s); the task's id and the completed task as JSON.
pub(crate) async fn orders_as_a_task(client: &Peer<RoleClient>) -> (String, Value) {
    let call =
        CallToolRequestParams::new("query").with_arguments(args(json!({"sql": "SELECT * FROM orders"})));
    let task = match client
        .call_tool_once(call)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
    {
        CallToolResponse::Task(task) => task.task,
        other => panic!("expected a task, got {other:?}"),
    };
    for _ in 0..500 {
        let got = client
            .get_task(GetTaskParams::new(task.task_id.clone()))
            .await
            .unwrap_or_else(|e| panic!("tasks/get: {e}"))
            .task;
        if got.status() == TaskStatus::Completed {
            return (task.task_id, serde_json::to_value(got).unwrap_or_default());
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the task did not complete within 5 s")
}

/// Serves `mcp` on one end of an in-process pipe (rmcp's framing of byte streams: one JSON-RPC
/// message a line) until the other end, returned, is closed.
pub(crate) fn serve_in_process(mcp: impl ServerHandler) -> DuplexStream {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = mcp.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    client_end
}

/// `client`, initialized with `mcp` served in this process ([`serve_in_process`]).
pub(crate) async fn connect<C: ClientHandler>(
    mcp: impl ServerHandler,
    client: C,
) -> RunningService<RoleClient, C> {
    client
        .serve(serve_in_process(mcp))
        .await
        .unwrap_or_else(|e| panic!("initialize: {e}"))
}
