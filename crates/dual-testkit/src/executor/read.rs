//! Reading a [`RowStream`] the way a test that must see a failure, never a short result, reads it.

use dual_server::{ExecutorError, RowBatch, RowStream};
use futures_util::StreamExt;

/// Reads `stream` to its end or to its first error, handing each batch to `each`: the error that
/// ended it, or `None` when it ended cleanly. A test of a cut or failed export asserts the `Some`.
///
/// ```
/// use dual_server::{ExecutorError, RowBatch, RowStream};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let batch = RowBatch::from(vec![dual_testkit::executor::row(0)]);
/// let mut stream: RowStream =
///     Box::pin(futures_util::stream::iter([Ok(batch), Err(ExecutorError::new("cut"))]));
/// let mut rows = 0;
/// let error = dual_testkit::executor::read_to_end(&mut stream, |batch| rows += batch.len()).await;
/// assert_eq!((rows, error.map(|e| e.to_string())), (1, Some("cut".to_owned())));
/// # }
/// ```
pub async fn read_to_end(stream: &mut RowStream, mut each: impl FnMut(RowBatch)) -> Option<ExecutorError> {
    while let Some(batch) = stream.next().await {
        match batch {
            Ok(batch) => each(batch),
            Err(error) => return Some(error),
        }
    }
    None
}
