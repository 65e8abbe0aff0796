//! The HTTP conformance suite: every row of docs/DESIGN.md §5, driven through an
//! adapter's `Service::call` without sockets.
//!
//! Every adapter runs the same suite, the juniper way: raw hyper, tower, axum — anything that turns a
//! `Request` into a `Response`. The suite builds its own server (an in-memory executor with failure
//! switches, a store it can break), hands the adapter a [`DualHttpBuilder`] for it, and checks the
//! answers. It panics, naming the check, on the first deviation.
//!
//! ```no_run
//! # async fn demo() {
//! use dual_testkit::http::HyperTarget;
//! // The handler mounted under /resources, called as a hyper Service.
//! let passed = dual_testkit::http::run("/resources", |builder| HyperTarget(builder.prefix("/resources").build())).await;
//! assert!(passed.len() > 20);
//! # }
//! ```

mod auth_checks;
mod cors_checks;
mod encoding_checks;
mod error_checks;
mod export_checks;
mod fixtures;
mod range_checks;
mod read_checks;
mod support;
mod write_checks;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Request, Response};
use http_body::Body;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};

use dual_http::{BoxError, DualHttpBuilder};

pub use support::Reply;

/// The response type the suite reads: any body, boxed.
pub type TargetResponse = Response<UnsyncBoxBody<Bytes, BoxError>>;

/// What the suite drives: an adapter under test, called without sockets.
pub trait Target: Send + Sync + 'static {
    /// Sends one request and returns the response (its body not yet read).
    fn send(&self, request: Request<Full<Bytes>>) -> BoxFuture<'_, TargetResponse>;
}

/// A hyper `Service` (such as [`DualHttp`](dual_http::DualHttp)) as a suite [`Target`].
#[derive(Debug, Clone)]
pub struct HyperTarget<S>(pub S);

impl<S, RB> Target for HyperTarget<S>
where
    S: hyper::service::Service<Request<Full<Bytes>>, Response = Response<RB>> + Send + Sync + 'static,
    S::Future: Send,
    S::Error: std::fmt::Debug,
    RB: Body<Data = Bytes> + Send + 'static,
    RB::Error: Into<BoxError>,
{
    fn send(&self, request: Request<Full<Bytes>>) -> BoxFuture<'_, TargetResponse> {
        let future = self.0.call(request);
        Box::pin(async move { boxed(future.await) })
    }
}

/// A `tower::Service` (the handler with dual-http's feature `tower`, or an axum `Router` nesting it) as a suite
/// [`Target`]; each request goes to a clone, after `poll_ready`.
#[derive(Debug, Clone)]
pub struct TowerTarget<S>(pub S);

impl<S, RB> Target for TowerTarget<S>
where
    S: tower_service::Service<Request<Full<Bytes>>, Response = Response<RB>> + Clone + Send + Sync + 'static,
    S::Future: Send,
    S::Error: std::fmt::Debug + Send,
    RB: Body<Data = Bytes> + Send + 'static,
    RB::Error: Into<BoxError>,
{
    fn send(&self, request: Request<Full<Bytes>>) -> BoxFuture<'_, TargetResponse> {
        let mut service = self.0.clone();
        Box::pin(async move {
            let ready = std::future::poll_fn(|cx| service.poll_ready(cx)).await;
            if let Err(error) = ready {
                panic!("the service was not ready: {error:?}");
            }
            boxed(service.call(request).await)
        })
    }
}

/// A service's answer with its body boxed; a service error is a panic, the handler being infallible.
fn boxed<RB, E>(result: Result<Response<RB>, E>) -> TargetResponse
where
    RB: Body<Data = Bytes> + Send + 'static,
    RB::Error: Into<BoxError>,
    E: std::fmt::Debug,
{
    match result {
        Ok(response) => response.map(|body| body.map_err(Into::into).boxed_unsync()),
        Err(error) => panic!("the service failed, but the handler is infallible: {error:?}"),
    }
}

/// Runs every check against the adapter `make` builds, returning the names of the checks passed.
///
/// `mount` is the path prefix the target serves the API under (`""` for `/{id}`, `/resources` for
/// `/resources/{id}`). `make` gets a builder preconfigured with the suite's server, authorization hook
/// and (for the CORS checks) a CORS configuration; it sets the prefix its stack needs — none when the
/// stack strips it, like axum's `nest_service` — builds the handler and wraps it in its stack.
///
/// # Panics
/// On the first check that fails, naming it: this is a test harness.
pub async fn run<T, F>(mount: &str, make: F) -> Vec<&'static str>
where
    T: Target,
    F: Fn(DualHttpBuilder) -> T,
{
    let ctx = support::Ctx::new(mount, &make);
    let mut passed = Vec::new();
    read_checks::run(&ctx, &mut passed).await;
    write_checks::run(&ctx, &mut passed).await;
    export_checks::run(&ctx, &mut passed).await;
    range_checks::run(&ctx, &mut passed).await;
    encoding_checks::run(&ctx, &mut passed).await;
    error_checks::run(&ctx, &mut passed).await;
    auth_checks::run(&ctx, &mut passed).await;
    cors_checks::run(&ctx, &mut passed).await;
    tracing::info!(checks = passed.len(), "dual-http conformance suite passed");
    passed
}
