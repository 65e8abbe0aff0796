//! A database connection cut in the middle of a stream: the stream fails, and never ends as if the
//! result were complete.

use std::time::Duration;

use dual_server::{ExecutorError, RowStream};
use futures_util::StreamExt;

use crate::executor::read_to_end;
use crate::proxy::{Mode, Proxy};

/// Reads the first batch of `stream` (a query of `total` rows whose connection goes through `proxy`,
/// within `first_within`), cuts the connection ([`Mode::Refuse`]) and reads on: the stream must end
/// with an error within 30 s, having yielded fewer than `total` rows, and yield nothing after it.
/// Answers the error. Panics (failing the test) otherwise.
pub async fn fails_when_cut(
    mut stream: RowStream,
    proxy: &Proxy,
    total: usize,
    first_within: Duration,
) -> ExecutorError {
    let first = tokio::time::timeout(first_within, stream.next())
        .await
        .unwrap_or_else(|_| panic!("no batch within {first_within:?}"))
        .unwrap_or_else(|| panic!("no batch"));
    let mut rows = first.unwrap_or_else(|e| panic!("{e}")).len();
    proxy.set(Mode::Refuse);
    let ended = tokio::time::timeout(
        Duration::from_secs(30),
        read_to_end(&mut stream, |batch| rows += batch.len()),
    )
    .await
    .unwrap_or_else(|_| panic!("the stream neither failed nor ended within 30 s of the cut"));
    let error = ended.unwrap_or_else(|| panic!("the stream ended cleanly after {rows} of {total} rows"));
    assert!(rows < total, "every row arrived before the cut");
    assert!(stream.next().await.is_none(), "nothing after the error");
    error
}
