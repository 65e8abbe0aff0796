//! Refining a stored result with SQL: SQLite (dual-sqlite's `SqliteRefiner`, what the project
//! builds) against Apache DataFusion, on the same rows (issue 46, item 2; docs/PERFORMANCE.md
//! "Refinement engines: DataFusion and SQLite (issue 46)").
//!
//! ```text
//! cargo run --release --manifest-path benches/refine-engines/Cargo.toml
//! cargo run --release --manifest-path benches/refine-engines/Cargo.toml -- --rounds 7 --dataset wide
//! ```
//!
//! Two parents, each stored by a `DualResponseServer` with its default spool (a snapshot of compact
//! JSON rows, which is what a refinement reads):
//!
//! * `demo`: `SELECT * FROM degrees_awarded` of the demo dataset (269,000 rows × 7 columns), run by
//!   dual-sqlite's executor on the demo's SQLite file (`--demo PATH`, default where `dual-response
//!   demo` caches it: `$XDG_CACHE_HOME/dual-demo/ipeds-v1.sqlite`, else `~/.cache/dual-demo/…`; run
//!   `cargo run --release -p dual-response-server -- demo` once to generate it);
//! * `wide`: 1,000,000 rows × 8 columns (3 text, 2 integer, 2 real, 1 date) from a generator.
//!
//! Each engine is a `RefineEngine` of the same server (`refine_engine`), and every figure is a real
//! `server.refine(parent, sql, caller)`, timed from the call to its answer (the exact count and the
//! sample; `wait_for_end`, so a long refinement is never answered `pending`):
//!
//! * `sqlite`: `SqliteRefiner::default()`, unchanged (the temporary file in the system's temporary
//!   directory, its 16 MiB page cache, dual-sql's guard, the authorizer, the time limit);
//! * `datafusion`: the `DataFusionRefiner` below: the parent's JSON rows into Arrow arrays of the
//!   parent's column types (one `RecordBatch` per stored batch), a `MemTable` registered as `result`
//!   in a default `SessionContext`, `sql_with_options` (no DDL, DML or statements) and `collect`, then
//!   the answer back to JSON rows for the server. No guard, no time limit, no memory limit;
//! * `decode`: the floor under any engine's load: the parent's batches read and decoded into rows,
//!   nothing built, one row answered.
//!
//! All three load alike, as dual-sqlite's loader does: the stored batches go, as they are read, to a
//! blocking thread (at most 4 batches ahead) that decodes each (`RowBatch::into_rows`) and writes it
//! (SQLite: `INSERT`s in one transaction; DataFusion: Arrow builders; `decode`: nothing). Each engine
//! is wrapped alike to split the time: *load* is from the engine's call to the moment it has read the
//! parent's last stored batch; *query* from there to its answer's last batch, so it also holds the
//! last (up to 4) batches' writing — what `decode` shows as its query time — SQLite's commit and
//! DataFusion's conversion of the answer to JSON rows; *total* is the whole `refine` call (load,
//! query, and the server's own work: reading the parent's record, storing the answer's snapshot,
//! its sample and profile).
//!
//! Each (dataset, engine) runs in a process of its own (the program starts itself with `--child`),
//! so the peak RSS of one engine is not the other's: `VmHWM` is reset (`/proc/self/clear_refs`)
//! once the parent is stored and read after the rounds. One warm-up round per query is not counted.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanBuilder, Float64Builder, Int64Builder, StringBuilder,
};
use datafusion::arrow::datatypes::{
    DataType, Field, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, Schema, SchemaRef,
    UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::datasource::MemTable;
use datafusion::execution::context::{SQLOptions, SessionContext};
use dual_core::{Column, ColumnType, Row};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, ExecutorError, QueryExecutor, QueryStart, RefineEngine,
    RefineInput, RowBatch, RowStream,
};
use dual_sqlite::{SqliteDb, SqliteOptions, SqliteRefiner};
use futures_util::{StreamExt, TryStreamExt, future, stream};
use serde_json::{Map, Value, json};

