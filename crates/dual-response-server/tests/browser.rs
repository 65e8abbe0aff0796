//! The result view in a real browser (feature `browser`): starts three `dual-response serve` processes on the
//! default 269,000-row dataset and runs `node crates/dual-response-server/browser/run.mjs` against them, which
//! drives headless Chromium through the official MCP Apps host bridge and the official TypeScript MCP
//! client (see crates/dual-response-server/browser/README.md for every check).
//!
//! * the main demo: no `--auth-tokens`, `--pending-after-ms 0` (the big result is ready when the tool
//!   answers);
//! * the secure demo: `--auth-tokens` with owners `a` and `b`, `--pending-after-ms 300` (a slow query is
//!   pending first) and download links that live 5 seconds (the expiry checks read each link's `expires`);
//! * the live demo: `--snapshot-max-mb 0` (every result is live, so none has a column profile).
//!
//! Needs Node.js, Chromium and the npm packages: `bash .ci/browser` installs them. When one is missing
//! the test fails saying so; nothing is skipped. `DUAL_SCREENSHOT=docs/view.png` also writes the
//! README's screenshot (relative to the workspace root).
//!
//! Time limits: run.mjs scales every wait by `DUAL_BROWSER_TIME_SCALE` (default 1; its base values are
//! sized for a loaded 2-core CI machine) and bounds the whole run by `DUAL_BROWSER_TIMEOUT_SECS` (default
//! 720 s times the scale). This test passes node that run limit explicitly and allows itself
//! [`RUN_MARGIN`] more. Past its own limit it sends node SIGTERM (run.mjs prints its summary and closes
//! Chromium, which playwright starts detached), waits a few seconds, then kills it; the failure message
//! carries whatever node printed until then, each check's own time (from node's `PASS`/`FAIL` lines,
//! so also when node was killed before its summary), the load average before and after, and the demos'
//! logs.

mod support;

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dual_response_server::ipeds::dataset::{self, DatasetSize};
use support::{Instance, TempDb, serve_command, spawn_child};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;
use tokio::time::timeout;

/// run.mjs's run limit at time scale 1, in seconds (its `DUAL_BROWSER_TIMEOUT_SECS` default).
const NODE_RUN_LIMIT_SECS: f64 = 720.0;
/// What this test allows past node's own run limit: its summary, closing Chromium, the demos' stop.
const RUN_MARGIN: Duration = Duration::from_secs(40);
const TOKEN_A: &str = "browser-test-token-of-owner-a";
const TOKEN_B: &str = "browser-test-token-of-owner-b";
/// How long node has to exit after SIGTERM before it is killed.
const TERM_GRACE: Duration = Duration::from_secs(5);
/// Lifetime of the secure demo's download and view links: long enough for a freshly minted link to
/// survive a round trip under load; run.mjs waits for each link's own `expires` in the expiry checks.
const LINK_LIFETIME_SECS: u64 = 5;

/// Reads `from` to its end in a task, into a buffer that can be read at any time (also while the task
/// still runs, e.g. after a timeout).
fn drain(mut from: impl AsyncRead + Unpin + Send + 'static) -> (Arc<Mutex<Vec<u8>>>, JoinHandle<()>) {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&buffer);
    let task = tokio::spawn(async move {
        let mut chunk = [0u8; 8192];
        while let Ok(n @ 1..) = from.read(&mut chunk).await {
            into.lock()
                .expect("the output buffer")
                .extend_from_slice(&chunk[..n]);
        }
    });
    (buffer, task)
}

fn text(buffer: &Mutex<Vec<u8>>) -> String {
    String::from_utf8_lossy(&buffer.lock().expect("the output buffer")).into_owned()
}

/// A positive number of the environment variable `name`, or `default` when it is unset or empty.
fn env_number(name: &str, default: f64) -> f64 {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => match value.trim().parse::<f64>() {
            Ok(n) if n.is_finite() && n > 0.0 => n,
            _ => panic!("{name}={value} is not a positive number"),
        },
        _ => default,
    }
}

