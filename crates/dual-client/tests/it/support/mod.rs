//! Servers the tests talk to, all on 127.0.0.1.

pub(crate) mod fake;
pub(crate) mod raw;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use dual_client::{DualResponseClient, FetchAllOptions, ParsedDualResponse, Row};

use self::fake::{FakeConfig, FakeServer};

/// A client with fast retries, so retry tests take milliseconds.
pub(crate) fn client() -> DualResponseClient {
    builder().build().expect("client builds")
}

/// The builder behind [`client`].
pub(crate) fn builder() -> dual_client::DualResponseClientBuilder {
    DualResponseClient::builder()
        .timeout(Duration::from_secs(10))
        .retry_backoff(Duration::from_millis(1), Duration::from_millis(5))
}

/// A fake server with `config` holding one resource of `rows`, and that resource parsed with
/// [`client`].
pub(crate) async fn serve(
    config: FakeConfig,
    name: &str,
    rows: Vec<Row>,
) -> (FakeServer, ParsedDualResponse) {
    let server = FakeServer::start(config).await;
    let parsed = create_parsed(&server, name, rows);
    (server, parsed)
}

/// Creates a resource of `rows` on `server` and parses its tool result with [`client`].
pub(crate) fn create_parsed(server: &FakeServer, name: &str, rows: Vec<Row>) -> ParsedDualResponse {
    let (_, result) = server.create(name, rows);
    client().parse_strict(&result).expect("parses")
}

/// Every row `parsed.fetch_all(options)` fetches, and every `(rows so far, total)` it reported, in
/// order.
pub(crate) async fn fetch_all_reporting(
    parsed: &ParsedDualResponse,
    options: FetchAllOptions,
) -> (Vec<Row>, Vec<(u64, u64)>) {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&reports);
    let rows = parsed
        .fetch_all(options.on_progress(move |done, total| {
            sink.lock().expect("progress lock").push((done, total));
        }))
        .await
        .expect("fetch_all");
    let reports = reports.lock().expect("progress lock").clone();
    (rows, reports)
}
