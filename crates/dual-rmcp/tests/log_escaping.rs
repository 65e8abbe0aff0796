//! `resources/read` of a live resource whose query fails with newlines and terminal escapes: the
//! model gets the generic error, the log the executor's text escaped.
#![cfg(feature = "server")]

use std::sync::Arc;

use async_trait::async_trait;
use dual_core::{Row, Sort};
use dual_server::{
    Caller, CreateResponse, DEFAULT_SAMPLE_SIZE, DEFAULT_STREAM_BATCH, DualResponseServer, ExecutorError,
    LiveQuery, QueryExecutor, QueryStart, RowStream, paged_stream,
};
use dual_testkit::logs::Logs;
use serde_json::{Value, json};

const HOSTILE: &str = "no such column: x\n2026-01-01T00:00:00Z  INFO FORGED\u{1b}[2J\0";
const ESCAPED: &str = r"no such column: x\n2026-01-01T00:00:00Z  INFO FORGED\u{1b}[2J\u{0}";

/// Serves the sample, then fails every fetch with [`HOSTILE`].
struct Hostile;

impl QueryExecutor for Hostile {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        start.started();
        paged_stream(self, params, DEFAULT_STREAM_BATCH)
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        Some(self)
    }
}

#[async_trait]
impl LiveQuery for Hostile {
    async fn count(&self, _: &Value) -> Result<u64, ExecutorError> {
        Ok(100)
    }

    async fn fetch(
        &self,
        _: &Value,
        offset: u64,
        limit: u64,
        _: Option<&Sort>,
    ) -> Result<Vec<Row>, ExecutorError> {
        if offset > 0 || limit != DEFAULT_SAMPLE_SIZE {
            return Err(ExecutorError::new(HOSTILE));
        }
        Ok((0..limit)
            .map(|i| json!({"id": i}).as_object().cloned().unwrap_or_default())
            .collect())
    }
}

#[tokio::test]
async fn a_failed_read_logs_the_executors_text_escaped() {
    let (logs, _guard) = Logs::capture();
    let server = DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .executor("hostile", Hostile)
        .without_sweeper()
        .without_snapshots()
        .build()
        .expect("valid configuration");
    let created = server
        .create_response(CreateResponse::new("hostile", json!({})))
        .await
        .expect("created");
    let uri = format!("{}?offset=20&limit=5", created.uri);
    let error = dual_rmcp::read_resource(&server, &Caller::anonymous(), &uri)
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
