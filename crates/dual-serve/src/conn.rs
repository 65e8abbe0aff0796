//! One connection: HTTP/1.1 over a [`TimedIo`], watched for graceful shutdown, cut on demand.
//!
//! HTTP/1.1 only: every client of the server (rmcp's, dual-client, curl, browsers) speaks it, and one
//! protocol keeps all connection timeouts in one place. hyper's own `header_read_timeout` stays off:
//! its timer starts as soon as a kept-alive connection turns idle, so it would bound idle time and
//! head together; [`TimedIo`] times the two apart.

use std::convert::Infallible;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Router;
use super::accept::Listener;
use super::activity::{Activity, in_flight};
use super::io::{IoTimeouts, TimedIo};

/// Serves every connection `listener` accepts with `router`, each a task of `tracker`, until the
/// listener stops; returns the handle that shuts the open connections down gracefully.
pub(super) async fn serve_all(
    listener: Listener,
    router: Arc<Router>,
    timeouts: IoTimeouts,
    cut: CancellationToken,
    tracker: TaskTracker,
) -> GracefulShutdown {
    let graceful = GracefulShutdown::new();
    listener
        .run(|stream, permit| {
            let _ = stream.set_nodelay(true);
            let connection = serve(
                stream,
                Arc::clone(&router),
                timeouts,
                graceful.watcher(),
                cut.clone(),
            );
            tracker.spawn(async move {
                connection.await;
                drop(permit);
            });
        })
        .await;
    graceful
}

/// Serves `stream` until the client closes it, a timeout or error ends it, it finishes after a
/// graceful shutdown started (`watcher`), or `cut` is cancelled (the response in flight, if any, is
/// dropped unfinished).
async fn serve(
    stream: TcpStream,
    router: Arc<Router>,
    timeouts: IoTimeouts,
    watcher: Watcher,
    cut: CancellationToken,
) {
    let activity = Arc::new(Activity::default());
    let io = TokioIo::new(TimedIo::new(stream, Arc::clone(&activity), timeouts));
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let guard = activity.begin();
        let router = Arc::clone(&router);
        let endpoint = super::metrics::Endpoint::of(request.uri().path());
        async move {
            let response = router.route(request).await;
            super::metrics::answered(endpoint, response.status());
            Ok::<_, Infallible>(response.map(|body| in_flight(body, guard)))
        }
    });
    let connection = http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(io, service);
    let connection = watcher.watch(connection);
    tokio::select! {
        result = connection => {
            if let Err(error) = result {
                tracing::debug!(error = %dual_core::escape::log_safe(&error.to_string()), "connection ended with an error");
            }
        }
        () = cut.cancelled() => tracing::debug!("connection cut at shutdown"),
    }
}
