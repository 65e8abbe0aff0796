//! An agent's burst of tool calls against a database executor, beside the same queries in the
//! database's own command-line client (issue 41, item 8): the bench programs of dual-postgres and
//! dual-mysql share it (`cargo bench -p dual-postgres --bench burst`, figures in docs/PERFORMANCE.md).
//!
//! A burst is a list of SQL statements, asked **back to back** (each tool call after the previous
//! answer, every answer kept so its snapshot is written behind the later calls) and **at once** (all
//! started together). The plain figure of each is the same statements run whole by the client
//! (`psql`, `mysql`), one process per statement, output discarded, in the same pattern.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dual_server::{CreateResponse, DualResponseServer};
use serde_json::json;

/// The times of a burst's calls, and how many were refused.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    /// Each answered call's time, in the order they ended.
    pub times: Vec<Duration>,
    /// Calls that ended in an error.
    pub refused: usize,
}

impl Timings {
    /// The median time (the upper one of an even count), or zero.
    #[must_use]
    pub fn median(&self) -> Duration {
        let mut times = self.times.clone();
        times.sort();
        times.get(times.len() / 2).copied().unwrap_or_default()
    }

    /// The longest time, or zero.
    #[must_use]
    pub fn max(&self) -> Duration {
        self.times.iter().max().copied().unwrap_or_default()
    }

    fn record(&mut self, outcome: Result<Duration, String>) {
        match outcome {
            Ok(time) => self.times.push(time),
            Err(error) => {
                eprintln!("refused: {error}");
                self.refused += 1;
            }
        }
    }
}

/// `sqls` as tool calls of `kind` (params `{"sql": …}`) through `server`, one after the other.
pub async fn back_to_back(server: &DualResponseServer, kind: &str, sqls: &[String]) -> Timings {
    let mut timings = Timings::default();
    for sql in sqls {
        timings.record(tool_call(server, kind, sql).await);
    }
    timings
}

/// `sqls` as tool calls of `kind` through `server`, all started together.
pub async fn at_once(server: &Arc<DualResponseServer>, kind: &str, sqls: &[String]) -> Timings {
    let mut calls = tokio::task::JoinSet::new();
    for sql in sqls {
        let (server, kind, sql) = (Arc::clone(server), kind.to_owned(), sql.clone());
        calls.spawn(async move { tool_call(&server, &kind, &sql).await });
    }
    let mut timings = Timings::default();
    while let Some(joined) = calls.join_next().await {
        timings.record(joined.unwrap_or_else(|e| Err(e.to_string())));
    }
    timings
}

async fn tool_call(server: &DualResponseServer, kind: &str, sql: &str) -> Result<Duration, String> {
    let started = Instant::now();
    server
        .create_response(CreateResponse::new(kind, json!({ "sql": sql })))
        .await
        .map(|_| started.elapsed())
        .map_err(|e| dual_core::error::Report::new(&e).to_string())
}

/// `sqls` run whole by the client `command` makes for each (its output discarded), one after the
/// other.
pub fn cli_back_to_back(command: &dyn Fn(&str) -> Command, sqls: &[String]) -> Timings {
    let mut timings = Timings::default();
    for sql in sqls {
        timings.record(cli(command(sql)));
    }
    timings
}

/// `sqls` run whole by the client `command` makes for each, all started together.
pub fn cli_at_once(command: &dyn Fn(&str) -> Command, sqls: &[String]) -> Timings {
    let mut timings = Timings::default();
    std::thread::scope(|scope| {
        let handles: Vec<_> = sqls
            .iter()
            .map(|sql| {
                let command = command(sql);
                scope.spawn(move || cli(command))
            })
            .collect();
        for handle in handles {
            timings.record(
                handle
                    .join()
                    .unwrap_or_else(|_| Err("a client thread panicked".to_owned())),
            );
        }
    });
    timings
}

fn cli(mut command: Command) -> Result<Duration, String> {
    let started = Instant::now();
    let output = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("{command:?} could not start: {e}"))?;
    if output.status.success() {
        Ok(started.elapsed())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_owned())
    }
}

/// Prints the header of [`print_row`]'s table, naming the plain client.
pub fn print_header(client: &str) {
    println!(
        "| burst | plain `{client}`: median / max / refused | dual-response: median / max / refused | median ours / plain |"
    );
    println!("|---|---:|---:|---:|");
}

/// One row of the burst table.
pub fn print_row(name: &str, plain: &Timings, ours: &Timings) {
    println!(
        "| {name} | {} / {} / {} | {} / {} / {} | **{:.2}** |",
        ms(plain.median()),
        ms(plain.max()),
        plain.refused,
        ms(ours.median()),
        ms(ours.max()),
        ours.refused,
        ours.median().as_secs_f64() / plain.median().as_secs_f64().max(1e-9)
    );
}

fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

