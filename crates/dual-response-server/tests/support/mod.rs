//! Shared by the demo's integration tests: the services (feature `services`), a per-test Redis key
//! prefix / PostgreSQL schema that cleans up after itself, `dual-response serve` child processes that
//! never outlive the test, in-process servers ([`in_process`]), plain HTTP requests ([`http`]), big
//! exports ([`export`]), `serve --stdio` children ([`stdio`]) and small MCP / REST helpers (per-test S3
//! buckets are `dual_testkit::s3`).
#![allow(
    dead_code,
    reason = "each test binary uses a different part of the support module"
)]

pub(crate) mod export;
pub(crate) mod http;
pub(crate) mod in_process;
pub(crate) mod raw_mcp;
#[cfg(feature = "services")]
pub(crate) mod shared_spool;
pub(crate) mod stdio;

use std::collections::VecDeque;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dual_client::{DualResponseClient, ParsedDualResponse};
use dual_response_server::ipeds::dataset::{self, DatasetSize};
use dual_response_server::mcp_client;
use dual_testkit::cleanup;
use dual_testkit::services::{POSTGRES, REDIS, Service};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::time::timeout;

/// Upper bound of any one test's work.
pub(crate) const LIMIT: Duration = Duration::from_secs(150);
/// How long a `dual-response serve` process may take to print its address.
const START_WITHIN: Duration = Duration::from_secs(30);
/// Log lines of a child kept for failure messages.
const LOG_LINES: usize = 200;

/// The query every test runs: every institution of the small dataset.
pub(crate) const SQL: &str = "SELECT id, name, state FROM institutions ORDER BY id";

/// Awaits `work`, failing the test when it takes longer than `limit`.
pub(crate) async fn within<T>(limit: Duration, work: impl Future<Output = T>) -> T {
    timeout(limit, work).await.expect("within the time limit")
}

/// The shared backends: Redis at `DUAL_TEST_REDIS_URL` (default `redis://127.0.0.1:6379`),
/// PostgreSQL at `DUAL_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Redis,
    Postgres,
}

impl Backend {
    /// The server, its URL and what to say when it is unreachable.
    pub(crate) fn service(self) -> Service {
        match self {
            Self::Redis => REDIS,
            Self::Postgres => POSTGRES,
        }
    }

    pub(crate) fn url(self) -> String {
        self.service().url()
    }

    /// The service's socket address, from its URL.
    pub(crate) fn upstream(self) -> SocketAddr {
        self.service()
            .addr()
            .unwrap_or_else(|e| self.service().unreachable(e))
    }

    /// The service's URL with its host and port replaced by `proxy` (user, password, path kept).
    pub(crate) fn url_through(self, proxy: SocketAddr) -> String {
        self.service()
            .url_through(proxy)
            .unwrap_or_else(|e| self.service().unreachable(e))
    }
}

/// A Redis key prefix or PostgreSQL schema unique to one test. Everything under it is deleted when
/// it is dropped (also when the test panics), and nothing else is ever touched. Declare it before
/// the instances so that they are killed first.
#[derive(Debug)]
pub(crate) struct Namespace {
    backend: Backend,
    prefix: String,
}

impl Namespace {
    /// A fresh namespace; panics (failing the test) with how to start the service when it is
    /// unreachable.
    pub(crate) async fn new(backend: Backend) -> Self {
        let tag = fastrand::u64(..);
        let prefix = match backend {
            Backend::Redis => format!("dual-demo-test:{tag:016x}:"),
            Backend::Postgres => format!("dual_demo_test_{tag:016x}"),
        };
        let reachable = timeout(Duration::from_secs(10), ping(backend)).await;
        match reachable {
            Ok(Ok(())) => {}
            Ok(Err(e)) => backend.service().unreachable(e),
            Err(_) => backend.service().unreachable("no answer within 10 s"),
        }
        Self { backend, prefix }
    }

