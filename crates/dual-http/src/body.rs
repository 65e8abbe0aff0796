//! The response body: a buffer for JSON answers, a stream for exports.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use crate::export::ExportBody;

/// The body of every response the handler sends: nothing, one buffer (JSON answers and errors), or an
/// export streamed as the executor yields rows.
///
/// An export whose executor fails part-way ends with a [`BodyError`] instead of a clean end, so the
/// server aborts the transfer (hyper resets the stream or closes the connection) and the client sees a
/// broken download rather than a truncated file that looks complete.
pub struct ResponseBody {
    kind: Kind,
}

enum Kind {
    Full(Option<Bytes>),
    Export(Box<ExportBody>),
}

impl ResponseBody {
    /// An empty body.
    #[must_use]
    pub fn empty() -> Self {
        Self {
            kind: Kind::Full(None),
        }
    }

    /// A body of `bytes`.
    #[must_use]
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        Self {
            kind: Kind::Full((!bytes.is_empty()).then_some(bytes)),
        }
    }

    pub(crate) fn export(body: ExportBody) -> Self {
        Self {
            kind: Kind::Export(Box::new(body)),
        }
    }
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Full(bytes) => f
                .debug_struct("ResponseBody")
                .field("len", &bytes.as_ref().map_or(0, Bytes::len))
                .finish(),
            Kind::Export(export) => f.debug_tuple("ResponseBody").field(export).finish(),
        }
    }
}

impl Default for ResponseBody {
    fn default() -> Self {
        Self::empty()
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match &mut self.get_mut().kind {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Export(export) => export.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Export(export) => export.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Export(_) => SizeHint::default(),
        }
    }
}

/// An export was aborted because the query failed while streaming, or (Arrow exports) a value did
/// not fit its column (the details are logged, never sent). Returned by [`ResponseBody`]'s
/// `poll_frame`.
#[derive(Debug, thiserror::Error)]
#[error("export aborted: the query failed while streaming")]
pub struct BodyError {
    _private: (),
}

impl BodyError {
    pub(crate) const fn new() -> Self {
        Self { _private: () }
    }
}
