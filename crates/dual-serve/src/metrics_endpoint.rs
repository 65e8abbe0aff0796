//! The listener of `--metrics-addr`: `GET /metrics` in the Prometheus text format, and nothing else.
//!
//! Bounded like the main listener, so it is no new way to exhaust the process: at most
//! `--metrics-max-connections` connections (further clients wait in the listen backlog), the same
//! header, idle and write-stall timeouts ([`TimedIo`]), one request per connection (no keep-alive),
//! request bodies never read, a growing pause after accept errors (the accept loop is the main
//! listener's, `super::accept`). Every other path is `404`, every other method `405`. The page is
//! bounded too: every label of every metric takes its value from a fixed set, so no client can add
//! series. It stops accepting with the main listener, and its connections are cut with the main
//! ones.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use metrics_exporter_prometheus::PrometheusHandle;
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use super::accept::Listener;
use super::activity::{Activity, in_flight};
use super::io::{IoTimeouts, TimedIo};

/// The only path served.
pub const METRICS_PATH: &str = "/metrics";
/// The Prometheus text exposition format.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Serves `GET /metrics` from `handle` on every connection `listener` accepts, until it stops.
pub(super) async fn serve_all(
    listener: Listener,
    handle: PrometheusHandle,
    timeouts: IoTimeouts,
    cut: CancellationToken,
) {
    listener
        .run(|stream, permit| {
            let connection = serve(stream, handle.clone(), timeouts, cut.clone());
            tokio::spawn(async move {
                connection.await;
                drop(permit);
            });
        })
        .await;
}

/// Serves one request on `stream`, then closes it (or the timeouts or `cut` end it first).
async fn serve(stream: TcpStream, handle: PrometheusHandle, timeouts: IoTimeouts, cut: CancellationToken) {
    let activity = Arc::new(Activity::default());
    let io = TokioIo::new(TimedIo::new(stream, Arc::clone(&activity), timeouts));
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let guard = activity.begin();
        let response = answer(&request, &handle);
        async move { Ok::<_, Infallible>(response.map(|body| in_flight(body, guard))) }
    });
    let connection = http1::Builder::new()
        .keep_alive(false)
        .header_read_timeout(None)
        .serve_connection(io, service);
    tokio::select! {
        result = connection => {
            if let Err(error) = result {
                tracing::debug!(%error, "metrics connection ended with an error");
            }
        }
        () = cut.cancelled() => {}
    }
}

/// `GET /metrics` (or `HEAD`): the page; any other path 404, any other method 405.
fn answer<B>(request: &Request<B>, handle: &PrometheusHandle) -> Response<Full<Bytes>> {
    if request.uri().path() != METRICS_PATH {
        return plain(StatusCode::NOT_FOUND, "not found; the metrics are at /metrics\n");
    }
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    // No histograms are recorded, so upkeep has little to do; it keeps the recorder bounded if one
    // ever is.
    handle.run_upkeep();
    let mut response = Response::new(Full::new(Bytes::from(handle.render())));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(TEXT_FORMAT));
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
