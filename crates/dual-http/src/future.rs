//! The future the `Service` impls return.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::Response;

use crate::ResponseBody;

type Inner = Pin<Box<dyn Future<Output = Result<Response<ResponseBody>, Infallible>> + Send>>;

/// The response future of [`DualHttp`](crate::DualHttp)'s `Service` impls. It never fails.
pub struct ResponseFuture {
    inner: Inner,
}

impl ResponseFuture {
    pub(crate) fn new(
        future: impl Future<Output = Result<Response<ResponseBody>, Infallible>> + Send + 'static,
    ) -> Self {
        Self {
            inner: Box::pin(future),
        }
    }
}

impl Future for ResponseFuture {
    type Output = Result<Response<ResponseBody>, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

impl fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}
