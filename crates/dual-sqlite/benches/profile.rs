//! What the column profile costs the snapshot writer (issue 45: ≤ 10% of its time on 1,000,000 rows
//! × 8 columns, profile on against off, in one run).
//!
//! Run: `cargo bench -p dual-sqlite --bench profile` (`BENCH_ROWS`, `BENCH_ROUNDS` to change the
//! defaults of 1,000,000 rows and 7 rounds). For instruction counts (repeatable on a busy machine),
//! `BENCH_FILL_ONLY=1 BENCH_DB=/tmp/t.sqlite` writes the file once, then `BENCH_ONLY=on` and
//! `BENCH_ONLY=off` (with the same `BENCH_DB`) each run one write under `valgrind --tool=callgrind`.
//!
//! One SQLite file of `BENCH_ROWS` rows and 8 columns (an integer key, a float, a category of 20
//! texts, a unique name, a date, a boolean, an integer that is null in 3 rows of 10, a skewed
//! amount) and two servers over it, alike but for `column_profile(on|off)`. A round times, on each
//! server in turn (the order alternating), `create_response` of `SELECT * FROM t` until its snapshot
//! is written (the record polled every 2 ms), then deletes the result. The writer's time is the
//! wall time of that; the process's CPU time (user + system, from `/proc/self/stat`) over the same
//! span is printed beside it. Medians of the rounds and their ratio.

use std::path::Path;
use std::time::{Duration, Instant};

use dual_server::{Caller, CreateResponse, DualResponseServer};
use dual_sqlite::SqliteDb;
use serde_json::json;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn fill(path: &Path, rows: u64) -> rusqlite::Result<()> {
    let mut db = rusqlite::Connection::open(path)?;
    db.execute_batch(
        "CREATE TABLE t (id INTEGER, ratio REAL, category TEXT, name TEXT, day TEXT, flag INTEGER, \
         maybe INTEGER, amount REAL)",
    )?;
    let tx = db.transaction()?;
    {
        let mut insert = tx.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?;
        for i in 0..rows {
            let maybe = (i % 10 >= 3).then_some(i % 997);
            let day = format!("20{:02}-{:02}-{:02}", 10 + i % 15, 1 + i % 12, 1 + i % 28);
            insert.execute(rusqlite::params![
                i as i64,
                (i % 1000) as f64 / 7.0,
                format!("category {}", i % 20),
                format!("Institution number {i}"),
                day,
                i % 2 == 0,
                maybe.map(|m| m as i64),
                ((i * 7919) % 100_000) as f64 * ((i % 13) as f64 + 0.5),
            ])?;
        }
    }
    tx.commit()
}

fn server(db: &SqliteDb, profile: bool) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor("sql", db.sql_executor())
        .column_profile(profile)
        .query_time_limit(Duration::from_secs(600))
        .build()
        .expect("server")
}

/// User + system CPU time of this process so far.
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|i| fields.get(*i).and_then(|f| f.parse::<u64>().ok()))
        .sum();
    // Linux reports clock ticks of 1/100 s.
    Duration::from_millis(ticks * 10)
}

/// One write of the whole result: (wall, CPU).
async fn write_once(server: &DualResponseServer) -> (Duration, Duration) {
    let (start, cpu_start) = (Instant::now(), cpu());
    let response = server
        .create_response(CreateResponse::new("sql", json!({"sql": "SELECT * FROM t"})))
        .await
        .expect("created");
    loop {
        let record = server
            .get_resource(response.id, &Caller::anonymous())
            .await
            .expect("record");
        if !record.is_running() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let timed = (start.elapsed(), cpu() - cpu_start);
    server
        .delete_resource(response.id, &Caller::anonymous())
        .await
        .expect("deleted");
    timed
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// `BENCH_ONLY=on|off` with `BENCH_DB=path`: one write of the result on one server, nothing else
/// (the file filled by an earlier run with `BENCH_FILL_ONLY=1`), so that `valgrind --tool=callgrind`
/// counts the instructions of a write with the profile and of one without, whatever else the
/// machine is doing (docs/PERFORMANCE.md).
fn one_write(only: &str) {
    let path = std::env::var("BENCH_DB").expect("BENCH_DB: the file a BENCH_FILL_ONLY run wrote");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let db = SqliteDb::open(Path::new(&path), 4, Duration::from_secs(3600)).expect("db");
        let server = server(&db, only == "on");
        let (wall, cpu) = write_once(&server).await;
        println!(
            "profile {only}: one write, {:.1} ms wall, {:.1} ms CPU",
            wall.as_secs_f64() * 1e3,
            cpu.as_secs_f64() * 1e3
        );
    });
}

fn main() {
    if let Ok(only) = std::env::var("BENCH_ONLY") {
        one_write(&only);
        return;
    }
    let rows = env("BENCH_ROWS", 1_000_000);
    let rounds = env("BENCH_ROUNDS", 7).max(1);
    if let Ok(path) = std::env::var("BENCH_FILL_ONLY").map(|_| std::env::var("BENCH_DB").expect("BENCH_DB")) {
        let _ = std::fs::remove_file(&path);
        fill(Path::new(&path), rows).expect("filled");
        println!("{rows} rows × 8 columns written to {path}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("dual-profile-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("t.sqlite");
    let filled = Instant::now();
    fill(&path, rows).expect("filled");
    println!(
        "{rows} rows × 8 columns written in {:.1} s",
        filled.elapsed().as_secs_f64()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let db = SqliteDb::open(&path, 4, Duration::from_secs(600)).expect("db");
        let on = server(&db, true);
        let off = server(&db, false);
        // Warm the page cache and the spool once each.
        write_once(&on).await;
        write_once(&off).await;
        let (mut on_times, mut off_times) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            let order = if round % 2 == 0 {
                [true, false]
            } else {
                [false, true]
            };
            for profile in order {
                let (server, times) = if profile {
                    (&on, &mut on_times)
                } else {
                    (&off, &mut off_times)
                };
                times.push(write_once(server).await);
            }
        }
        let wall = |times: &[(Duration, Duration)]| median(times.iter().map(|t| t.0).collect());
        let cpu = |times: &[(Duration, Duration)]| median(times.iter().map(|t| t.1).collect());
        let (on_wall, off_wall) = (wall(&on_times), wall(&off_times));
        let (on_cpu, off_cpu) = (cpu(&on_times), cpu(&off_times));
        println!("rounds: {rounds} (medians)");
        println!(
            "profile off: {:>8.1} ms wall, {:>8.1} ms CPU",
            off_wall.as_secs_f64() * 1e3,
            off_cpu.as_secs_f64() * 1e3
        );
        println!(
            "profile on:  {:>8.1} ms wall, {:>8.1} ms CPU",
            on_wall.as_secs_f64() * 1e3,
            on_cpu.as_secs_f64() * 1e3
        );
        println!(
            "cost of the profile: {:+.1}% wall, {:+.1}% CPU",
            (on_wall.as_secs_f64() / off_wall.as_secs_f64() - 1.0) * 100.0,
            (on_cpu.as_secs_f64() / off_cpu.as_secs_f64() - 1.0) * 100.0
        );
        let all: Vec<String> = on_times
            .iter()
            .zip(&off_times)
            .map(|(on, off)| format!("{:.0}/{:.0}", on.0.as_secs_f64() * 1e3, off.0.as_secs_f64() * 1e3))
            .collect();
        println!("every round, on/off ms: {}", all.join(" "));
    });
    let _ = std::fs::remove_dir_all(&dir);
}