    /// The value of `--store-prefix`.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    fn clean_up(&self) -> Result<(), String> {
        match self.backend {
            Backend::Redis => cleanup::delete_redis_keys(&REDIS.url(), &self.prefix)
                .map(drop)
                .map_err(|e| e.to_string()),
            Backend::Postgres => cleanup::drop_postgres_schema(&POSTGRES.url(), &self.prefix),
        }
    }
}

async fn ping(backend: Backend) -> Result<(), String> {
    match backend {
        Backend::Redis => {
            let client = redis::Client::open(REDIS.url()).map_err(|e| e.to_string())?;
            let mut con = client
                .get_multiplexed_async_connection()
                .await
                .map_err(|e| e.to_string())?;
            redis::cmd("PING")
                .query_async::<String>(&mut con)
                .await
                .map(drop)
                .map_err(|e| e.to_string())
        }
        Backend::Postgres => {
            let (client, connection) = tokio_postgres::connect(&POSTGRES.url(), tokio_postgres::NoTls)
                .await
                .map_err(|e| with_sources(&e))?;
            tokio::spawn(connection);
            client
                .simple_query("SELECT 1")
                .await
                .map(drop)
                .map_err(|e| with_sources(&e))
        }
    }
}

/// `error: its source: …` (tokio-postgres keeps the reason, such as "Connection refused", in a source).
fn with_sources(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl Drop for Namespace {
    fn drop(&mut self) {
        // A few tries: a blocking call may fail with EINTR when a killed child's SIGCHLD arrives.
        let mut outcome = self.clean_up();
        for _ in 1..3 {
            if outcome.is_ok() {
                break;
            }
            outcome = self.clean_up();
        }
        if let Err(e) = outcome {
            eprintln!("could not clean up the test namespace {}: {e}", self.prefix);
        }
    }
}

/// A temporary directory holding the small dataset; removed on drop.
#[derive(Debug)]
pub(crate) struct TempDb {
    dir: PathBuf,
}

impl TempDb {
    /// A fresh directory with the small dataset in it.
    pub(crate) fn new() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "dual-demo-shared-{}-{:016x}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dataset::ensure(&dir.join("small.sqlite"), DatasetSize::SMALL).expect("dataset");
        Self { dir }
    }

    pub(crate) fn path(&self) -> PathBuf {
        self.dir.join("small.sqlite")
    }

    /// The directory, for further files of the test; removed with it.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

/// `dual-response serve --pending-after-ms 0 --addr 127.0.0.1:0 --db DB`, for further arguments.
pub(crate) fn serve_command(db: &Path) -> Command {
    serve_command_pending(db, 0)
}

/// [`serve_command`] whose tool calls wait up to `pending_after_ms` for the result before they
/// answer `pending`.
pub(crate) fn serve_command_pending(db: &Path, pending_after_ms: u64) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dual-response"));
    command
        .arg("serve")
        .args(["--pending-after-ms", &pending_after_ms.to_string()])
        .args(["--addr", "127.0.0.1:0", "--dataset"])
        .arg(db);
    command
}

/// Spawns `command` as a child of the test: no stdin, `stdout` as given, stderr piped, killed when
/// dropped (so it never outlives the test); panics with `starts` when it cannot start.
pub(crate) fn spawn_child(command: &mut Command, stdout: Stdio, starts: &str) -> Child {
    command
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect(starts)
}

/// Runs `command` (a [`serve_command`] given something it must refuse) to its end, with no stdin:
/// it must fail to start; what it wrote to stderr.
pub(crate) async fn start_up_error(mut command: Command) -> String {
    let output = command
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "it started: {stderr}");
    stderr
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A `dual-response serve` child process. It is killed when dropped (on every path, panics included).
#[derive(Debug)]
pub(crate) struct Instance {
    child: Child,
    addr: SocketAddr,
    log: Arc<Mutex<VecDeque<String>>>,
    /// The dataset of [`Instance::start_memory`], removed after the child is killed.
    db: Option<TempDb>,
}

