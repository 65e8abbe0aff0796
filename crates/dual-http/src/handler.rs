//! `DualHttp`: the handler, and its hyper `Service`.

use std::convert::Infallible;
use std::sync::Arc;

use dual_server::DualResponseServer;
use http::{Request, Response};
use http_body::Body;
use tracing::Instrument;

use crate::execute::{ApiResponse, execute};
use crate::parse::parse_request;
use crate::render::render;
use crate::{BoxError, DualHttpBuilder, HttpConfig, ResponseBody, ResponseFuture};

/// The REST API of docs/DESIGN.md §5 over a [`DualResponseServer`], as an infallible handler of
/// `http::Request<B>` for any body type `B`.
///
/// A cheap `Clone` handle. Serve it with [`DualHttp::handle`], as a hyper `Service` (raw hyper,
/// hyper-util's servers), or with feature `tower` as a `tower::Service` (axum's `nest_service`, tower
/// stacks). Every path runs the same parse → execute → render steps, so adapters cannot disagree.
#[derive(Clone, Debug)]
pub struct DualHttp {
    server: DualResponseServer,
    config: Arc<HttpConfig>,
}

impl DualHttp {
    /// A handler with the default options: no prefix, a 64 KiB body limit, no CORS, and the
    /// [`Anonymous`](crate::Anonymous) authorization hook.
    #[must_use]
    pub fn new(server: DualResponseServer) -> Self {
        Self::from_parts(server, HttpConfig::default())
    }

    /// A builder for a handler over `server`.
    pub fn builder(server: DualResponseServer) -> DualHttpBuilder {
        DualHttpBuilder::new(server)
    }

    pub(crate) fn from_parts(server: DualResponseServer, config: HttpConfig) -> Self {
        Self {
            server,
            config: Arc::new(config),
        }
    }

    /// The server the handler serves.
    #[must_use]
    pub fn server(&self) -> &DualResponseServer {
        &self.server
    }

    /// The handler's options.
    #[must_use]
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// Answers one request: parse it, run it against the server, render the answer. Never fails and never panics on
    /// client input; every error is rendered as docs/DESIGN.md §5's JSON.
    pub async fn handle<B>(&self, request: Request<B>) -> Response<ResponseBody>
    where
        B: Body,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = request.into_parts();
        // One span per request: method and path only (the path carries the resource id, never row data;
        // headers, which may carry credentials, and the query, which may carry a capability link's
        // token, are not recorded; `log_path` cuts a query encoded into the path).
        let span = tracing::debug_span!(
            "dual_http.request",
            method = %parts.method,
            path = %dual_core::escape::log_path(parts.uri.path()),
            status = tracing::field::Empty,
        );
        let response = async {
            let response = match parse_request(&self.config, &parts, body).await {
                Ok(parsed) => execute(&self.server, &self.config, &parts, parsed).await,
                Err(rejection) => ApiResponse::Error(rejection),
            };
            render(&self.config, &parts, response)
        }
        .instrument(span.clone())
        .await;
        span.record("status", response.status().as_u16());
        crate::metrics::request(&self.config, &parts, response.status());
        response
    }
}

impl DualHttpBuilder {
    /// The handler.
    pub fn build(self) -> DualHttp {
        DualHttp::from_parts(self.server, self.config)
    }
}

impl<B> hyper::service::Service<Request<B>> for DualHttp
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, request: Request<B>) -> ResponseFuture {
        let this = self.clone();
        ResponseFuture::new(async move { Ok(this.handle(request).await) })
    }
}