/// Rows of the `wide` parent.
const WIDE_ROWS: u64 = 1_000_000;
/// Rows per batch of the `wide` generator and of DataFusion's answer (as dual-sqlite streams).
const BATCH_ROWS: usize = 1_000;

const DEMO_QUERIES: [(&str, &str); 3] = [
    (
        "GROUP BY",
        "SELECT field, year, COUNT(*) AS n, SUM(count) AS total FROM result GROUP BY field, year ORDER BY total DESC",
    ),
    (
        "filter + sort, LIMIT 100",
        "SELECT * FROM result WHERE field = 'Engineering' AND award_level = 'doctoral' ORDER BY count DESC LIMIT 100",
    ),
    (
        "filter + sort, ~10%",
        "SELECT * FROM result WHERE year = 2020 ORDER BY count DESC",
    ),
];

const WIDE_QUERIES: [(&str, &str); 3] = [
    (
        "GROUP BY",
        "SELECT category, COUNT(*) AS n, SUM(quantity) AS total, AVG(amount) AS mean FROM result GROUP BY category ORDER BY total DESC",
    ),
    (
        "filter + sort, LIMIT 100",
        "SELECT * FROM result WHERE region = 'region-07' AND score > 90 ORDER BY amount DESC LIMIT 100",
    ),
    (
        "filter + sort, ~10%",
        "SELECT * FROM result WHERE quantity <= 100 ORDER BY amount DESC",
    ),
];

fn main() {
    let args = Args::parse(std::env::args().skip(1).collect());
    if args.child {
        child(&args);
        return;
    }
    println!(
        "refine-engines: {} rounds (median, min–max), 1 warm-up; each (dataset, engine) in its own process\n",
        args.rounds
    );
    println!("| dataset | engine | query | rows | load ms | query ms | total ms |");
    println!("|---|---|---|---:|---:|---:|---:|");
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(&format!("current_exe: {e}")));
    let mut notes = Vec::new();
    for dataset in &args.datasets {
        for engine in &args.engines {
            let mut command = std::process::Command::new(&exe);
            command.args([
                "--child",
                "--dataset",
                dataset,
                "--engine",
                engine,
                "--rounds",
                &args.rounds.to_string(),
            ]);
            if let Some(demo) = &args.demo {
                command.arg("--demo").arg(demo);
            }
            let output = command
                .stderr(std::process::Stdio::inherit())
                .output()
                .unwrap_or_else(|e| fail(&format!("{exe:?}: {e}")));
            if !output.status.success() {
                fail(&format!("{dataset}/{engine} failed: {}", output.status));
            }
            for line in String::from_utf8_lossy(&output.stdout).lines() {
                if line.starts_with('|') {
                    println!("{line}");
                } else {
                    notes.push(line.to_owned());
                }
            }
        }
    }
    println!();
    for note in notes {
        println!("{note}");
    }
}

/// The command line.
struct Args {
    child: bool,
    rounds: usize,
    datasets: Vec<String>,
    engines: Vec<String>,
    demo: Option<PathBuf>,
}

impl Args {
    fn parse(args: Vec<String>) -> Self {
        let mut parsed = Self {
            child: false,
            rounds: 5,
            datasets: vec!["demo".to_owned(), "wide".to_owned()],
            engines: vec!["decode".to_owned(), "sqlite".to_owned(), "datafusion".to_owned()],
            demo: None,
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut value = || {
                args.next()
                    .unwrap_or_else(|| fail(&format!("{arg} needs a value")))
            };
            match arg.as_str() {
                "--child" => parsed.child = true,
                "--rounds" => {
                    parsed.rounds = value()
                        .parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .unwrap_or_else(|| fail("--rounds: a positive number"));
                }
                "--dataset" => parsed.datasets = one_of(&value(), &["demo", "wide"]),
                "--engine" => {
                    parsed.engines = one_of(&value(), &["decode", "sqlite", "datafusion"]);
                }
                "--demo" => parsed.demo = Some(PathBuf::from(value())),
                other => fail(&format!(
                    "unknown argument {other}: [--rounds N] [--dataset demo|wide|all] [--engine decode|sqlite|datafusion|all] [--demo PATH]"
                )),
            }
        }
        parsed
    }
}