impl Instance {
    /// Starts `dual-response serve --addr 127.0.0.1:0 --db DB --store STORE --store-prefix PREFIX EXTRA…`
    /// and waits until it prints its address. Panics, with the child's output, when it exits instead
    /// (for example because the store is unreachable).
    pub(crate) async fn start(db: &Path, store: &str, prefix: &str, extra: &[&str]) -> Self {
        let mut command = serve_command(db);
        command
            .args(["--store", store, "--store-prefix", prefix])
            .args(extra);
        Self::launch(command).await
    }

    /// Starts `dual-response serve --addr 127.0.0.1:0 --db DB EXTRA…` with the memory store, on a
    /// small dataset of its own.
    pub(crate) async fn start_memory(extra: &[&str]) -> Self {
        let db = TempDb::new();
        let mut command = serve_command(&db.path());
        command.args(extra);
        let mut instance = Self::launch(command).await;
        instance.db = Some(db);
        instance
    }

    /// Runs `command` (a `dual-response serve`, possibly through a shell that `exec`s it) and waits until
    /// it prints its address.
    pub(crate) async fn launch(mut command: Command) -> Self {
        command.env("RUST_LOG", "info").env("NO_COLOR", "1");
        let mut child = spawn_child(&mut command, Stdio::null(), "the dual-demo binary starts");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(VecDeque::new()));
        let mut lines = BufReader::new(stderr).lines();
        let found = timeout(START_WITHIN, async {
            while let Ok(Some(line)) = lines.next_line().await {
                keep(&log, &line);
                if let Some(addr) = serving_addr(&line) {
                    return Some(addr);
                }
            }
            None
        })
        .await;
        let addr = match found {
            Ok(Some(addr)) => addr,
            Ok(None) => panic!("dual-response serve exited before serving:\n{}", tail(&log)),
            Err(_) => panic!(
                "dual-response serve did not start within {START_WITHIN:?}:\n{}",
                tail(&log)
            ),
        };
        // Keep draining stderr so that the child never blocks on a full pipe.
        let drained = Arc::clone(&log);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                keep(&drained, &line);
            }
        });
        Self {
            child,
            addr,
            log,
            db: None,
        }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub(crate) fn mcp_url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub(crate) fn rest_url(&self) -> String {
        format!("http://{}/resources", self.addr)
    }

    /// The last lines the child wrote to stderr.
    pub(crate) fn log(&self) -> String {
        tail(&self.log)
    }

    /// Whether the process is still running.
    pub(crate) fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id().expect("a running child has an id")
    }

    /// Sends `signal` (`TERM`, `INT`, …) with `kill -SIGNAL PID`.
    pub(crate) fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} failed");
    }

    /// Waits up to `within` for the process to exit; panics, with its log, when it does not.
    pub(crate) async fn exit_status(&mut self, within: Duration) -> std::process::ExitStatus {
        match timeout(within, self.child.wait()).await {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => panic!("waiting for dual-response serve failed: {e}"),
            Err(_) => panic!(
                "dual-response serve did not exit within {within:?}:\n{}",
                self.log()
            ),
        }
    }

    /// Kills the process (SIGKILL: no graceful shutdown) and waits until it is gone.
    pub(crate) async fn kill(mut self) {
        let _ = self.child.start_kill();
        let _ = timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        if std::thread::panicking() {
            eprintln!(
                "--- dual-response serve on {} ---\n{}",
                self.addr,
                tail(&self.log)
            );
        }
    }
}

fn keep(log: &Mutex<VecDeque<String>>, line: &str) {
    let mut log = log.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if log.len() == LOG_LINES {
        log.pop_front();
    }
    log.push_back(line.to_owned());
}

fn tail(log: &Mutex<VecDeque<String>>) -> String {
    let log = log.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    log.iter().cloned().collect::<Vec<_>>().join("\n")
}

