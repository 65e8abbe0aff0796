//! Graceful shutdown of the real binary (issue 9): SIGTERM and SIGINT let in-flight exports finish
//! within `--shutdown-grace-secs`, cut what is left after it (detectably: no terminal chunk), and
//! exit 0; `--stdio` mode too. And a malformed `--auth-tokens` file stops start-up.

mod support;

use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use support::export::{assert_every_row, assert_truncated, create_big_resource, start_export};
use support::{Instance, LIMIT, TempDb, serve_command, start_up_error, within};
use tokio::time::timeout;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_an_export_in_flight_finish_and_exits_0() {
    within(LIMIT, async {
        let mut instance = Instance::start_memory(&["--shutdown-grace-secs", "20"]).await;
        let id = create_big_resource(&instance.mcp_url()).await;
        // An MCP client stays connected: its event stream must not hold the shutdown up.
        let mcp = support::mcp(&instance).await;
        let (body, mut received) = start_export(instance.addr(), &id).await;

        let signalled = Instant::now();
        instance.signal("TERM");
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(instance.is_running(), "the export is still in flight");
        let rest = body.collect().await.expect("the whole export").to_bytes();
        received.extend_from_slice(&rest);
        assert_every_row(&received);

        let status = instance.exit_status(Duration::from_secs(15)).await;
        assert!(status.success(), "{status:?}\n{}", instance.log());
        assert!(
            signalled.elapsed() < Duration::from_secs(15),
            "exited well within the grace period"
        );
        let log = instance.log();
        assert!(log.contains("SIGTERM"), "{log}");
        assert!(!log.contains("cutting"), "nothing was cut:\n{log}");
        drop(mcp);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_still_running_after_the_grace_is_cut_detectably() {
    within(LIMIT, async {
        let mut instance =
            Instance::start_memory(&["--shutdown-grace-secs", "1", "--export-stall-secs", "60"]).await;
        let id = create_big_resource(&instance.mcp_url()).await;
        let (body, _) = start_export(instance.addr(), &id).await;

        let signalled = Instant::now();
        instance.signal("TERM");
        let status = instance.exit_status(Duration::from_secs(15)).await;
        let after = signalled.elapsed();
        assert!(status.success(), "{status:?}\n{}", instance.log());
        assert!(
            after >= Duration::from_millis(900) && after < Duration::from_secs(10),
            "exited {after:?} after SIGTERM"
        );
        assert!(
            instance.log().contains("cutting the connections still open"),
            "{}",
            instance.log()
        );
        // The client reads what was sent, then the connection ends without the terminal chunk.
        let error = body.collect().await.expect_err("a truncated body is an error");
        assert_truncated(&error);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_with_an_idle_keep_alive_connection_exits_0_at_once() {
    within(LIMIT, async {
        let mut instance = Instance::start_memory(&["--shutdown-grace-secs", "30"]).await;
        // A kept-alive connection between requests is closed at once, not waited for.
        let client = support::rest_client(&instance);
        let missing = client
            .resource(&format!("{}/01ARZ3NDEKTSV4RRFFQ69G5FAV", instance.rest_url()))
            .expect("a handle")
            .fetch(dual_client::FetchOptions::new())
            .await;
        assert!(missing.is_err_and(|e| e.is_not_found()));
        let signalled = Instant::now();
        instance.signal("INT");
        let status = instance.exit_status(Duration::from_secs(10)).await;
        assert!(status.success(), "{status:?}\n{}", instance.log());
        assert!(
            signalled.elapsed() < Duration::from_secs(5),
            "{:?}",
            signalled.elapsed()
        );
        assert!(instance.log().contains("SIGINT"), "{}", instance.log());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_mode_exits_0_on_sigterm() {
    within(LIMIT, async {
        let db = TempDb::new();
        let (mut child, stdin, answer) = support::stdio::initialized(&db.path(), "info", "shutdown").await;
        assert_eq!(answer["id"], 1, "{answer}");

        // stdin stays open: the signal, not end of input, ends the process.
        let pid = child.id().expect("a pid");
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(killed.success());
        let status = timeout(Duration::from_secs(10), child.wait())
            .await
            .expect("exits within 10 s")
            .expect("an exit status");
        assert!(status.success(), "{status:?}");
        drop(stdin);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_token_file_stops_start_up_naming_the_line() {
    within(LIMIT, async {
        let db = TempDb::new();
        let tokens = db.path().with_file_name("tokens.txt");
        std::fs::write(&tokens, "# tokens\nabc alice\n\nlonely\n").expect("write the file");
        let mut refused = serve_command(&db.path());
        refused.arg("--auth-tokens").arg(&tokens).env("RUST_LOG", "warn");
        let stderr = start_up_error(refused).await;
        assert!(stderr.contains("line 4"), "{stderr}");
        assert!(stderr.contains("tokens.txt"), "{stderr}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_up_line_says_which_callers_are_let_in() {
    within(LIMIT, async {
        let open = Instance::start_memory(&[]).await;
        assert!(
            open.log().contains("callers: anyone (no authentication)"),
            "{}",
            open.log()
        );
        open.kill().await;

        let dir = TempDb::new();
        let tokens = dir.path().with_file_name("tokens.txt");
        std::fs::write(&tokens, "s3cret alice\n").expect("write the file");
        let tokens = tokens.to_string_lossy().into_owned();
        let guarded = Instance::start_memory(&["--auth-tokens", &tokens]).await;
        let log = guarded.log();
        assert!(
            log.contains(&format!("callers: bearer tokens of {tokens}")),
            "{log}"
        );
        assert!(!log.contains("s3cret"), "a token is never printed: {log}");
        guarded.kill().await;
    })
    .await;
}
