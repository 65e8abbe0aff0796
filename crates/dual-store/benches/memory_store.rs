//! `MemoryStore` holding 1,000,000 resources (issue 2; figures in `docs/PERFORMANCE.md`):
//!
//! * (a) `get` and `record_access` medians, measured by criterion;
//! * (b) purging 100,000 expired resources among the 1,000,000 (target ≤ 100 ms), timed over a few rounds;
//! * (c) the longest single `get` of concurrent readers while that purge runs (target ≤ 1 ms), with p99.
//!
//! The resources that are read and purged are realistic: 15 sample rows of 5 columns, about 18 KB each
//! in memory. A million of those would need about 18 GB, so the other 800,000 live resources carry one
//! sample row each, about 3 KB (`DUAL_BENCH_ALL_REALISTIC=1` makes them realistic too, given the
//! memory). The store's hash map and expiry index hold the full million either way.
//!
//! Readers also run for a moment before each purge: on a shared machine the longest call is set by the
//! operating system's scheduling, and that noise floor is printed next to the figures during the purge.
//!
//! Run with `cargo bench -p dual-store --bench memory_store`. Without `--bench` (as `cargo test
//! --benches` runs it) it does a quick smoke run on 20,000 resources. `DUAL_BENCH_RECORDS` sets the
//! number of resources.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use criterion::Criterion;
use dual_core::{Column, ColumnType, QuerySpec, ResourceId, ResourceRecord, Row};
use dual_store::{Lookup, MemoryStore, ResourceStore, Viewer};
use serde_json::json;
use time::OffsetDateTime;

/// How many concurrent reader tasks run during a purge.
const READERS: usize = 2;
/// Readers yield to the scheduler after this many calls, so the purge task always gets a worker.
const CALLS_PER_YIELD: usize = 16;
/// How long readers run before the purge starts, to measure the machine's noise floor.
const BASELINE: Duration = Duration::from_millis(300);
/// How long readers run at most after the purge returns, while the purged records are freed.
const MAX_TAIL: Duration = Duration::from_millis(1_500);

/// Sample rows of a realistic resource (the default sample size).
const SAMPLE_ROWS: usize = 15;

struct Plan {
    /// Resources held during a purge.
    records: usize,
    /// Expired resources purged per round; as many live realistic ones are read.
    expired: usize,
    /// Sample rows of the other live resources.
    background_rows: usize,
    /// Purge rounds.
    rounds: usize,
}

