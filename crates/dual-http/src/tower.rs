//! `tower::Service` for the handler (feature `tower`), so axum can `nest_service` it.

use std::convert::Infallible;
use std::task::{Context, Poll};

use http::{Request, Response};
use http_body::Body;

use crate::{BoxError, DualHttp, ResponseBody, ResponseFuture};

/// Always ready; `call` is hyper's `Service::call`, so both adapters run the same code.
impl<B> tower_service::Service<Request<B>> for DualHttp
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> ResponseFuture {
        hyper::service::Service::call(&*self, request)
    }
}
