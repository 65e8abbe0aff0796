//! The binary's side of the MCP surface: `--stdio` serves no `/mcp` over HTTP (only REST) and logs
//! plainly, driven through the binary. The protocol itself (every version's results against its
//! published schema, the JSON-RPC answers) is dual-serve's `tests/protocol.rs`.

mod support;

use std::process::Stdio;
use std::time::Duration;

use http::{Request, StatusCode, header};
use http_body_util::Full;
use support::TempDb;
use support::http::exchange;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(90);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_mode_serves_only_rest_over_http_and_logs_plainly() {
    let db = TempDb::new();
    let mut child = support::stdio::command(&db.path(), "info")
        .env_remove("NO_COLOR")
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let (addr, log) = timeout(LIMIT, async {
        let mut log = String::new();
        while let Some(line) = lines.next_line().await.expect("read") {
            log.push_str(&line);
            log.push('\n');
            if let Some(rest) = line.strip_prefix("dual-response: MCP on stdio, REST http://") {
                let addr = rest.split('/').next().unwrap_or_default().to_owned();
                return (addr, log);
            }
        }
        panic!("no start-up line in {log}");
    })
    .await
    .expect("started within the time limit");
    assert!(!log.contains('\u{1b}'), "colour codes in a piped log: {log:?}");
    let get = |path: &str| {
        Request::get(format!("http://{addr}{path}"))
            .header(header::ACCEPT, "application/json, text/event-stream")
            .body(Full::default())
            .expect("a request")
    };
    assert_eq!(exchange(get("/mcp")).await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        exchange(get("/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let _ = child.kill().await;
}
