//! Running one conformance case in its own task, so that a panic is reported with the case's name.

use std::future::Future;

/// Runs `case` in its own task and panics with `"{suite} conformance case `{name}` failed: …"`
/// (the panic message of the case, when it panicked) if it did not complete.
pub(crate) async fn run_isolated<Fut>(suite: &str, name: &str, case: Fut)
where
    Fut: Future<Output = ()> + Send + 'static,
{
    if let Err(err) = tokio::spawn(case).await {
        let reason = if err.is_panic() {
            let payload = err.into_panic();
            payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "non-string panic".to_owned())
        } else {
            err.to_string()
        };
        panic!("{suite} conformance case `{name}` failed: {reason}");
    }
}
