//! The accept loop never spins (issue 9): out of file descriptors (`EMFILE`, provoked with a low
//! `ulimit -n`) or at `--max-connections`, the real binary stays nearly idle, logs at most about a
//! line per second, and serves again once connections close. Linux: CPU time is read from `/proc`.
#![cfg(target_os = "linux")]

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use support::{Instance, LIMIT, TempDb, within};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// How long the process is watched while it cannot accept.
const WATCH: Duration = Duration::from_secs(2);

/// User plus system CPU time of `pid`, in clock ticks (usually 1/100 s).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // After the command name in parentheses: state is field 3, utime 14 and stime 15.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    field(14) + field(15)
}

/// Opens `n` connections (some may only sit in the listen backlog).
async fn open(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut streams = Vec::with_capacity(n);
    for _ in 0..n {
        match timeout(Duration::from_secs(2), TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => streams.push(stream),
            _ => break,
        }
    }
    streams
}

/// Whether a fresh connection gets the router's 404 within `within`.
async fn served(addr: SocketAddr, within: Duration) -> bool {
    timeout(within, async {
        let mut stream = TcpStream::connect(addr).await.ok()?;
        stream
            .write_all(b"GET /nowhere HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .await
            .ok()?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.ok()?;
        Some(answer.starts_with(b"HTTP/1.1 404"))
    })
    .await
    .ok()
    .flatten()
    .unwrap_or(false)
}

/// Watches `instance` for [`WATCH`]; returns the CPU ticks it used meanwhile, and the lines of its
/// log tail (the last 200 lines, everything since start here unless it floods) containing `needle`.
async fn watch(instance: &Instance, needle: &str) -> (u64, usize) {
    let before = cpu_ticks(instance.pid());
    tokio::time::sleep(WATCH).await;
    let ticks = cpu_ticks(instance.pid()) - before;
    (ticks, instance.log().matches(needle).count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_file_descriptors_the_accept_loop_backs_off() {
    within(LIMIT, async {
        let db = TempDb::new();
        let mut command = tokio::process::Command::new("sh");
        command
            .args(["-c", r#"ulimit -n 40 && exec "$0" "$@""#])
            .arg(env!("CARGO_BIN_EXE_dual-response"))
            .args(["serve", "--addr", "127.0.0.1:0", "--dataset"])
            .arg(db.path());
        let mut instance = Instance::launch(command).await;
        let connections = open(instance.addr(), 80).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            instance.log().contains("accept failed"),
            "the descriptors ran out:\n{}",
            instance.log()
        );
        let (ticks, lines) = watch(&instance, "accept failed").await;
        // Spinning would burn ~200 ticks in 2 s and log thousands of lines; backing off logs about
        // one line per second.
        assert!(ticks < 60, "{ticks} CPU ticks in {WATCH:?}");
        assert!(lines <= 5, "{lines} accept-failure lines in 2.3 s");
        assert!(instance.is_running());

        drop(connections);
        serves_again_and_exits_cleanly(&mut instance, "once descriptors are free").await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_cap_the_accept_loop_waits_quietly() {
    within(LIMIT, async {
        let mut instance = Instance::start_memory(&["--max-connections", "3"]).await;
        let connections = open(instance.addr(), 50).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (ticks, lines) = watch(&instance, "connection cap reached").await;
        assert!(ticks < 60, "{ticks} CPU ticks in {WATCH:?}");
        assert!(lines <= 4, "{lines} cap lines in 2.3 s");
        assert!(
            instance.log().contains("connection cap reached"),
            "{}",
            instance.log()
        );
        assert!(
            !served(instance.addr(), Duration::from_millis(500)).await,
            "nothing beyond the cap is served"
        );

        drop(connections);
        serves_again_and_exits_cleanly(&mut instance, "once connections close").await;
    })
    .await;
}

/// After the pressure is gone: `instance` serves again within 5 s, and SIGTERM ends it with exit 0.
async fn serves_again_and_exits_cleanly(instance: &mut Instance, when: &str) {
    assert!(
        served(instance.addr(), Duration::from_secs(5)).await,
        "serves again {when}:\n{}",
        instance.log()
    );
    instance.signal("TERM");
    let status = instance.exit_status(Duration::from_secs(15)).await;
    assert!(status.success(), "{status:?}");
}