fn one_of(value: &str, known: &[&str]) -> Vec<String> {
    if value == "all" {
        known.iter().map(|k| (*k).to_owned()).collect()
    } else if known.contains(&value) {
        vec![value.to_owned()]
    } else {
        fail(&format!("{value}: one of {known:?} or all"))
    }
}

fn fail(message: &str) -> ! {
    eprintln!("refine-engines: {message}");
    std::process::exit(1)
}

/// Where `dual-response demo` caches the demo dataset (dual-response-server's `dataset::default_path`).
fn demo_path() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("dual-demo").join("ipeds-v1.sqlite")
}

/// One (dataset, engine): store the parent, run the rounds, print the table's rows and a note.
fn child(args: &Args) {
    let dataset = args.datasets[0].as_str();
    let engine = args.engines[0].as_str();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&format!("runtime: {e}")));
    runtime.block_on(async {
        let times = Arc::new(Mutex::new(None));
        let mut builder = DualResponseServer::builder()
            .base_url("http://localhost/resources")
            .wait_for_end()
            .unlimited_resources();
        builder = match engine {
            "sqlite" => builder.refine_engine(Timed {
                inner: Arc::new(SqliteRefiner::default()),
                times: Arc::clone(&times),
            }),
            "decode" => builder.refine_engine(Timed {
                inner: Arc::new(DecodeOnly),
                times: Arc::clone(&times),
            }),
            _ => builder.refine_engine(Timed {
                inner: Arc::new(DataFusionRefiner),
                times: Arc::clone(&times),
            }),
        };
        let (builder, request, queries) = match dataset {
            "demo" => {
                let path = args.demo.clone().unwrap_or_else(demo_path);
                if !path.exists() {
                    fail(&format!(
                        "no demo dataset at {}: run `cargo run --release -p dual-response-server -- demo` once, or pass --demo PATH",
                        path.display()
                    ));
                }
                let db = SqliteDb::open_with(&path, SqliteOptions::default())
                    .unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
                (
                    builder.executor("sql", db.sql_executor()),
                    CreateResponse::new("sql", json!({"sql": "SELECT * FROM degrees_awarded"})),
                    DEMO_QUERIES,
                )
            }
            _ => (
                builder.executor("wide", Wide),
                CreateResponse::new("wide", json!({})),
                WIDE_QUERIES,
            ),
        };
        let server = builder
            .build()
            .unwrap_or_else(|e| fail(&format!("server: {e}")));
        let caller = Caller::anonymous();
        let stored = Instant::now();
        let parent = server
            .create_response(request)
            .await
            .unwrap_or_else(|e| fail(&format!("parent: {e}")));
        // The parent's snapshot complete before any timing: its profile is complete once every row
        // is stored.
        loop {
            match server.profile(parent.id, &caller).await {
                Ok(profile) if profile.complete => break,
                _ => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
        let stored = stored.elapsed();
        let rss_before = status_kib("VmRSS");
        reset_peak_rss();
        for (label, sql) in queries {
            let mut runs = Vec::new();
            let mut rows = 0;
            for round in 0..=args.rounds {
                *times.lock().unwrap_or_else(|e| e.into_inner()) = None;
                let started = Instant::now();
                let refined = server
                    .refine(parent.id, sql, &caller)
                    .await
                    .unwrap_or_else(|e| {
                        fail(&format!(
                            "{engine} {sql}: {}",
                            dual_core::error::Report::new(&e)
                        ))
                    });
                let total = started.elapsed();
                let (load, query) = times
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .map(|t| t.phases())
                    .unwrap_or_else(|| fail("the engine was not called"));
                rows = refined.total_count;
                server
                    .delete_resource(refined.id, &caller)
                    .await
                    .unwrap_or_else(|e| fail(&format!("delete: {e}")));
                if round > 0 {
                    runs.push([load, query, total]);
                }
            }
            println!(
                "| {dataset} ({} rows) | {engine} | {label} | {rows} | {} | {} | {} |",
                parent.total_count,
                summary(&runs, 0),
                summary(&runs, 1),
                summary(&runs, 2),
            );
        }
        let peak = status_kib("VmHWM");
        println!(
            "{dataset}/{engine}: parent stored in {:.1} s; RSS {} MiB before the refinements, peak {} MiB during them",
            stored.as_secs_f64(),
            rss_before / 1024,
            peak / 1024,
        );
    });
}

/// `median (min–max)` of one phase, in milliseconds.
fn summary(runs: &[[Duration; 3]], phase: usize) -> String {
    let mut ms: Vec<f64> = runs.iter().map(|r| r[phase].as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    let median = if ms.len() % 2 == 1 {
        ms[ms.len() / 2]
    } else {
        (ms[ms.len() / 2 - 1] + ms[ms.len() / 2]) / 2.0
    };
    format!(
        "{} ({}–{})",
        fmt_ms(median),
        fmt_ms(ms[0]),
        fmt_ms(ms[ms.len() - 1])
    )
}

fn fmt_ms(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.0}")
    }
}

