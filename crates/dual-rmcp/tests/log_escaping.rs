//! `resources/read` of a live resource whose query fails with newlines and terminal escapes: the
//! model gets the generic error, the log the executor's text escaped.
#![cfg(feature = "server")]

use dual_rmcp::resources::ReadOptions;
use dual_server::{Caller, CreateResponse, DEFAULT_SAMPLE_SIZE, DualResponseServer, ExecutorError};
use dual_testkit::executor::{Paged, object};
use dual_testkit::logs::Logs;
use serde_json::json;

const HOSTILE: &str = "no such column: x\n2026-01-01T00:00:00Z  INFO FORGED\u{1b}[2J\0";
const ESCAPED: &str = r"no such column: x\n2026-01-01T00:00:00Z  INFO FORGED\u{1b}[2J\u{0}";

/// Kind `hostile`: serves the sample, then fails every fetch with [`HOSTILE`].
fn hostile() -> Paged {
    Paged::new(|_, i| object(json!({"id": i}))).check(|_, offset, limit| {
        if offset > 0 || limit != DEFAULT_SAMPLE_SIZE {
            return Err(ExecutorError::new(HOSTILE));
        }
        Ok(())
    })
}

#[tokio::test]
async fn a_failed_read_logs_the_executors_text_escaped() {
    let (logs, _guard) = Logs::capture();
    let server = DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .executor("hostile", hostile())
        .without_sweeper()
        .without_snapshots()
        .build()
        .expect("valid configuration");
    let created = server
        .create_response(CreateResponse::new("hostile", json!({"n": 100})))
        .await
        .expect("created");
    let uri = format!("{}?offset=20&limit=5", created.uri);
    let error =
        dual_rmcp::resources::read_resource(&server, &Caller::anonymous(), &uri, &ReadOptions::default())
            .await
            .expect_err("the read fails");
    assert!(
        !error.message.contains("FORGED"),
        "the model gets no internals: {error:?}"
    );

    logs.assert_clean();
    let text = logs.text();
    let line = text
        .lines()
        .find(|line| line.contains("resources/read failed"))
        .unwrap_or_else(|| panic!("no resources/read event:\n{text}"));
    assert!(line.contains(ESCAPED), "{line}");
}