/// The address in `dual-response: MCP http://ADDR/mcp, REST …`.
fn serving_addr(line: &str) -> Option<SocketAddr> {
    let rest = line.strip_prefix("dual-response: MCP http://")?;
    rest.split_once("/mcp")?.0.parse().ok()
}

/// A connected MCP client of `instance`.
pub(crate) async fn mcp(instance: &Instance) -> RunningService<RoleClient, ()> {
    match timeout(Duration::from_secs(20), mcp_client::connect(&instance.mcp_url())).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => panic!("MCP client cannot connect to {}: {e}", instance.mcp_url()),
        Err(_) => panic!("MCP initialization with {} timed out", instance.mcp_url()),
    }
}

/// Calls the `query` tool with `sql`; panics on a JSON-RPC error or a hang.
pub(crate) async fn query(mcp: &RunningService<RoleClient, ()>, sql: &str) -> CallToolResult {
    call(mcp, "query", json!({ "sql": sql })).await
}

/// Calls `tool` with `arguments` (a JSON object); panics on a JSON-RPC error or a hang.
pub(crate) async fn call(
    mcp: &RunningService<RoleClient, ()>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    let call = mcp.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments));
    match timeout(Duration::from_secs(20), call).await {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => panic!("tools/call {tool} failed: {e}"),
        Err(_) => panic!("tools/call {tool} did not answer within 20 s"),
    }
}

/// The text blocks of a tool result.
pub(crate) fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A REST client of `instance`'s API (resource links resolve against it) without retries.
pub(crate) fn rest_client(instance: &Instance) -> DualResponseClient {
    DualResponseClient::builder()
        .base_url(instance.rest_url())
        .max_retries(0)
        .timeout(Duration::from_secs(10))
        .build()
        .expect("a client")
}

/// Runs [`SQL`] through `instance`'s MCP endpoint and returns the dual response, resolved against
/// `rest`'s base URL.
pub(crate) async fn create_via_mcp(instance: &Instance, rest: &DualResponseClient) -> ParsedDualResponse {
    let mcp = mcp(instance).await;
    let result = query(&mcp, SQL).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let _ = mcp.cancel().await;
    dual_rmcp::client::parse_call_tool_result(&result, rest).expect("a dual response")
}

/// Waits (at most 60 s) until every row of `parsed`'s snapshot is written. The tool call answers at
/// the first sample; until the writer is done, a page past the rows spooled so far, or a sorted page,
/// is 409 `not_ready`.
pub(crate) async fn written(parsed: &ParsedDualResponse) {
    for _ in 0..1_200 {
        let metadata = parsed.metadata().await.expect("metadata");
        if metadata.spooled_rows.is_none() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the snapshot of {} was not written within 60 s", id_of(parsed));
}

/// The resource id of a parsed response (the last segment of its URL).
pub(crate) fn id_of(parsed: &ParsedDualResponse) -> String {
    parsed
        .resource_url()
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Runs `node SCRIPT ARGS…` in `browser/` (the official TypeScript MCP client and the npm packages
/// `bash .ci/browser` installs) and returns the one JSON line the script prints; panics with node's
/// stderr when it fails.
pub(crate) async fn run_node(script: &str, args: &[&str]) -> Value {
    let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    let output = Command::new("node")
        .current_dir(&browser)
        .arg(script)
        .args(args)
        .kill_on_drop(true)
        .output()
        .await
        .unwrap_or_else(|e| panic!("node runs (bash .ci/browser installs it): {e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "node {script} failed:\n{stderr}");
    serde_json::from_slice(&output.stdout).expect("one JSON line")
}

/// The tool names of a node script's answer (`{"tools": ["query", …]}`).
pub(crate) fn tool_names(answer: &Value) -> Vec<&str> {
    answer["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(Value::as_str)
        .collect()
}
