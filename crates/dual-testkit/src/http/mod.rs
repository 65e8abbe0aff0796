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
use support::run_checks;

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
    let ctx = &support::Ctx::new(mount, &make);
    let mut passed = Vec::new();
    run_checks!(passed:
        // `GET /{id}` and `POST /{id}`: metadata and pages, `HEAD`, concurrency.
        "get_metadata" => read_checks::metadata(ctx),
        "post_page_empty_body_defaults" => read_checks::page_defaults(ctx),
        "post_page_arithmetic_exact_has_next" => read_checks::page_arithmetic(ctx),
        "post_page_json_content_types" => read_checks::page_content_types(ctx),
        "post_page_sort" => read_checks::page_sort(ctx),
        "head_on_get_routes" => read_checks::head(ctx),
        "concurrent_posts" => read_checks::concurrent_pages(ctx),
        // `PUT /{id}` (pin) and `DELETE /{id}`.
        "put_pin" => write_checks::pin(ctx),
        "delete_204" => write_checks::delete(ctx),
    );
    // The export checks, the range checks and the encoding checks each share one resource.
    let exported = ctx.create(export_checks::ROWS).await;
    run_checks!(passed:
        "export_json_array" => export_checks::json_array(ctx, exported),
        "export_ndjson" => export_checks::ndjson(ctx, exported),
        "export_csv" => export_checks::csv(ctx, exported),
        "export_sort" => export_checks::sorted(ctx, exported),
        "export_invalid_query" => export_checks::bad_queries(ctx, exported),
        "export_empty_result" => export_checks::empty(ctx),
        "export_query_failures" => export_checks::failures(ctx),
    );
    let ranged = ctx.create(range_checks::ROWS).await;
    run_checks!(passed:
        "export_ranges_cover_every_row_once" => range_checks::split_into_ranges(ctx, ranged),
        "export_range_edges" => range_checks::edges(ctx, ranged),
        "export_invalid_range" => range_checks::bad_ranges(ctx, ranged),
    );
    let encoded = ctx.create(encoding_checks::ROWS).await;
    run_checks!(passed:
        "export_not_acceptable" => encoding_checks::not_acceptable(ctx, encoded),
        "export_compression" => encoding_checks::compression(ctx, encoded),
    );
    run_checks!(passed:
        // The error table of docs/DESIGN.md §5, plus hostile input.
        "400_invalid_request_names_the_field" => error_checks::invalid_bodies(ctx),
        "404_not_found" => error_checks::not_found(ctx),
        "404_expired" => error_checks::expired(ctx),
        "409_not_ready_and_failed_resources" => error_checks::not_ready(ctx),
        "405_method_not_allowed" => error_checks::method_not_allowed(ctx),
        "413_payload_too_large" => error_checks::too_large(ctx),
        "415_unsupported_media_type" => error_checks::not_json(ctx),
        "500_query_failed" => error_checks::query_failed(ctx),
        "503_storage_error" => error_checks::storage(ctx),
        "hostile_input" => error_checks::hostile(ctx),
        // The authorization hook and owner binding.
        "owner_binding_404_for_others" => auth_checks::owner_binding(ctx),
        // CORS, when configured.
        "cors_preflight" => cors_checks::preflight(ctx),
        "cors_response_headers" => cors_checks::simple(ctx),
    );
    tracing::info!(checks = passed.len(), "dual-http conformance suite passed");
    passed
}