/// A field of `/proc/self/status`, in KiB (0 where there is none).
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix(field)?
                    .strip_prefix(':')?
                    .trim()
                    .trim_end_matches(" kB")
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0)
}

/// Resets `VmHWM` to the current RSS (Linux 4.0 and later).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The `wide` parent: 1,000,000 rows × 8 columns, the same every run, in batches of 1,000.
struct Wide;

impl QueryExecutor for Wide {
    fn stream(self: Arc<Self>, _params: Value, start: QueryStart) -> RowStream {
        start.started_with_count(WIDE_ROWS);
        let batches = (0..WIDE_ROWS.div_ceil(BATCH_ROWS as u64)).map(|b| {
            let first = b * BATCH_ROWS as u64;
            let last = (first + BATCH_ROWS as u64).min(WIDE_ROWS);
            Ok((first..last).map(wide_row).collect::<RowBatch>())
        });
        Box::pin(stream::iter(batches))
    }
}

const CATEGORIES: [&str; 8] = [
    "books",
    "clothing",
    "electronics",
    "garden",
    "grocery",
    "health",
    "sports",
    "toys",
];

/// Row `i` of `wide`: a SplitMix64 hash of `i` drives every value.
fn wide_row(i: u64) -> Row {
    let mut h = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        h = h.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = h;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let category = CATEGORIES[(next() % CATEGORIES.len() as u64) as usize];
    let region = format!("region-{:02}", next() % 50);
    let quantity = next() % 1_000 + 1;
    let amount = (next() % 1_000_000) as f64 / 100.0;
    let score = (next() % 10_000) as f64 / 100.0;
    let day = next() % 365;
    let date = format!("2025-{:02}-{:02}", day / 31 + 1, day % 28 + 1);
    let label = format!("item-{:07}-{:x}", i, next() % 4096);
    let mut row = Map::new();
    row.insert("id".to_owned(), json!(i));
    row.insert("category".to_owned(), json!(category));
    row.insert("region".to_owned(), json!(region));
    row.insert("quantity".to_owned(), json!(quantity));
    row.insert("amount".to_owned(), json!(amount));
    row.insert("score".to_owned(), json!(score));
    row.insert("day".to_owned(), json!(date));
    row.insert("label".to_owned(), json!(label));
    row
}

/// When a refinement was called, read the parent's last batch, and yielded its last answer batch.
#[derive(Debug, Clone, Copy)]
struct Times {
    called: Instant,
    read: Option<Instant>,
    last: Option<Instant>,
}

