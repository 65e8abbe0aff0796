//! A real dual-http server on loopback over the testkit's example executor, with 8-column rows.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::sync::Arc;

use dual_response::http::DualHttp;
use dual_response::server::DualResponseServer;
use dual_testkit::executor::Numbers;
use dual_testkit::serve::Loopback;

/// Row `i` of the generated table: 8 columns of every common type.
pub use dual_testkit::executor::wide_row as row;

/// Starts a server with the `rows` kind (`params.n` rows of [`row`], sortable by any column) and
/// its REST API under `/resources` on 127.0.0.1. Returns the server and the REST base URL.
pub async fn start() -> (DualResponseServer, String) {
    let loopback = Loopback::bind().await;
    let base = loopback.url("/resources");
    let server = DualResponseServer::builder()
        .base_url(&base)
        .shared_executor("rows", Arc::new(Numbers::new().row(row)))
        .build()
        .expect("valid configuration");
    loopback.serve(DualHttp::builder(server.clone()).prefix("/resources").build());
    (server, base)
}
