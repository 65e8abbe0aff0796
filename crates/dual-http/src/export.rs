//! The streamed export body: rows are encoded as the executor yields them, never collected first.

use std::task::{Context, Poll};

use bytes::Bytes;
use dual_core::{ResourceId, Row};
use dual_server::{BatchStream, ExecutorError, JsonRows, RowBatch};
use http_body::Frame;

use crate::ContentCoding;
use crate::body_error::BodyError;
#[cfg(feature = "compression")]
use crate::compress::Compressor;
use crate::encode::Encoder;

/// A frame is sent once this many bytes are buffered (or the executor has nothing ready). Large
/// batches are cut into frames of about this size, small ones are coalesced, so memory stays at one
/// executor batch plus one frame whatever the row count.
pub(crate) const FRAME_TARGET: usize = 32 * 1024;

pub(crate) struct ExportBody {
    id: ResourceId,
    encoder: Encoder,
    /// `None` once the executor has ended (or failed).
    stream: Option<BatchStream>,
    /// Rows of the current batch not yet encoded.
    pending: Pending,
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

impl std::fmt::Debug for ExportBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportBody")
            .field("id", &self.id)
            .field("encoder", &self.encoder)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl ExportBody {
    /// An export of `first` followed by the rest of `stream` (`None` when the executor has ended),
    /// sent with `coding`. Returns the coding actually used: identity when the crate is built without
    /// the `compression` feature.
    pub(crate) fn new(
        id: ResourceId,
        encoder: Encoder,
        first: RowBatch,
        stream: Option<BatchStream>,
        coding: ContentCoding,
    ) -> (Self, ContentCoding) {
        #[cfg(feature = "compression")]
        let (compressor, coding) = match Compressor::new(coding) {
            Ok(compressor) => (compressor, coding),
            Err(error) => {
                tracing::warn!(%id, %error, "dual-http could not start a compressor; sending the export uncompressed");
                (None, ContentCoding::Identity)
            }
        };
        #[cfg(not(feature = "compression"))]
        let coding = {
            let _ = coding;
            ContentCoding::Identity
        };
        let (pending, stream) = match Pending::new(first) {
            Ok(pending) => (pending, stream),
            Err(error) => {
                // Only a batch kind this crate does not know: end the export with an error.
                let failed: BatchStream = Box::pin(futures_util::stream::iter([Err(error)]));
                (Pending::empty(), Some(failed))
            }
        };
        let body = Self {
            id,
            encoder,
            stream,
            pending,
            #[cfg(feature = "compression")]
            compressor,
            state: State::Start,
        };
        (body, coding)
    }

    pub(crate) fn is_end_stream(&self) -> bool {
        self.state == State::Done
    }

    pub(crate) fn poll_frame(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        if self.state == State::Done {
            return Poll::Ready(None);
        }
        let (out, last) = match self.fill(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(error)) => return Poll::Ready(Some(Err(error))),
            Poll::Ready(Ok(filled)) => filled,
        };
        let out = match self.compress(out, last) {
            Ok(out) => out,
            Err(error) => return Poll::Ready(Some(Err(self.abort(&error.to_string())))),
        };
        if last {
            tracing::debug!(id = %self.id, rows = self.encoder.rows(), "export finished");
            return Poll::Ready((!out.is_empty()).then(|| Ok(Frame::data(Bytes::from(out)))));
        }
        if out.is_empty() {
            // A coder that buffered everything: poll again rather than send an empty frame.
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))))
    }

    /// Encodes rows until a frame is full, the executor has nothing ready, or the export ends:
    /// the frame's bytes and whether they are the last.
    fn fill(&mut self, cx: &mut Context<'_>) -> Poll<Result<(Vec<u8>, bool), BodyError>> {
        let mut out = Vec::new();
        if self.state == State::Start {
            self.state = State::Rows;
            if let Err(error) = self.encoder.open(&mut out) {
                return Poll::Ready(Err(self.abort(&error.to_string())));
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
                    return Poll::Ready(Err(self.abort(&error.to_string())));
                }
            }
            if out.len() >= FRAME_TARGET {
                return Poll::Ready(Ok((out, false)));
            }
            let Some(stream) = self.stream.as_mut() else {
                if let Err(error) = self.encoder.close(&mut out) {
                    return Poll::Ready(Err(self.abort(&error.to_string())));
                }
                self.state = State::Done;
                return Poll::Ready(Ok((out, true)));
            };
            match stream.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(batch))) => match Pending::new(batch) {
                    Ok(pending) => self.pending = pending,
                    Err(error) => return Poll::Ready(Err(self.abort(error.message()))),
                },
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Err(self.abort(error.message()))),
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

    /// Ends the export with an error, logging why (the client only sees the transfer break).
    fn abort(&mut self, detail: &str) -> BodyError {
        self.state = State::Done;
        self.stream = None;
        self.pending = Pending::empty();
        tracing::error!(
            id = %self.id,
            rows_sent = self.encoder.rows(),
            detail,
            "dual-http export aborted: the query failed, or a value did not fit the export format, while streaming"
        );
        BodyError::new()
    }
}
