//! `dual-response serve --spool` at start-up: a value that is neither `memory` nor `s3://BUCKET[/PREFIX]`,
//! or a memory-spool flag with S3, stops the process naming the flag; an S3 endpoint where nothing
//! listens stops it in bounded time, naming the spool and the endpoint but never the credentials.
//! Needs nothing but the toolchain (no S3 server).

mod support;

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use support::TempDb;
use tokio::process::Command;
use tokio::time::timeout;

/// Longest a refused start-up may take (the S3 client's retries included).
const EXIT_WITHIN: Duration = Duration::from_secs(30);
/// The secret in the environment of the S3 case, which must not appear in the output.
const SECRET: &str = "spool-flag-test-secret-81c2";

/// Runs `dual-response serve --addr 127.0.0.1:0 --db DB ARGS…` with `env`, expecting it to exit.
async fn serve(db: &TempDb, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dual-response"));
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--dataset"])
        .arg(db.path())
        .args(args)
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "debug")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    timeout(EXIT_WITHIN, command.output())
        .await
        .unwrap_or_else(|_| panic!("`serve {args:?}` did not exit within {EXIT_WITHIN:?}"))
        .expect("the binary runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_spool_values_stop_start_up_naming_the_flag() {
    let db = TempDb::new();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--spool", "disk"],
            "--spool `disk`: use `memory` or `s3://BUCKET[/PREFIX]`",
        ),
        (&["--spool", "s3://"], "--spool `s3://`"),
        (
            &["--spool", "s3://bucket", "--spool-dir", "/tmp"],
            "--spool-dir applies to `--spool memory` only",
        ),
        (
            &["--spool", "s3://bucket/p", "--spool-memory-mb", "64"],
            "--spool-memory-mb applies to `--spool memory` only",
        ),
        (
            &["--spool", "https://key:hunter2@host/bucket"],
            "--spool `https://key:***@host/bucket`",
        ),
    ];
    for (args, expected) in cases {
        let output = serve(&db, args, &[]).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("hunter2"), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("serving"),
            "{args:?} must fail before serving: {stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_s3_spool_stops_start_up_without_the_credentials() {
    let db = TempDb::new();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let endpoint = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let started = Instant::now();
    let output = serve(
        &db,
        &["--spool", "s3://dual-demo-nowhere/prefix"],
        &[
            ("AWS_ENDPOINT_URL", &endpoint),
            ("AWS_ACCESS_KEY_ID", "spool-flag-test"),
            ("AWS_SECRET_ACCESS_KEY", SECRET),
            ("AWS_REGION", "us-east-1"),
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "--spool `s3://dual-demo-nowhere/prefix`: cannot reach S3 at {endpoint}"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains(SECRET), "{stderr}");
    assert!(started.elapsed() < EXIT_WITHIN, "{:?}", started.elapsed());
}
