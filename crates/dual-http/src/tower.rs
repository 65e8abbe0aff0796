//! `tower::Service` for the handler (feature `tower`), so axum can `nest_service` it.

use std::task::{Context, Poll};

use http::Request;
use hyper::service::Service as HyperService;

use crate::DualHttp;

/// Always ready; `call` is hyper's `Service::call`, so both adapters run the same code, for the same
/// request bodies, with the same response and future types (hyper's impl states the body bound once).
impl<B> tower_service::Service<Request<B>> for DualHttp
where
    Self: HyperService<Request<B>>,
{
    type Response = <Self as HyperService<Request<B>>>::Response;
    type Error = <Self as HyperService<Request<B>>>::Error;
    type Future = <Self as HyperService<Request<B>>>::Future;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        HyperService::call(&*self, request)
    }
}
