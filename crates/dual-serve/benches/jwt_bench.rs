//! A `POST` page with JWT validation against the same page with the token file (issue 44, item 5;
//! figures in `docs/PERFORMANCE.md`, "JWT validation on a POST page").
//!
//! ```text
//! nice -n 10 cargo bench -j1 -p dual-serve --bench jwt_bench
//! BENCH_REQUESTS=20000 BENCH_ROUNDS=9 BENCH_CONNECTIONS=8 BENCH_MISSES=1000 ...   # the defaults
//! BENCH_ONLY=0|1|2 BENCH_REQUESTS=N valgrind --tool=callgrind …   # N pages of one target only
//! ```
//!
//! A bench target without the test harness (the `--bench` flag cargo passes is ignored).
//!
//! One process: a local issuer on 127.0.0.1 (dual-testkit's `oauth_issuer`, an ES256 and an RS256
//! key generated here) and two servers of the same SQLite table — one with
//! `Authentication::Tokens`, one with `Authentication::OAuth` trusting the issuer, each holding the
//! same 100-row result of the caller `alice` — on a runtime of one worker; the client on a runtime
//! of its own. Each round sends, on keep-alive connections, `BENCH_REQUESTS` `POST
//! /resources/{id}` pages (`{"offset":0,"limit":100}`) one after the other, then the same number
//! spread over `BENCH_CONNECTIONS` connections at once, with the token of the file, a fixed ES256
//! JWT and a fixed RS256 JWT (the server's cache of verified tokens at work), the order turning
//! each round. Printed: the median of the rounds' requests per second and the ratios, and the
//! servers' CPU time a page (every thread but the client's, from `/proc/self/task/*/schedstat`),
//! which the host's other work moves less than the rates.
//!
//! Then the cache miss: `BENCH_MISSES` times, a token never seen before (a new `jti`) for one page
//! on a warm connection, against the token file's page on the same connection: the signature check
//! and claim checks a new token costs, beside what the cache saves.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::Bytes;
use dual_serve::auth::{AuthTokens, Authentication, OAuthOptions};
use dual_serve::{Running, SQL_KIND, ServeOptions, serve_database};
use dual_server::CreateResponse;
use dual_sqlite::{SqliteDb, SqliteOptions};
use dual_testkit::oauth_issuer::{Issuer, TestKey, claims, ec_key, jwks, rsa_key};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpStream;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const PAGE: &str = r#"{"offset":0,"limit":100}"#;
const FILE_TOKEN: &str = "bench-token-of-the-file-0123456789abcdef";

