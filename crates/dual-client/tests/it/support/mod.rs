//! Servers the tests talk to, all on 127.0.0.1.

pub(crate) mod fake;
pub(crate) mod raw;

use std::time::Duration;

use dual_client::DualResponseClient;

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