impl Times {
    /// (load, query): until the parent's last batch was read, from there to the answer's last batch.
    fn phases(&self) -> (Duration, Duration) {
        let read = self.read.unwrap_or(self.called);
        let last = self.last.unwrap_or(read).max(read);
        (read - self.called, last - read)
    }
}

/// An engine with its time split: load (until it has read the parent's last batch), query (from
/// there to its answer's last batch; the server may stop reading once it has the count's rows, so
/// the end of the stream is not waited for).
#[derive(Debug)]
struct Timed<E> {
    inner: Arc<E>,
    times: Arc<Mutex<Option<Times>>>,
}

impl<E: RefineEngine> RefineEngine for Timed<E> {
    fn check(&self, sql: &str) -> Result<(), ExecutorError> {
        self.inner.check(sql)
    }

    fn refine(self: Arc<Self>, mut input: RefineInput, start: QueryStart) -> RowStream {
        *self.times.lock().unwrap_or_else(|e| e.into_inner()) = Some(Times {
            called: Instant::now(),
            read: None,
            last: None,
        });
        let parent = std::mem::replace(&mut input.rows, Box::pin(stream::empty()));
        let times = Arc::clone(&self.times);
        input.rows = Box::pin(
            parent
                .map(Some)
                .chain(stream::once(async move {
                    if let Some(t) = times.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                        t.read = Some(Instant::now());
                    }
                    None
                }))
                .filter_map(future::ready),
        );
        let times = Arc::clone(&self.times);
        Box::pin(Arc::clone(&self.inner).refine(input, start).inspect(move |_| {
            if let Some(t) = times.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                t.last = Some(Instant::now());
            }
        }))
    }
}

/// The floor under every engine's load: the parent's stored batches read and decoded into rows
/// (`RowBatch::into_rows`, as both engines do), nothing built from them; the answer is one row, the
/// count, whatever the SQL.
#[derive(Debug)]
struct DecodeOnly;

impl RefineEngine for DecodeOnly {
    fn check(&self, _sql: &str) -> Result<(), ExecutorError> {
        Ok(())
    }

    fn refine(self: Arc<Self>, input: RefineInput, start: QueryStart) -> RowStream {
        let RefineInput { rows, .. } = input;
        let answer = async move {
            let count = pipelined(rows, 0u64, |count, rows| {
                *count += rows.len() as u64;
                Ok(())
            })
            .await?;
            start.started_with_count(1);
            let row = json!({ "rows": count }).as_object().cloned().unwrap_or_default();
            Ok::<_, ExecutorError>(stream::iter([Ok(RowBatch::from(vec![row]))]))
        };
        Box::pin(stream::once(answer).try_flatten())
    }
}

/// DataFusion as a `RefineEngine`: the parent's rows into Arrow, a `MemTable` named `result`, the SQL,
/// the answer back to JSON rows.
#[derive(Debug)]
struct DataFusionRefiner;

impl RefineEngine for DataFusionRefiner {
    fn check(&self, _sql: &str) -> Result<(), ExecutorError> {
        // DataFusion's own planner refuses what it will not run (`sql_with_options` below).
        Ok(())
    }