fn main() {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let records = std::env::var("DUAL_BENCH_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if bench_mode { 1_000_000 } else { 20_000 });
    let plan = Plan {
        records,
        expired: records / 10,
        background_rows: if std::env::var_os("DUAL_BENCH_ALL_REALISTIC").is_some() {
            SAMPLE_ROWS
        } else {
            1
        },
        rounds: if bench_mode { 5 } else { 1 },
    };
    let now = OffsetDateTime::now_utc();
    let store = MemoryStore::new();
    let (live, light) = load(&store, &plan, now);
    let live = Arc::new(live);

    let mut criterion = Criterion::default()
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    bench_lookups(&mut criterion, &store, &live, &light, &plan, now);
    drop(light);

    let purges = purge_rounds(&store, &live, &plan, now, None);
    let mut released: Vec<Duration> = purges.iter().map(|r| r.released).collect();
    released.sort_unstable();
    let tail = median(&released).clamp(Duration::from_millis(100), MAX_TAIL);
    let under_load = purge_rounds(&store, &live, &plan, now, Some(tail));
    report(&plan, &released, &purges, &under_load);
    criterion.final_summary();
}

/// Saves the live resources: `expired` realistic ones, whose ids it returns for the readers, and light
/// ones (one sample row) up to `records - expired`. The expired ones are added before each purge round.
fn load(store: &MemoryStore, plan: &Plan, now: OffsetDateTime) -> (Vec<ResourceId>, Vec<ResourceId>) {
    let started = Instant::now();
    let live_until = now + time::Duration::days(1);
    let save = |r: &ResourceRecord| ready(store.save(r)).unwrap_or_else(|e| panic!("save: {e}"));
    let realistic: Vec<ResourceId> = (0..plan.expired)
        .map(|i| {
            let r = resource(i, now, Some(live_until), SAMPLE_ROWS);
            save(&r);
            r.id
        })
        .collect();
    let mut light = Vec::with_capacity(plan.expired);
    for i in 0..plan.records - 2 * plan.expired {
        let r = resource(i, now, Some(live_until), plan.background_rows);
        save(&r);
        if light.len() < plan.expired {
            light.push(r.id);
        }
    }
    println!(
        "loaded {} live resources ({} realistic) in {:.1?}; RSS {}",
        store.len(),
        realistic.len(),
        started.elapsed(),
        rss()
    );
    (realistic, light)
}

/// A resource with `rows` sample rows of 5 columns, a query with parameters, an owner, metadata.
fn resource(
    i: usize,
    now: OffsetDateTime,
    expires_at: Option<OffsetDateTime>,
    rows: usize,
) -> ResourceRecord {
    let sample: Vec<Row> = (0..rows)
        .map(|r| {
            let n = i * 15 + r;
            let row = json!({
                "id": n,
                "name": format!("University of Somewhere {n}"),
                "state": "NJ",
                "enrollment": (n * 7_919) % 50_000,
                "gpa": 2.0 + (n % 200) as f64 / 100.0,
            });
            row.as_object().cloned().unwrap_or_default()
        })
        .collect();
    ResourceRecord {
        id: ResourceId::new(),
        name: "Institution Search Results".to_owned(),
        query: QuerySpec::new(
            "institutions",
            json!({"state": "NJ", "control": "public", "min_enrollment": i % 1_000}),
        ),
        columns: vec![
            Column::new("id", ColumnType::Integer),
            Column::new("name", ColumnType::String),
            Column::new("state", ColumnType::String),
            Column::new("enrollment", ColumnType::Integer),
            Column::new("gpa", ColumnType::Number),
        ],
        total_count: 847,
        spooled_rows: None,
        sample: sample.into(),
        created_at: now,
        expires_at,
        access_count: 0,
        last_accessed_at: None,
        owner: Some(format!("tenant-{}", i % 100)),
        metadata: json!({"tool": "search_institutions"}),
        consistency: dual_core::consistency::Consistency::Snapshot,
        status: dual_core::status::ResourceStatus::Ready,
        lease_expires_at: None,
        failure: None,
    }
}

fn bench_lookups(
    c: &mut Criterion,
    store: &MemoryStore,
    live: &[ResourceId],
    light: &[ResourceId],
    plan: &Plan,
    now: OffsetDateTime,
) {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let name = |op: &str| format!("memory_store/{op} ({} resources)", plan.records - plan.expired);
    // `live` holds ids of realistic resources, `light` of the others.
    c.bench_function(&name(&format!("get, {SAMPLE_ROWS}-row sample")), |b| {
        b.iter(|| {
            let id = live[rng.below(live.len())];
            black_box(ready(store.get(black_box(id), now)))
        });
    });
    c.bench_function(&name(&format!("get, {}-row sample", plan.background_rows)), |b| {
        b.iter(|| {
            let id = light[rng.below(light.len())];
            black_box(ready(store.get(black_box(id), now)))
        });
    });
    c.bench_function(&name(&format!("record_access, {SAMPLE_ROWS}-row sample")), |b| {
        b.iter(|| {
            let id = live[rng.below(live.len())];
            black_box(ready(store.record_access(black_box(id), Viewer::Anonymous, now)))
        });
    });
}

/// One purge round's figures.
struct Round {
    /// How long `purge_expired` took.
    purge: Duration,
    /// From the purge's return until the purged records' memory was freed (in the background).
    released: Duration,
    /// The latency of every reader call made before the purge started: the machine's noise floor.
    before: Vec<Duration>,
    /// The latency of every reader call made while the purge ran.
    during: Vec<Duration>,
    /// The latency of every reader call made in the tail after it, while the purged records are freed.
    after: Vec<Duration>,
}

/// Adds `expired` resources, then purges them at an instant after their expiry, `rounds` times, each on a
/// fresh two-worker runtime whose shutdown waits for the background freeing. With `tail`, reader tasks
/// time every `get` from [`BASELINE`] before the purge until `tail` after it returns.
fn purge_rounds(
    store: &MemoryStore,
    live: &Arc<Vec<ResourceId>>,
    plan: &Plan,
    now: OffsetDateTime,
    tail: Option<Duration>,
) -> Vec<Round> {
    let expires_at = now + time::Duration::minutes(15);
    let purge_at = now + time::Duration::minutes(20);
    (0..plan.rounds)
        .map(|round| {
            for i in 0..plan.expired {
                let r = resource(i, now, Some(expires_at), SAMPLE_ROWS);
                ready(store.save(&r)).unwrap_or_else(|e| panic!("save: {e}"));
            }
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_time()
                .build()
                .unwrap_or_else(|e| panic!("runtime: {e}"));
            let mut round = runtime.block_on(async {
                let done = Arc::new(AtomicBool::new(false));
                let readers = if tail.is_some() { READERS } else { 0 };
                let tasks: Vec<_> = (0..readers)
                    .map(|t| {
                        let reader = read_until(store.clone(), Arc::clone(live), Arc::clone(&done), t, now);
                        tokio::spawn(reader)
                    })
                    .collect();
                if tail.is_some() {
                    tokio::time::sleep(BASELINE).await;
                }
                let started = Instant::now();
                let purged = store
                    .purge_expired(purge_at)
                    .await
                    .unwrap_or_else(|e| panic!("purge: {e}"));
                let finished = Instant::now();
                assert_eq!(
                    purged, plan.expired as u64,
                    "round {round} purged the expired resources"
                );
                if let Some(tail) = tail {
                    tokio::time::sleep(tail).await;
                }
                done.store(true, Ordering::Release);
                let (mut before, mut during, mut after) = (Vec::new(), Vec::new(), Vec::new());
                for task in tasks {
                    for (at, latency) in task.await.unwrap_or_else(|e| panic!("reader: {e}")) {
                        match at {
                            at if at < started => &mut before,
                            at if at < finished => &mut during,
                            _ => &mut after,
                        }
                        .push(latency);
                    }
                }
                Round {
                    purge: finished - started,
                    released: finished.elapsed(),
                    before,
                    during,
                    after,
                }
            });
            // Dropping the runtime waits for its blocking pool, where the purged records are freed.
            let shutdown = Instant::now();
            drop(runtime);
            round.released += shutdown.elapsed();
            round
        })
        .collect()
}

/// Loops `get` on random live ids until `done`, returning when each call started and how long it took.
async fn read_until(
    store: MemoryStore,
    live: Arc<Vec<ResourceId>>,
    done: Arc<AtomicBool>,
    seed: usize,
    now: OffsetDateTime,
) -> Vec<(Instant, Duration)> {
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D ^ (seed as u64 + 1));
    let mut latencies = Vec::with_capacity(1 << 16);
    while !done.load(Ordering::Acquire) {
        for _ in 0..CALLS_PER_YIELD {
            let id = live[rng.below(live.len())];
            let started = Instant::now();
            let lookup = store.get(id, now).await;
            latencies.push((started, started.elapsed()));
            assert!(
                matches!(lookup, Ok(Lookup::Found(_))),
                "a live resource is found during the purge"
            );
        }
        tokio::task::yield_now().await;
    }
    latencies
}

