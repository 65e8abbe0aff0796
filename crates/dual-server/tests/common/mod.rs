//! Shared fixtures: the testkit's example executor over generated rows.
#![allow(dead_code, unused_imports, unreachable_pub, missing_docs)]

use std::sync::Arc;

use dual_server::{ServerError, ServerErrorCode};
use dual_testkit::executor::Numbers;
pub use dual_testkit::executor::row;

/// Rows `{id, name, enrollment, public}` for `0..n` (`params.n`); `params.fail` makes `fetch` fail,
/// `params.fail_count` makes `count` fail.
pub fn shared() -> Arc<Numbers> {
    Arc::new(Numbers::new())
}

/// The code of `result`'s error; panics naming `what` if it succeeded.
pub fn error_code<T>(result: Result<T, ServerError>, what: &str) -> ServerErrorCode {
    result.map(|_| ()).expect_err(what).code()
}
