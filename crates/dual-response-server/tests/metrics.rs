//! `serve --metrics-addr` against the real binary: a tool call, a sorted page, a 404 and a DELETE
//! move the counters and gauges of docs/METRICS.md with the right labels; the metrics listener
//! serves `GET /metrics` only; and without the flag the process listens on one port only.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use http::{Method, StatusCode, header};
use serde_json::json;
use support::http::{Http, Reply};
use support::{Instance, LIMIT, create_via_mcp, id_of, rest_client, within};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::time::timeout;

/// One scrape: every sample by `name{label="value",…}` (labels sorted), and the raw text.
#[derive(Debug)]
struct Scrape {
    samples: BTreeMap<String, f64>,
    text: String,
}

impl Scrape {
    /// The sample `name` with exactly `labels`; `None` when the page does not have it.
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        self.samples.get(&series(name, labels)).copied()
    }

    /// The sample, or 0 when absent (a counter never incremented).
    fn count(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels).unwrap_or(0.0)
    }
}

fn series(name: &str, labels: &[(&str, &str)]) -> String {
    let mut labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    labels.sort();
    if labels.is_empty() {
        name.to_owned()
    } else {
        format!("{name}{{{}}}", labels.join(","))
    }
}

/// Parses the Prometheus text format (the subset the exporter writes: no escapes in our labels).
fn parse(text: &str) -> BTreeMap<String, f64> {
    let mut samples = BTreeMap::new();
    for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (key, value) = line.rsplit_once(' ').expect("a sample line");
        let value: f64 = value.parse().expect("a number");
        let key = match key.split_once('{') {
            None => key.to_owned(),
            Some((name, labels)) => {
                let labels: Vec<(&str, &str)> = labels
                    .trim_end_matches('}')
                    .split(',')
                    .filter(|pair| !pair.is_empty())
                    .map(|pair| {
                        let (k, v) = pair.split_once('=').expect("label=value");
                        (k, v.trim_matches('"'))
                    })
                    .collect();
                series(name, &labels)
            }
        };
        samples.insert(key, value);
    }
    samples
}

/// The metrics address the instance printed.
fn metrics_addr(instance: &Instance) -> SocketAddr {
    instance
        .log()
        .lines()
        .find_map(|line| line.strip_prefix("dual-response: metrics http://"))
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .and_then(|addr| addr.parse().ok())
        .unwrap_or_else(|| panic!("no metrics address in the log:\n{}", instance.log()))
}

async fn scrape(metrics: &Http) -> Scrape {
    let reply = metrics
        .send(metrics.request(Method::GET, "/metrics", None), "")
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let content_type = reply
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    assert_eq!(content_type, Some("text/plain; version=0.0.4; charset=utf-8"));
    let text = reply.text();
    Scrape {
        samples: parse(&text),
        text,
    }
}