fn main() -> Result<(), BoxError> {
    let requests = env_usize("BENCH_REQUESTS", 20_000);
    let rounds = env_usize("BENCH_ROUNDS", 9);
    let connections = env_usize("BENCH_CONNECTIONS", 8);
    let misses = env_usize("BENCH_MISSES", 1000);
    println!("load average at start {}", load_average());

    // The client runs on this thread; the servers and the issuer get one worker thread.
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let servers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let db = TempDb::new()?;
    let (es, rs) = (ec_key("bench-es"), rsa_key("bench-rs"));
    let issuer = servers.block_on(Issuer::start(jwks(&[&es, &rs])));
    let tokens = Authentication::Tokens(AuthTokens::parse(&format!("{FILE_TOKEN} alice\n"))?);
    let oauth = Authentication::OAuth(OAuthOptions::builder(issuer.url.clone()).build()?);
    let with_tokens = servers.block_on(serve(&db, tokens))?;
    let with_oauth = servers.block_on(serve(&db, oauth))?;
    let aud = with_oauth.mcp_url();
    let token = |key: &TestKey, jti: &str| {
        let mut claims = claims(&issuer.url, &aud, "alice");
        // Valid for the whole run.
        claims["exp"] = json!(claims["exp"].as_u64().unwrap_or_default() + 3600);
        claims["jti"] = json!(jti);
        key.token(&claims)
    };

    let targets = [
        Target::new("token file", &with_tokens, FILE_TOKEN.to_owned(), &servers)?,
        Target::new("JWT ES256", &with_oauth, token(&es, "fixed"), &servers)?,
        Target::new("JWT RS256", &with_oauth, token(&rs, "fixed"), &servers)?,
    ];
    // Every target answers its page (the same rows; the links name each server's port), and the
    // first JWT request fetches the keys (once).
    for target in &targets {
        let page = client.block_on(one_page(target))?;
        println!("{}: a page of {} bytes", target.name, page.len());
    }
    println!("key set fetches so far: {}", issuer.jwks_fetches());
    // `BENCH_ONLY=0|1|2`: only `BENCH_REQUESTS` pages of that target, one after the other, for an
    // instruction count under `valgrind --tool=callgrind` (docs/PERFORMANCE.md).
    if let Some(only) = std::env::var("BENCH_ONLY")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        let target = targets.get(only).ok_or("BENCH_ONLY is 0, 1 or 2")?;
        client.block_on(load(target, 1, requests))?;
        println!("{}: {requests} pages", target.name);
        return Ok(());
    }

    let mut sequential = vec![Vec::new(); targets.len()];
    let mut concurrent = vec![Vec::new(); targets.len()];
    // The servers' CPU time a page (µs), both loads of a round together.
    let mut cpu = vec![Vec::new(); targets.len()];
    for round in 0..rounds {
        for step in 0..targets.len() {
            let at = (round + step) % targets.len();
            let target = &targets[at];
            let before = server_cpu();
            sequential[at].push(client.block_on(load(target, 1, requests))?);
            concurrent[at].push(client.block_on(load(target, connections, requests))?);
            let spent = server_cpu().saturating_sub(before);
            cpu[at].push(spent.as_secs_f64() * 1e6 / (2 * requests) as f64);
        }
    }
    println!();
    println!(
        "| `POST /resources/{{id}}`, 100 rows ({requests} requests a round, {rounds} rounds) | sequential: req/s (median) | ratio | {connections} connections: req/s (median) | ratio |"
    );
    println!("|---|---:|---:|---:|---:|");
    let (seq_base, con_base) = (median(&sequential[0]), median(&concurrent[0]));
    for (at, target) in targets.iter().enumerate() {
        let (seq, con) = (median(&sequential[at]), median(&concurrent[at]));
        println!(
            "| {} | {seq:.0} ({}) | **{:.0}%** | {con:.0} ({}) | **{:.0}%** |",
            target.name,
            list(&sequential[at]),
            100.0 * seq / seq_base,
            list(&concurrent[at]),
            100.0 * con / con_base,
        );
    }

    // What the servers' threads spent a page: the cost the cache saves, less moved by the host's
    // other work than the rates above.
    println!();
    println!(
        "| the servers' CPU time a page (both loads; median of {rounds} rounds) | µs | vs the token file |"
    );
    println!("|---|---:|---:|");
    let cpu_base = median(&cpu[0]);
    for (at, target) in targets.iter().enumerate() {
        let spent = median(&cpu[at]);
        println!(
            "| {} | {spent:.2} ({}) | {:+.2} µs, **{:.0}%** of the rate |",
            target.name,
            cpu[at]
                .iter()
                .map(|v| format!("{v:.2}"))
                .collect::<Vec<_>>()
                .join(", "),
            spent - cpu_base,
            100.0 * cpu_base / spent,
        );
    }

    // The cache miss: a new token each time, beside the token file on the same kind of connection.
    println!();
    println!("| one page on a warm connection ({misses} samples) | median µs | vs the token file |");
    println!("|---|---:|---:|");
    let file_page = client.block_on(latencies(&targets[0], misses, |_| FILE_TOKEN.to_owned()))?;
    let cached = client.block_on(latencies(&targets[1], misses, |_| targets[1].token.clone()))?;
    let es_miss = client.block_on(latencies(&targets[1], misses, |i| token(&es, &format!("es-{i}"))))?;
    let rs_miss = client.block_on(latencies(&targets[2], misses, |i| token(&rs, &format!("rs-{i}"))))?;
    for (what, micros) in [
        ("token file", file_page),
        ("JWT ES256, cached", cached),
        ("JWT ES256, a new token (signature checked)", es_miss),
        ("JWT RS256, a new token (signature checked)", rs_miss),
    ] {
        println!("| {what} | {micros:.1} | {:+.1} µs |", micros - file_page);
    }
    println!();
    println!("key set fetches in all: {} (one expected)", issuer.jwks_fetches());
    servers.block_on(async {
        with_tokens.shutdown().await;
        with_oauth.shutdown().await;
    });
    println!();
    println!("load average at end {}", load_average());
    Ok(())
}

/// One server's page with one bearer token.
#[derive(Clone)]
struct Target {
    name: &'static str,
    addr: SocketAddr,
    path: String,
    token: String,
}