fn report(plan: &Plan, released: &[Duration], purges: &[Round], under_load: &[Round]) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let sorted = |rounds: &[Round]| {
        let mut v: Vec<Duration> = rounds.iter().map(|r| r.purge).collect();
        v.sort_unstable();
        v
    };
    let list = |v: &[Duration]| {
        v.iter()
            .map(|d| format!("{:.1}", ms(*d)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (alone, loaded) = (sorted(purges), sorted(under_load));
    println!();
    println!(
        "== purge of {} expired among {} resources, {} rounds ==",
        plan.expired, plan.records, plan.rounds
    );
    println!(
        "purge alone:        median {:.1} ms   (sorted rounds: {} ms; target <= 100 ms)",
        ms(median(&alone)),
        list(&alone)
    );
    println!(
        "purge with readers: median {:.1} ms   (sorted rounds: {} ms)",
        ms(median(&loaded)),
        list(&loaded)
    );
    println!(
        "memory of the purged records freed (blocking pool) after purge returned: median {:.1} ms \
         (sorted rounds: {} ms)",
        ms(median(released)),
        list(released)
    );
    println!(
        "== {READERS} concurrent readers (get on random live ids) during the purge, then while freeing =="
    );
    let (mut maxes, mut p99s, mut floors) = (Vec::new(), Vec::new(), Vec::new());
    for (i, round) in under_load.iter().enumerate() {
        let mut line = format!("round {i}:");
        for (phase, reads) in [
            ("before purge", &round.before),
            ("during purge", &round.during),
            ("while freeing", &round.after),
        ] {
            let mut reads = reads.clone();
            reads.sort_unstable();
            let max = reads.last().copied().unwrap_or_default();
            line += &format!(
                "\n  {phase:>13}: {:>6} gets, p50 {:>6.1} µs, p99 {:>7.1} µs, \
                 p99.9 {:>8.1} µs, max {:>8.1} µs, {:>3} over 1 ms",
                reads.len(),
                us(pct(&reads, 0.50)),
                us(pct(&reads, 0.99)),
                us(pct(&reads, 0.999)),
                us(max),
                reads.iter().filter(|d| **d > Duration::from_millis(1)).count()
            );
            if phase == "before purge" {
                floors.push(max);
            }
            if phase == "during purge" {
                maxes.push(max);
                p99s.push(pct(&reads, 0.99));
            }
        }
        println!("{line}");
    }
    maxes.sort_unstable();
    p99s.sort_unstable();
    floors.sort_unstable();
    println!(
        "reader wait during purge: longest (median of rounds) {:.1} µs, worst round {:.1} µs \
         (target <= 1000 µs); p99 (median of rounds) {:.1} µs; \
         longest before the purge (noise floor, median of rounds) {:.1} µs",
        us(median(&maxes)),
        us(maxes.last().copied().unwrap_or_default()),
        us(median(&p99s)),
        us(median(&floors))
    );
    println!("RSS at the end: {}", rss());
}

fn median(sorted: &[Duration]) -> Duration {
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 * p) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(i).copied().unwrap_or_default()
}

/// Polls a future that completes without waiting (every `MemoryStore` call does) to its output.
fn ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a MemoryStore call waited"),
    }
}

/// The resident set size, from `/proc/self/status` where there is one.
fn rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .map(|l| l[6..].trim().to_owned())
        })
        .unwrap_or_else(|| "n/a".to_owned())
}

/// A small deterministic generator for picking ids.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}
