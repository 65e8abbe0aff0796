//! The official TypeScript MCP client (`@modelcontextprotocol/client` 2.4.0, driven by
//! `browser/interop.mjs`) against two `dual-response serve` instances sharing a Redis or PostgreSQL store
//! and one S3 spool, behind a round-robin load balancer that sends each new connection to the next
//! instance; the client opens a connection per request, so consecutive requests reach different
//! instances (issue 25). At 2026-07-28 (no session): tools, a tool call and its pages, the result
//! list, prompts, a task followed and cancelled across instances, `subscriptions/listen` told of a
//! delete made elsewhere. At 2025-11-25: the same over one session that every instance restores
//! from the shared store, with `resources/subscribe` acknowledged.
//!
//! Needs the services (feature `services`) and the npm packages of `browser/` (feature `browser`;
//! `bash .ci/browser` installs them); fails (never skips) without them.
#![cfg(all(feature = "services", feature = "browser"))]

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use dual_testkit::round_robin::RoundRobin;
use dual_testkit::services::S3;
use support::shared_spool::{Shared, with_bucket};
use support::{Backend, serve_command_pending};
use tokio::process::Command;
use tokio::time::timeout;

/// The most one run of the script may take (it bounds each of its checks at 60 s).
const RUN_LIMIT: Duration = Duration::from_secs(240);
/// How long a tool call waits for its result before it answers `pending`.
const PENDING_AFTER_MS: u64 = 3_000;

/// Runs `interop.mjs` at `version` against `url`; panics with its output when it fails.
async fn interop(url: &str, version: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    assert!(
        script
            .join("node_modules/@modelcontextprotocol/client/package.json")
            .exists(),
        "the npm package @modelcontextprotocol/client is missing: run `bash .ci/browser`"
    );
    let run = Command::new("node")
        .arg("interop.mjs")
        .args(["--url", url, "--version", version])
        .current_dir(&script)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = timeout(RUN_LIMIT, run)
        .await
        .unwrap_or_else(|_| panic!("interop.mjs at {version}: not within {RUN_LIMIT:?}"))
        .unwrap_or_else(|e| panic!("node does not run ({e}): install Node.js 20 or later"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("--- interop.mjs at {version}\n{stdout}");
    assert!(
        output.status.success(),
        "interop.mjs at {version} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    stdout
}

async fn across(backend: Backend) {
    with_bucket(backend, |shared: Shared| async move {
        let endpoint = S3.url();
        let start = || {
            shared.launch(
                serve_command_pending(&shared.db.path(), PENDING_AFTER_MS),
                &endpoint,
                &[],
            )
        };
        let (a, b) = tokio::join!(start(), start());
        let balancer = RoundRobin::start(vec![a.addr(), b.addr()])
            .await
            .expect("the balancer");
        let url = format!("http://{}/mcp", balancer.addr());
        for version in ["2026-07-28", "2025-11-25"] {
            let before = balancer.connections();
            let out = interop(&url, version).await;
            assert!(out.contains("\"failed\":[]"), "{out}");
            let after = balancer.connections();
            for (instance, (then, now)) in before.iter().zip(&after).enumerate() {
                assert!(
                    now - then >= 5,
                    "{version}: instance {instance} got {} connections",
                    now - then
                );
            }
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_client_is_served_across_instances_on_redis() {
    across(Backend::Redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_client_is_served_across_instances_on_postgres() {
    across(Backend::Postgres).await;
}