/// node's run limit in whole seconds: `DUAL_BROWSER_TIMEOUT_SECS`, else [`NODE_RUN_LIMIT_SECS`] times
/// `DUAL_BROWSER_TIME_SCALE` (as run.mjs computes it).
fn node_run_limit_secs() -> u64 {
    let scale = env_number("DUAL_BROWSER_TIME_SCALE", 1.0);
    let secs = env_number("DUAL_BROWSER_TIMEOUT_SECS", NODE_RUN_LIMIT_SECS * scale);
    // a few hours at most, whatever the variables say
    secs.ceil().clamp(1.0, 86_400.0) as u64
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`), or why they are unknown.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |e| format!("unknown ({e})"),
        |l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}

/// Each check's own time as run.mjs printed it: `PASS name (note) [N ms]` or `FAIL name: error [N ms]`,
/// where a failure's message may span lines and the time ends its last one. One line per check:
/// outcome, time, and the check's first line cut to 110 characters; a check without a time (node was
/// stopped during it) says so.
fn check_timings(stdout: &str) -> String {
    let mut out = String::new();
    let mut current: Option<(&str, String)> = None;
    let mut flush = |current: &mut Option<(&str, String)>, ms: Option<&str>| {
        if let Some((outcome, first)) = current.take() {
            let ms = ms.map_or_else(|| "no time".to_owned(), |ms| format!("{ms} ms"));
            out.push_str(&format!("  {outcome} {ms:>10}  {first}\n"));
        }
    };
    for line in stdout.lines() {
        let outcome = ["PASS ", "FAIL "]
            .into_iter()
            .find(|prefix| line.starts_with(prefix));
        if let Some(prefix) = outcome {
            flush(&mut current, None);
            let first: String = line[prefix.len()..].chars().take(110).collect();
            current = Some((prefix.trim_end(), first));
        }
        if current.is_some()
            && let Some(ms) = line
                .trim_end()
                .strip_suffix(" ms]")
                .and_then(|rest| rest.rsplit_once('['))
                .map(|(_, ms)| ms)
                .filter(|ms| !ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()))
        {
            flush(&mut current, Some(ms));
        }
    }
    flush(&mut current, None);
    if out.is_empty() {
        out.push_str("  (node printed no check)\n");
    }
    out
}

/// Stops node after the time limit: SIGTERM first (run.mjs prints its summary and playwright closes
/// Chromium), then SIGKILL when it has not exited within [`TERM_GRACE`]. Returns what happened.
async fn terminate(child: &mut Child) -> String {
    let Some(pid) = child.id() else {
        return "node had already exited".to_owned();
    };
    let term = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .await;
    if let Err(e) = &term {
        eprintln!("kill -TERM {pid} failed: {e}");
    }
    match timeout(TERM_GRACE, child.wait()).await {
        Ok(Ok(status)) => format!("after SIGTERM node exited ({status})"),
        Ok(Err(e)) => {
            let _ = child.kill().await;
            format!("after SIGTERM waiting for node failed ({e}); killed it")
        }
        Err(_) => {
            let _ = child.kill().await;
            format!("node did not exit within {TERM_GRACE:?} of SIGTERM; killed it")
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root")
}

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("browser")
}

/// Fails, saying how to install it, when node, Chromium or the npm packages are missing.
fn preflight() {
    let install = "run `bash .ci/browser` (it installs Debian's chromium and runs npm ci in crates/dual-response-server/browser)";
    match std::process::Command::new("node").arg("--version").output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "`node --version` failed ({}): install Node.js 20 or later, then {install}",
            out.status
        ),
        Err(e) => panic!("node is not installed ({e}): install Node.js 20 or later, then {install}"),
    }
    let chromium =
        std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    assert!(
        chromium.exists(),
        "Chromium is missing at {}: {install}",
        chromium.display()
    );
    for package in [
        "playwright-core",
        "@modelcontextprotocol/ext-apps",
        "@modelcontextprotocol/sdk",
        "esbuild",
    ] {
        let manifest = browser_dir()
            .join("node_modules")
            .join(package)
            .join("package.json");
        assert!(
            manifest.exists(),
            "the npm package {package} is missing ({}): {install}",
            manifest.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_result_view_in_headless_chromium() {
    preflight();
    let db = dataset::default_path();
    dataset::ensure(&db, DatasetSize::DEFAULT).expect("the default dataset");

    let main = Instance::launch(serve_command(&db)).await;

    let scratch = TempDb::new();
    let tokens = scratch.dir().join("tokens");
    std::fs::write(
        &tokens,
        format!("# owners of the browser test\n{TOKEN_A} a\n{TOKEN_B} b\n"),
    )
    .expect("tokens file");
    let mut secure = Command::new(env!("CARGO_BIN_EXE_dual-response"));
    secure
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--pending-after-ms",
            "300",
            "--dataset",
        ])
        .arg(&db)
        .arg("--auth-tokens")
        .arg(&tokens)
        .args(["--link-lifetime-secs", &LINK_LIFETIME_SECS.to_string()]);
    let secure = Instance::launch(secure).await;
    let mut live = serve_command(&db);
    live.args(["--snapshot-max-mb", "0"]);
    let live = Instance::launch(live).await;

    let node_limit = node_run_limit_secs();
    let run_limit = Duration::from_secs(node_limit) + RUN_MARGIN;
    let load_before = load_average();
    let started = std::time::Instant::now();
    let mut node = Command::new("node");
    node.current_dir(browser_dir())
        .env("DUAL_BROWSER_TIMEOUT_SECS", node_limit.to_string())
        .arg("run.mjs")
        .args(["--demo", &format!("http://{}", main.addr())])
        .args(["--secure", &format!("http://{}", secure.addr())])
        .args(["--live", &format!("http://{}", live.addr())])
        .args(["--token-a", TOKEN_A, "--token-b", TOKEN_B]);
    if let Some(path) = std::env::var_os("DUAL_SCREENSHOT") {
        node.arg("--screenshot").arg(workspace_root().join(path));
    }
    node.env_remove("DUAL_SCREENSHOT");
    let mut child = spawn_child(&mut node, Stdio::piped(), "node starts");
    let (stdout, stdout_task) = drain(child.stdout.take().expect("node's stdout"));
    let (stderr, stderr_task) = drain(child.stderr.take().expect("node's stderr"));
    let outcome: Result<ExitStatus, String> = match timeout(run_limit, child.wait()).await {
        Ok(Ok(status)) => Ok(status),
        Ok(Err(e)) => Err(format!(
            "waiting for node run.mjs failed ({e}); {}",
            terminate(&mut child).await
        )),
        Err(_) => Err(format!(
            "node run.mjs did not finish within {run_limit:?}; {}",
            terminate(&mut child).await
        )),
    };
    // node has exited: its pipes close, unless a process it left behind still holds them
    let _ = timeout(Duration::from_secs(5), async {
        let _ = stdout_task.await;
        let _ = stderr_task.await;
    })
    .await;
    let (stdout, stderr) = (text(&stdout), text(&stderr));
    let failure = match outcome {
        Ok(status) if status.success() => None,
        Ok(status) => Some(format!("the browser checks failed ({status})")),
        Err(failure) => Some(failure),
    };
    // the demos (`Instance`) are killed when dropped, on this panic's path too
    if let Some(failure) = failure {
        panic!(
            "{failure}:\n--- node stdout ---\n{stdout}\n--- node stderr ---\n{stderr}\n--- main demo ---\n{}\n--- secure demo ---\n{}\n--- live demo ---\n{}\n\
             --- each check's own time (run.mjs) ---\n{}\
             node ran {:.1} s (its limit {node_limit} s, this test's {run_limit:?}); load average {load_before} before, {} after",
            main.log(),
            secure.log(),
            live.log(),
            check_timings(&stdout),
            started.elapsed().as_secs_f64(),
            load_average()
        );
    }
    println!("{stdout}");
}

/// The failure message's time per check reads run.mjs's lines, a failure's message over several lines
/// included, and says which check node was stopped in.
#[test]
fn check_timings_reads_run_mjs_lines() {
    let stdout = "PASS apps: the total is shown (269000; 7 columns) [12 ms]\n\
                  FAIL secure apps: an expired download link is 404: locator.click: Timeout 20000ms exceeded.\n\
                  Call log:\n  - waiting for locator('#dv-download-csv')\n [20070 ms]\n\
                  PASS secure: owner b creates a resource (resource://01M88GM36G4SXMDXQX3X6MVB61) [624 ms]\n\
                  FAIL secure rest: a pending query shows progress, then its rows: statuses [1 2]\n\
                  FAIL the browser tests were stopped by SIGTERM\n";
    let timings = check_timings(stdout);
    let lines: Vec<&str> = timings.lines().collect();
    assert_eq!(lines.len(), 5, "{timings}");
    assert!(
        lines[0].contains("PASS") && lines[0].contains(" 12 ms") && lines[0].contains("the total is shown")
    );
    assert!(
        lines[1].contains("FAIL")
            && lines[1].contains("20070 ms")
            && lines[1].contains("expired download link")
    );
    assert!(lines[2].contains("624 ms"));
    assert!(
        lines[3].contains("no time") && lines[3].contains("a pending query"),
        "{timings}"
    );
    assert!(lines[4].contains("no time") && lines[4].contains("SIGTERM"));
    assert_eq!(check_timings(""), "  (node printed no check)\n");
}
