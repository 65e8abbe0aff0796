//! MCP Apps flags of the `dual-response` binary, over real sockets with raw JSON-RPC: the key and
//! lifetime of the capability links and the download line in an apps host's results. What MCP Apps
//! is (the view, the app-only tool, the apps rendering, the other clients' unchanged surface) is
//! tested on `DatabaseMcp` in dual-rmcp's `tests/apps.rs`, and its links over HTTP in dual-serve's.

mod support;

use std::time::Duration;

use serde_json::json;
use support::raw_mcp::{RawMcp, apps_capabilities};

const LIMIT: Duration = Duration::from_secs(90);
/// The query of the tests: every institution of the small dataset.
const SQL: &str = "SELECT id, name, state FROM institutions ORDER BY id";

/// The first text block of a result.
fn summary(result: &serde_json::Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `dual-response serve` with the link flags: a key file of fewer than 32 bytes is refused at start-up;
/// with a key and a lifetime the result's download line says when the link ends; without a key the
/// start-up log says that links do not outlive the process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_takes_the_link_flags() {
    support::within(LIMIT, async {
        let db = support::TempDb::new();
        let short = db.dir().join("short.key");
        let key = db.dir().join("link.key");
        std::fs::write(&short, [1_u8; 31]).expect("written");
        std::fs::write(&key, [2_u8; 32]).expect("written");
        let mut refused = support::serve_command(&db.path());
        refused.arg("--link-key-file").arg(&short);
        let stderr = support::start_up_error(refused).await;
        assert!(stderr.contains("holds no usable key"), "{stderr}");

        let keyed = support::Instance::start_memory(&[
            "--link-key-file",
            key.to_str().expect("a UTF-8 path"),
            "--link-lifetime-secs",
            "60",
            "--result-download-link",
        ])
        .await;
        let mut host = RawMcp::open(keyed.addr(), "2025-11-25", apps_capabilities(), None).await;
        let before = std::time::SystemTime::now();
        let result = host.call("query", json!({"sql": SQL})).await;
        let line = summary(&result).lines().last().unwrap_or_default().to_owned();
        let until = line
            .split_once("until ")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(at, _)| at.to_owned())
            .unwrap_or_default();
        let expires: u64 = line
            .split_once("&expires=")
            .and_then(|(_, rest)| rest.split('&').next())
            .and_then(|n| n.parse().ok())
            .expect("an expiry in the URL");
        let now = before
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        assert!(
            (now + 59..=now + 62).contains(&expires),
            "{expires} vs {now}: {line}"
        );
        assert!(until.ends_with('Z'), "{line}");
        assert!(!keyed.log().contains("random key"), "{}", keyed.log());

        let random = support::Instance::start_memory(&[]).await;
        assert!(
            random
                .log()
                .contains("capability links are signed with a random key of this process"),
            "{}",
            random.log()
        );
    })
    .await;
}