/// Scrapes until `ready` holds (at most 10 s: sweeps run every second here).
async fn scrape_until(metrics: &Http, what: &str, ready: impl Fn(&Scrape) -> bool) -> Scrape {
    for _ in 0..100 {
        let scrape = scrape(metrics).await;
        if ready(&scrape) {
            return scrape;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: not seen within 10 s:\n{}", scrape(metrics).await.text);
}

const ITEM_POST_200: &[(&str, &str)] = &[("route", "item"), ("method", "POST"), ("status", "200")];
const ITEM_GET_404: &[(&str, &str)] = &[("route", "item"), ("method", "GET"), ("status", "404")];
const ITEM_DELETE_204: &[(&str, &str)] = &[("route", "item"), ("method", "DELETE"), ("status", "204")];
const MEMORY: &[(&str, &str)] = &[("tier", "memory")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_queries_sorts_spool_and_sweeps_are_reported() {
    within(LIMIT, async {
        let instance =
            Instance::start_memory(&["--metrics-addr", "127.0.0.1:0", "--cleanup-interval-secs", "1"]).await;
        let metrics = Http::new(metrics_addr(&instance));
        let before = scrape(&metrics).await;
        assert!(
            before.text.contains("# HELP dual_queries_running "),
            "{}",
            before.text
        );
        assert_eq!(before.get("dual_queries_running", &[]), Some(0.0));
        assert_eq!(
            before.get("dual_spool_limit_bytes", MEMORY),
            Some(f64::from(256u32 << 20))
        );
        assert_eq!(before.get("dual_live_resources_limit", &[]), Some(100_000.0));

        // A tool call: a snapshot in the memory spool, one live resource.
        let rest = rest_client(&instance);
        let parsed = create_via_mcp(&instance, &rest).await;
        let id = id_of(&parsed);
        let created = scrape_until(&metrics, "one live resource", |s| {
            s.get("dual_live_resources", &[]) == Some(1.0)
        })
        .await;
        assert!(
            created.count("dual_spool_bytes", MEMORY) > 0.0,
            "{}",
            created.text
        );
        assert!(created.count("dual_requests_total", &[("endpoint", "mcp"), ("status", "200")]) >= 1.0);
        assert_eq!(created.get("dual_queries_running", &[]), Some(0.0));
        assert_eq!(created.get("dual_queries_pending", &[]), Some(0.0));

        // A sorted page, a 404 and a DELETE through the REST API.
        let api = Http::new(instance.addr());
        let page = api
            .page(
                &id,
                &json!({"limit": 5, "sort": {"field": "name", "order": "desc"}}),
            )
            .await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text());
        let missing = format!("/resources/{}", dual_core::ResourceId::new());
        let not_found = api.send(api.request(Method::GET, &missing, None), "").await;
        assert_eq!(not_found.status, StatusCode::NOT_FOUND);
        let deleted = api
            .send(api.request(Method::DELETE, &format!("/resources/{id}"), None), "")
            .await;
        assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.text());

        let after = scrape_until(&metrics, "no live resource after the DELETE", |s| {
            s.get("dual_live_resources", &[]) == Some(0.0)
        })
        .await;
        let moved =
            |name: &str, labels: &[(&str, &str)]| after.count(name, labels) - before.count(name, labels);
        assert_eq!(
            moved("dual_http_requests_total", ITEM_POST_200),
            1.0,
            "{}",
            after.text
        );
        assert_eq!(moved("dual_http_requests_total", ITEM_GET_404), 1.0);
        assert_eq!(moved("dual_http_requests_total", ITEM_DELETE_204), 1.0);
        assert_eq!(moved("dual_http_rejections_total", &[("code", "not_found")]), 1.0);
        assert_eq!(
            moved("dual_requests_total", &[("endpoint", "rest"), ("status", "204")]),
            1.0
        );
        assert_eq!(moved("dual_sorts_total", &[]), 1.0);
        assert_eq!(after.get("dual_sorts_in_flight", &[]), Some(0.0));
        assert_eq!(
            after.get("dual_spool_bytes", MEMORY),
            Some(0.0),
            "the DELETE freed the snapshot"
        );
        assert!(after.count("dual_sweeps_total", &[("outcome", "ok")]) >= 2.0);
        assert_eq!(after.count("dual_sweeps_total", &[("outcome", "failed")]), 0.0);
        // No label carries an id.
        assert!(!after.text.contains(&id), "{}", after.text);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_listener_serves_get_metrics_only() {
    within(LIMIT, async {
        let instance = Instance::start_memory(&["--metrics-addr", "127.0.0.1:0"]).await;
        let addr = metrics_addr(&instance);
        let metrics = Http::new(addr);
        let other: Reply = metrics
            .send(metrics.request(Method::GET, "/resources", None), "")
            .await;
        assert_eq!(other.status, StatusCode::NOT_FOUND);
        let post = metrics
            .send(metrics.request(Method::POST, "/metrics", None), "x")
            .await;
        assert_eq!(post.status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(
            post.headers.get(header::ALLOW).and_then(|v| v.to_str().ok()),
            Some("GET, HEAD")
        );
        let head = metrics
            .send(metrics.request(Method::HEAD, "/metrics", None), "")
            .await;
        assert_eq!((head.status, head.body.len()), (StatusCode::OK, 0));
        // The API is not on the metrics port, and the metrics are not on the API's.
        let api = Http::new(instance.addr());
        let reply = api.send(api.request(Method::GET, "/metrics", None), "").await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
        let mut pid_ports = listening_ports(instance.pid());
        pid_ports.sort_unstable();
        let mut expected = vec![instance.addr().port(), addr.port()];
        expected.sort_unstable();
        assert_eq!(pid_ports, expected, "the API's and the metrics' listeners");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_listener_is_bounded_by_its_connection_cap_and_the_header_timeout() {
    within(LIMIT, async {
        let instance = Instance::start_memory(&[
            "--metrics-addr",
            "127.0.0.1:0",
            "--metrics-max-connections",
            "1",
            "--header-timeout-secs",
            "1",
        ])
        .await;
        let addr = metrics_addr(&instance);
        // A client that connects and sends nothing holds the only slot...
        let started = Instant::now();
        let mut silent = TcpStream::connect(addr).await.expect("connect");
        tokio::time::sleep(Duration::from_millis(100)).await;
        // ...so a scrape waits in the backlog,
        let metrics = Http::new(addr);
        let scrape = tokio::spawn(async move { scrape(&metrics).await });
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(!scrape.is_finished(), "the scrape waits for the slot");
        // until the header timeout closes the silent connection (about 1 s).
        let mut buf = [0u8; 64];
        let read = timeout(Duration::from_secs(5), silent.read(&mut buf)).await;
        assert!(matches!(read, Ok(Ok(0) | Err(_))), "closed: {read:?}");
        let closed_after = started.elapsed();
        assert!(
            (Duration::from_millis(900)..Duration::from_secs(3)).contains(&closed_after),
            "closed after {closed_after:?}"
        );
        let scraped = timeout(Duration::from_secs(5), scrape)
            .await
            .expect("the waiting scrape is served once the slot is free")
            .expect("the scrape task");
        assert!(
            scraped.get("dual_queries_running", &[]).is_some(),
            "{}",
            scraped.text
        );
        assert!(started.elapsed() >= closed_after);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_flag_nothing_else_listens() {
    within(LIMIT, async {
        let instance = Instance::start_memory(&[]).await;
        let log = instance.log();
        assert!(
            !log.contains("dual-response: metrics") && !log.contains("serving metrics"),
            "{log}"
        );
        assert_eq!(listening_ports(instance.pid()), vec![instance.addr().port()]);
    })
    .await;
}

/// The TCP ports process `pid` listens on: its sockets (`/proc/PID/fd`) in the LISTEN state of its
/// network namespace's tables (`/proc/PID/net/tcp`, `tcp6`).
fn listening_ports(pid: u32) -> Vec<u16> {
    let inodes: BTreeSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("the child's descriptors")
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            Some(target.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    let mut ports = Vec::new();
    for table in ["tcp", "tcp6"] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address is field 1 (ADDR:PORT in hex), st field 3 (0A = LISTEN), inode field 9.
            if fields.len() > 9 && fields[3] == "0A" && inodes.contains(fields[9]) {
                let port = fields[1].rsplit(':').next().expect("a port");
                ports.push(u16::from_str_radix(port, 16).expect("a hex port"));
            }
        }
    }
    ports
}
