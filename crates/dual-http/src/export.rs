//! The streamed export body: rows are encoded as the executor yields them, never collected first.

use std::task::{Context, Poll};

use bytes::Bytes;
use dual_core::error::Report;
use dual_core::escape::log_safe;
use dual_core::{ResourceId, Row};
use dual_server::{ExecutorError, JsonRows, RowBatch, RowStream, ServerError};
use http_body::Frame;

use crate::ContentCoding;
use crate::body_error::BodyError;
#[cfg(feature = "compression")]
use crate::compress::Compressor;
use crate::encode::Encoder;
use crate::rejection::Rejection;

/// A frame is sent once this many bytes are buffered (or the executor has nothing ready). Large
/// batches are cut into frames of about this size, small ones are coalesced, so memory stays at one
/// executor batch plus one frame whatever the row count.
pub(crate) const FRAME_TARGET: usize = 32 * 1024;

pub(crate) struct ExportBody {
    id: ResourceId,
    encoder: Encoder,
    /// `None` once the executor has ended (or failed).
    stream: Option<RowStream>,
    /// Rows of the current batch not yet encoded.
    pending: Pending,
    /// What [`ExportBody::prime`] produced before the response head went out: sent first, as one
    /// frame.
    primed: Option<Bytes>,
    /// Compresses each frame on its way out; `None` for identity.
    #[cfg(feature = "compression")]
    compressor: Option<Compressor>,
    state: State,
}

/// The rows of the current batch not yet encoded: decoded rows from an executor, or a snapshot's
/// rows as stored, which the JSON formats copy as they are.
enum Pending {
    Rows(std::vec::IntoIter<Row>),
    Json { rows: JsonRows, next: usize },
}

impl Pending {
    fn empty() -> Self {
        Self::Rows(Vec::new().into_iter())
    }

