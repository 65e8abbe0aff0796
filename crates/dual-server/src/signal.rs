//! A one-shot signal awaited inside a `select!` loop: it resolves once when sent, and never when its
//! sender went away unsent or after it fired.

use tokio::sync::oneshot;

/// Resolves when `signal` is sent (then `signal` is `None`); never when its sender was dropped
/// unsent, nor once it fired.
pub(crate) async fn fired(signal: &mut Option<oneshot::Receiver<()>>) {
    match signal {
        Some(receiver) => {
            let sent = receiver.await.is_ok();
            *signal = None;
            if !sent {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending().await,
    }
}