impl Target {
    /// `alice`'s result of the whole table on `running`.
    fn new(
        name: &'static str,
        running: &Running,
        token: String,
        servers: &tokio::runtime::Runtime,
    ) -> Result<Self, BoxError> {
        let request = CreateResponse::new(SQL_KIND, json!({ "sql": "SELECT * FROM t" })).owner("alice");
        let response = servers.block_on(running.server.create_response(request))?;
        Ok(Self {
            name,
            addr: running.addr,
            path: format!("/resources/{}", response.id),
            token,
        })
    }
}

/// Serves `db` on a free loopback port with `authentication`.
async fn serve(db: &TempDb, authentication: Authentication) -> Result<Running, BoxError> {
    let mut options = ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
    options.shutdown_grace = Duration::ZERO;
    options.authentication = authentication;
    let sqlite = SqliteDb::open_with(&db.0, SqliteOptions::default())?;
    Ok(serve_database(
        options,
        sqlite.sql_executor(),
        sqlite.schema().clone(),
        "A bench table.",
    )
    .await?)
}

async fn connect(addr: SocketAddr) -> Result<SendRequest<Full<Bytes>>, BoxError> {
    let stream = TcpStream::connect(addr).await?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

/// One page with `token` on `sender`: its body, or an error naming the status.
async fn page(
    sender: &mut SendRequest<Full<Bytes>>,
    target: &Target,
    token: &str,
) -> Result<Bytes, BoxError> {
    let request = http::Request::builder()
        .method("POST")
        .uri(target.path.as_str())
        .header(http::header::HOST, "127.0.0.1")
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Full::new(Bytes::from_static(PAGE.as_bytes())))?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    if status != http::StatusCode::OK {
        return Err(format!("{}: {status}: {}", target.name, String::from_utf8_lossy(&body)).into());
    }
    Ok(body)
}

async fn one_page(target: &Target) -> Result<Bytes, BoxError> {
    page(&mut connect(target.addr).await?, target, &target.token).await
}

/// `requests` pages spread over `connections` keep-alive connections at once: requests per second.
async fn load(target: &Target, connections: usize, requests: usize) -> Result<f64, BoxError> {
    let mut senders = Vec::new();
    for _ in 0..connections {
        senders.push(connect(target.addr).await?);
    }
    let started = Instant::now();
    let each = requests / connections;
    let mut tasks = tokio::task::JoinSet::new();
    for mut sender in senders {
        let target = target.clone();
        tasks.spawn(async move {
            for _ in 0..each {
                page(&mut sender, &target, &target.token).await?;
            }
            Ok::<_, BoxError>(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    Ok((each * connections) as f64 / started.elapsed().as_secs_f64())
}

/// The median time of `samples` pages on one warm connection, the `i`-th with `token(i)` (made
/// before its request is timed), in µs.
async fn latencies(
    target: &Target,
    samples: usize,
    token: impl Fn(usize) -> String,
) -> Result<f64, BoxError> {
    let mut sender = connect(target.addr).await?;
    page(&mut sender, target, &target.token).await?;
    let mut times = Vec::with_capacity(samples);
    for i in 0..samples {
        let token = token(i);
        let started = Instant::now();
        page(&mut sender, target, &token).await?;
        times.push(started.elapsed().as_secs_f64() * 1e6);
    }
    Ok(median(&times))
}

/// A SQLite file with one table of 100 small rows, removed when dropped.
struct TempDb(PathBuf);

impl TempDb {
    fn new() -> Result<Self, BoxError> {
        let path =
            std::env::temp_dir().join(format!("dual-serve-jwt-bench-{:016x}.sqlite", fastrand::u64(..)));
        let db = rusqlite::Connection::open(&path)?;
        db.execute_batch(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, amount REAL);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
             INSERT INTO t SELECT i, 'row ' || i, i * 1.5 FROM n;",
        )?;
        Ok(Self(path))
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn median(values: &[f64]) -> f64 {
    let mut values = values.to_vec();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or_default()
}

fn list(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v:.0}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
        .max(1)
}

/// The load averages of `/proc/loadavg`.
/// CPU time of every thread of this process but the main one (the client's): the servers' worker
/// and blocking threads and the issuer's, which is idle once the keys are fetched. From
/// `/proc/self/task/*/schedstat` (nanoseconds on a CPU).
fn server_cpu() -> Duration {
    let main = std::process::id().to_string();
    let nanos: u64 = std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|task| task.file_name().to_str() != Some(main.as_str()))
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(nanos)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}