    fn new(batch: RowBatch) -> Result<Self, ExecutorError> {
        Ok(match batch {
            RowBatch::Json(rows) => Self::Json { rows, next: 0 },
            RowBatch::Rows(rows) => Self::Rows(rows.into_iter()),
            other => Self::Rows(other.into_rows()?.into_iter()),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing sent yet: the opening (`[`, the CSV header) comes first.
    Start,
    Rows,
    /// The closing bytes were sent, or the export was aborted.
    Done,
}

/// Why an export stopped early. Before the response head went out it becomes the error response
/// ([`ExportBody::prime`]); after, it is logged and the transfer breaks.
#[derive(Debug)]
enum Failure {
    /// The executor, or the snapshot read, failed.
    Executor(ExecutorError),
    /// A value did not fit the export format (Arrow), or a coder failed.
    Encode(String),
}

impl Failure {
    fn detail(&self) -> &str {
        match self {
            Self::Executor(error) => error.message(),
            Self::Encode(detail) => detail,
        }
    }

    /// The error response of an export that failed before its first byte: the executor's error as
    /// any other request gets it (500 `query_failed`, 503 `overloaded` with `Retry-After`, …), an
    /// encoding failure as 500 `query_failed`.
    fn into_rejection(self) -> Rejection {
        match self {
            Self::Executor(error) => Rejection::from(ServerError::query_failed(error)),
            Self::Encode(detail) => Rejection::QueryFailed { detail },
        }
    }
}

impl std::fmt::Debug for ExportBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportBody")
            .field("id", &self.id)
            .field("encoder", &self.encoder)
            .field("primed", &self.primed.as_ref().map_or(0, Bytes::len))
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl ExportBody {
    /// An export of the batches of `stream`, sent with `coding`. Returns the coding actually used:
    /// identity when the crate is built without the `compression` feature.
    pub(crate) fn new(
        id: ResourceId,
        encoder: Encoder,
        stream: RowStream,
        coding: ContentCoding,
    ) -> (Self, ContentCoding) {
        #[cfg(feature = "compression")]
        let (compressor, coding) = match Compressor::new(coding) {
            Ok(compressor) => (compressor, coding),
            Err(error) => {
                tracing::warn!(%id, error = %log_safe(&error.to_string()), "dual-http could not start a compressor; sending the export uncompressed");
                (None, ContentCoding::Identity)
            }
        };
        #[cfg(not(feature = "compression"))]
        let coding = {
            let _ = coding;
            ContentCoding::Identity
        };
        let body = Self {
            id,
            encoder,
            stream: Some(stream),
            pending: Pending::empty(),
            primed: None,
            #[cfg(feature = "compression")]
            compressor,
            state: State::Start,
        };
        (body, coding)
    }

    /// Produces the export's first frames before the response head goes out: until a frame carries
    /// rows, or the export has ended. They are kept and sent first, as one frame (the opening and the
    /// first rows together, as before priming). So an executor that fails before
    /// its first row, or a first batch that does not fit the format (Arrow), is answered with an
    /// error response like any other rejection rather than a transfer that breaks before it began.
    /// A failure after this point breaks the transfer.
    ///
    /// # Errors
    /// The failure, as the rejection to render.
    pub(crate) async fn prime(&mut self) -> Result<(), Rejection> {
        let mut head = Vec::new();
        loop {
            match std::future::poll_fn(|cx| self.poll_data(cx)).await {
                Some(Ok(bytes)) => {
                    head.extend_from_slice(&bytes);
                    if self.encoder.rows() > 0 {
                        break;
                    }
                }
                Some(Err(failure)) => return Err(failure.into_rejection()),
                None => break,
            }
        }
        self.primed = (!head.is_empty()).then(|| Bytes::from(head));
        Ok(())
    }

    pub(crate) fn is_end_stream(&self) -> bool {
        self.state == State::Done && self.primed.is_none()
    }

    pub(crate) fn poll_frame(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        if let Some(bytes) = self.primed.take() {
            return Poll::Ready(Some(Ok(Frame::data(bytes))));
        }
        match self.poll_data(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Ready(Some(Ok(bytes))) => Poll::Ready(Some(Ok(Frame::data(bytes)))),
            Poll::Ready(Some(Err(failure))) => {
                tracing::error!(
                    id = %self.id,
                    rows_sent = self.encoder.rows(),
                    detail = %log_safe(failure.detail()),
                    "dual-http export aborted: the query failed, or a value did not fit the export format, while streaming"
                );
                Poll::Ready(Some(Err(BodyError::new())))
            }
        }
    }

    /// The next frame's bytes as they go on the wire, `None` at the end.
    fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Failure>>> {
        if self.state == State::Done {
            return Poll::Ready(None);
        }
        let (out, last) = match self.fill(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(failure)) => return Poll::Ready(Some(Err(failure))),
            Poll::Ready(Ok(filled)) => filled,
        };
        let out = match self.compress(out, last) {
            Ok(out) => out,
            Err(error) => {
                return Poll::Ready(Some(Err(
                    self.stop(Failure::Encode(Report::new(&error).to_string()))
                )));
            }
        };
        if last {
            tracing::debug!(id = %self.id, rows = self.encoder.rows(), "export finished");
            return Poll::Ready((!out.is_empty()).then(|| Ok(Bytes::from(out))));
        }
        if out.is_empty() {
            // A coder that buffered everything: poll again rather than send an empty frame.
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(Some(Ok(Bytes::from(out))))
    }

    /// Encodes rows until a frame is full, the executor has nothing ready, or the export ends:
    /// the frame's bytes and whether they are the last.
    fn fill(&mut self, cx: &mut Context<'_>) -> Poll<Result<(Vec<u8>, bool), Failure>> {
        let mut out = Vec::new();
        if self.state == State::Start {
            self.state = State::Rows;
            if let Err(error) = self.encoder.open(&mut out) {
                return Poll::Ready(Err(self.stop(Failure::Encode(Report::new(&error).to_string()))));
            }
        }
        loop {
            while out.len() < FRAME_TARGET {
                let encoded = match &mut self.pending {
                    Pending::Rows(rows) => match rows.next() {
                        Some(row) => self.encoder.row(&row, &mut out),
                        None => break,
                    },
                    Pending::Json { rows, next } => match rows.get(*next) {
                        Some(row) => {
                            *next += 1;
                            self.encoder.json_row(&row, &mut out)
                        }
                        None => break,
                    },
                };
                if let Err(error) = encoded {
                    return Poll::Ready(Err(self.stop(Failure::Encode(Report::new(&error).to_string()))));
                }
            }
            if out.len() >= FRAME_TARGET {
                return Poll::Ready(Ok((out, false)));
            }
            let Some(stream) = self.stream.as_mut() else {
                if let Err(error) = self.encoder.close(&mut out) {
                    return Poll::Ready(Err(self.stop(Failure::Encode(Report::new(&error).to_string()))));
                }
                self.state = State::Done;
                return Poll::Ready(Ok((out, true)));
            };
            match stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(batch))) => match Pending::new(batch) {
                    Ok(pending) => self.pending = pending,
                    Err(error) => return Poll::Ready(Err(self.stop(Failure::Executor(error)))),
                },
                Poll::Ready(Some(Err(error))) => {
                    return Poll::Ready(Err(self.stop(Failure::Executor(error))));
                }
                Poll::Ready(None) => self.stream = None,
                Poll::Pending if out.is_empty() => return Poll::Pending,
                Poll::Pending => return Poll::Ready(Ok((out, false))),
            }
        }
    }

    /// The frame as it goes on the wire: compressed and flushed (the coder ended on the last frame).
    #[cfg(feature = "compression")]
    fn compress(&mut self, out: Vec<u8>, last: bool) -> std::io::Result<Vec<u8>> {
        match self.compressor.as_mut() {
            None => Ok(out),
            Some(compressor) if last => compressor.finish(&out),
            Some(compressor) => compressor.frame(&out),
        }
    }

    #[cfg(not(feature = "compression"))]
    #[expect(
        clippy::unnecessary_wraps,
        clippy::unused_self,
        reason = "the signature of the feature's version"
    )]
    fn compress(&mut self, out: Vec<u8>, _last: bool) -> std::io::Result<Vec<u8>> {
        Ok(out)
    }

    /// Ends the export (dropping the executor's stream) because of `failure`, which is returned.
    fn stop(&mut self, failure: Failure) -> Failure {
        self.state = State::Done;
        self.stream = None;
        self.pending = Pending::empty();
        failure
    }
}