/// A server with the library's defaults (`pending_after` 2 s, the scheduler's defaults) over
/// `executor` as the kind `kind`.
///
/// # Panics
/// Never for these settings: the builder refuses only settings this does not change.
#[must_use]
pub fn server(kind: &str, executor: impl dual_server::QueryExecutor) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor(kind, executor)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The counts of a burst: calls back to back (`BENCH_BACK_TO_BACK`, 12), at once (`BENCH_AT_ONCE`,
/// 10), and the rounds of each query (`BENCH_ROUNDS`, 5).
#[must_use]
pub fn counts() -> (usize, usize, usize) {
    let env = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    (
        env("BENCH_BACK_TO_BACK", 12),
        env("BENCH_AT_ONCE", 10),
        env("BENCH_ROUNDS", 5),
    )
}

/// `n` statements taken from `queries` in turn (the burst's mix).
#[must_use]
pub fn mix(queries: &[String], n: usize) -> Vec<String> {
    queries.iter().cycle().take(n).cloned().collect()
}

/// The 1-minute load average (`/proc/loadavg`), printed beside the figures; empty where there is none.
#[must_use]
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// A burst bench: which client is the plain figure, and the queries of the mix.
#[derive(Clone, Copy)]
pub struct Bench<'a> {
    /// The client's name, for the table (`psql`, `mysql`).
    pub client: &'a str,
    /// The client's command running one statement whole.
    pub command: &'a dyn Fn(&str) -> Command,
    /// The executor's kind on the server.
    pub kind: &'a str,
    /// The mix: each query's name and SQL.
    pub queries: &'a [(&'a str, String)],
}

impl std::fmt::Debug for Bench<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bench")
            .field("client", &self.client)
            .field("kind", &self.kind)
            .field("queries", &self.queries)
            .finish_non_exhaustive()
    }
}

/// Runs `bench` and prints its tables: `back_to_back` calls one after the other and `at_once` calls
/// together (the mix in turn), then each query `rounds` times back to back. Each part runs on a new
/// server from `server`, shut down with no grace after it (the snapshots still being written are not
/// waited for).
pub fn run(
    runtime: &tokio::runtime::Runtime,
    bench: Bench<'_>,
    server: impl AsyncFn() -> DualResponseServer,
    (back_to_back_n, at_once_n, rounds): (usize, usize, usize),
) {
    println!("load average at start {}", load_average());
    let sqls: Vec<String> = bench.queries.iter().map(|(_, sql)| sql.clone()).collect();
    println!();
    print_header(bench.client);
    let mixed = mix(&sqls, back_to_back_n);
    let plain = cli_back_to_back(bench.command, &mixed);
    let ours = runtime.block_on(on_new_server(&server, async |s| {
        back_to_back(&s, bench.kind, &mixed).await
    }));
    print_row(&format!("{back_to_back_n} back to back"), &plain, &ours);
    let mixed = mix(&sqls, at_once_n);
    let plain = cli_at_once(bench.command, &mixed);
    let ours = runtime.block_on(on_new_server(&server, async |s| {
        at_once(&s, bench.kind, &mixed).await
    }));
    print_row(&format!("{at_once_n} at once"), &plain, &ours);
    println!();
    println!(
        "| query ({rounds} calls back to back) | plain `{}` median | dual-response median | ours / plain |",
        bench.client
    );
    println!("|---|---:|---:|---:|");
    for (name, sql) in bench.queries {
        let repeated = vec![sql.clone(); rounds];
        let plain = cli_back_to_back(bench.command, &repeated);
        let ours = runtime.block_on(on_new_server(&server, async |s| {
            back_to_back(&s, bench.kind, &repeated).await
        }));
        println!(
            "| {name} | {} | {} | **{:.2}** |",
            ms(plain.median()),
            ms(ours.median()),
            ours.median().as_secs_f64() / plain.median().as_secs_f64().max(1e-9)
        );
        if plain.refused + ours.refused > 0 {
            println!("|   refused | {} | {} | |", plain.refused, ours.refused);
        }
    }
    println!();
    println!("load average at end {}", load_average());
}

/// The runtime a burst bench runs on: multi-threaded, with two workers.
///
/// # Errors
/// When the runtime cannot be built.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// Runs the burst of the model's SQL `queries` ([`run`] with the [`counts`]): on servers with the
/// library's defaults over an executor from `executor` as the kind `sql` ([`server`]), beside
/// `client` running each statement whole with `command`.
pub fn run_sql<E: dual_server::QueryExecutor>(
    runtime: &tokio::runtime::Runtime,
    client: &str,
    command: &dyn Fn(&str) -> Command,
    queries: &[(&str, String)],
    executor: impl Fn() -> E,
) {
    let bench = Bench {
        client,
        command,
        kind: "sql",
        queries,
    };
    run(runtime, bench, async || server("sql", executor()), counts());
}

/// `calls` on a new server from `server`, shut down with no grace after them.
async fn on_new_server(
    server: &impl AsyncFn() -> DualResponseServer,
    calls: impl AsyncFnOnce(Arc<DualResponseServer>) -> Timings,
) -> Timings {
    let server = Arc::new(server().await);
    let timings = calls(Arc::clone(&server)).await;
    if let Err(error) = server.shutdown_within(Duration::ZERO).await {
        eprintln!("shutdown: {error}");
    }
    timings
}