    fn refine(self: Arc<Self>, input: RefineInput, start: QueryStart) -> RowStream {
        let RefineInput {
            sql, columns, rows, ..
        } = input;
        let answer = async move {
            let schema = arrow_schema(&columns);
            let into = Arc::clone(&schema);
            let batches = pipelined(rows, Vec::new(), move |batches, rows| {
                batches.push(to_arrow(&into, &columns, &rows)?);
                Ok(())
            })
            .await?;
            let table = MemTable::try_new(Arc::clone(&schema), vec![batches]).map_err(df)?;
            let ctx = SessionContext::new();
            ctx.register_table("result", Arc::new(table)).map_err(df)?;
            let options = SQLOptions::new()
                .with_allow_ddl(false)
                .with_allow_dml(false)
                .with_allow_statements(false);
            let frame = ctx.sql_with_options(&sql, options).await.map_err(df)?;
            let answer = frame.collect().await.map_err(df)?;
            let total: usize = answer.iter().map(RecordBatch::num_rows).sum();
            start.started_with_count(total as u64);
            let mut out = Vec::with_capacity(total.div_ceil(BATCH_ROWS));
            let mut pending: Vec<Row> = Vec::with_capacity(BATCH_ROWS);
            for batch in &answer {
                for row in to_rows(batch)? {
                    pending.push(row);
                    if pending.len() == BATCH_ROWS {
                        out.push(Ok(RowBatch::from(std::mem::take(&mut pending))));
                    }
                }
            }
            if !pending.is_empty() {
                out.push(Ok(RowBatch::from(pending)));
            }
            Ok::<_, ExecutorError>(stream::iter(out))
        };
        Box::pin(stream::once(answer).try_flatten())
    }
}

/// Loads the parent's rows as dual-sqlite's loader does: its stored batches go, as they are read, to
/// a blocking thread (at most 4 batches ahead) that decodes each (`RowBatch::into_rows`) and hands
/// the rows to `write`; `state` once every batch is written.
async fn pipelined<S: Send + 'static>(
    mut rows: RowStream,
    mut state: S,
    write: impl Fn(&mut S, Vec<Row>) -> Result<(), ExecutorError> + Send + 'static,
) -> Result<S, ExecutorError> {
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<RowBatch>(4);
    let writer = tokio::task::spawn_blocking(move || {
        while let Some(batch) = receiver.blocking_recv() {
            write(&mut state, batch.into_rows()?)?;
        }
        Ok::<_, ExecutorError>(state)
    });
    let mut read_error = None;
    while let Some(batch) = rows.next().await {
        match batch {
            Ok(batch) => {
                if sender.send(batch).await.is_err() {
                    break;
                }
            }
            Err(error) => {
                read_error = Some(error);
                break;
            }
        }
    }
    drop(sender);
    let state = writer
        .await
        .map_err(|error| ExecutorError::new(format!("the load stopped: {error}")))??;
    match read_error {
        Some(error) => Err(error),
        None => Ok(state),
    }
}

fn df(error: datafusion::error::DataFusionError) -> ExecutorError {
    ExecutorError::new(error.to_string())
}

/// The Arrow type of each of the parent's columns: integers `Int64`, numbers `Float64`, booleans
/// `Boolean`, everything else (text, dates, date-times, JSON) `Utf8`, as dual-sqlite declares them.
fn arrow_schema(columns: &[Column]) -> SchemaRef {
    Arc::new(Schema::new(
        columns
            .iter()
            .map(|column| {
                let data_type = match column.column_type {
                    ColumnType::Integer => DataType::Int64,
                    ColumnType::Number => DataType::Float64,
                    ColumnType::Boolean => DataType::Boolean,
                    _ => DataType::Utf8,
                };
                Field::new(&column.name, data_type, true)
            })
            .collect::<Vec<_>>(),
    ))
}

/// One stored batch of JSON rows as a `RecordBatch` of `schema` (a value that does not fit its
/// column is an error, as a typed engine must refuse it or cast it).
fn to_arrow(schema: &SchemaRef, columns: &[Column], rows: &[Row]) -> Result<RecordBatch, ExecutorError> {
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(columns.len());
    for (column, field) in columns.iter().zip(schema.fields()) {
        let values = rows
            .iter()
            .map(|row| row.get(&column.name).unwrap_or(&Value::Null));
        let misfit =
            |value: &Value| ExecutorError::new(format!("{value} does not fit the column {}", column.name));
        let array: ArrayRef = match field.data_type() {
            DataType::Int64 => {
                let mut builder = Int64Builder::with_capacity(rows.len());
                for value in values {
                    match value {
                        Value::Null => builder.append_null(),
                        v => builder.append_value(v.as_i64().ok_or_else(|| misfit(v))?),
                    }
                }
                Arc::new(builder.finish())
            }
            DataType::Float64 => {
                let mut builder = Float64Builder::with_capacity(rows.len());
                for value in values {
                    match value {
                        Value::Null => builder.append_null(),
                        v => builder.append_value(v.as_f64().ok_or_else(|| misfit(v))?),
                    }
                }
                Arc::new(builder.finish())
            }
            DataType::Boolean => {
                let mut builder = BooleanBuilder::with_capacity(rows.len());
                for value in values {
                    match value {
                        Value::Null => builder.append_null(),
                        v => builder.append_value(v.as_bool().ok_or_else(|| misfit(v))?),
                    }
                }
                Arc::new(builder.finish())
            }
            _ => {
                let mut builder = StringBuilder::with_capacity(rows.len(), rows.len() * 16);
                for value in values {
                    match value {
                        Value::Null => builder.append_null(),
                        Value::String(s) => builder.append_value(s),
                        other => builder.append_value(other.to_string()),
                    }
                }
                Arc::new(builder.finish())
            }
        };
        arrays.push(array);
    }
    RecordBatch::try_new(Arc::clone(schema), arrays).map_err(|e| ExecutorError::new(e.to_string()))
}

/// An answer's `RecordBatch` as JSON rows.
fn to_rows(batch: &RecordBatch) -> Result<Vec<Row>, ExecutorError> {
    let schema = batch.schema();
    let mut rows: Vec<Row> = (0..batch.num_rows())
        .map(|_| Map::with_capacity(batch.num_columns()))
        .collect();
    for (field, array) in schema.fields().iter().zip(batch.columns()) {
        let values = json_values(array)?;
        for (row, value) in rows.iter_mut().zip(values) {
            row.insert(field.name().clone(), value);
        }
    }
    Ok(rows)
}

/// An Arrow array's values as JSON (numbers, booleans, text; anything else as Arrow displays it).
fn json_values(array: &ArrayRef) -> Result<Vec<Value>, ExecutorError> {
    macro_rules! primitive {
        ($t:ty) => {
            array
                .as_primitive::<$t>()
                .iter()
                .map(|v| v.map_or(Value::Null, |v| json!(v)))
                .collect()
        };
    }
    let values = match array.data_type() {
        DataType::Int8 => primitive!(Int8Type),
        DataType::Int16 => primitive!(Int16Type),
        DataType::Int32 => primitive!(Int32Type),
        DataType::Int64 => primitive!(Int64Type),
        DataType::UInt8 => primitive!(UInt8Type),
        DataType::UInt16 => primitive!(UInt16Type),
        DataType::UInt32 => primitive!(UInt32Type),
        DataType::UInt64 => primitive!(UInt64Type),
        DataType::Float32 => primitive!(Float32Type),
        DataType::Float64 => primitive!(Float64Type),
        DataType::Boolean => array
            .as_boolean()
            .iter()
            .map(|v| v.map_or(Value::Null, Value::Bool))
            .collect(),
        DataType::Utf8 => array
            .as_string::<i32>()
            .iter()
            .map(|v| v.map_or(Value::Null, |s| Value::String(s.to_owned())))
            .collect(),
        DataType::LargeUtf8 => array
            .as_string::<i64>()
            .iter()
            .map(|v| v.map_or(Value::Null, |s| Value::String(s.to_owned())))
            .collect(),
        DataType::Utf8View => array
            .as_string_view()
            .iter()
            .map(|v| v.map_or(Value::Null, |s| Value::String(s.to_owned())))
            .collect(),
        _ => {
            let formatter = ArrayFormatter::try_new(array.as_ref(), &FormatOptions::default())
                .map_err(|e| ExecutorError::new(e.to_string()))?;
            (0..array.len())
                .map(|i| {
                    if array.is_null(i) {
                        Value::Null
                    } else {
                        Value::String(formatter.value(i).to_string())
                    }
                })
                .collect()
        }
    };
    Ok(values)
}
