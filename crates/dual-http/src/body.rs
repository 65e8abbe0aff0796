//! The response body: a buffer for JSON answers, a few for a page, a stream for exports.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

use crate::body_error::BodyError;
use crate::export::ExportBody;

/// The body of every response the handler sends: nothing, one buffer (JSON answers and errors), a
/// few buffers sent one after another (a snapshot page, whose rows are slices of the spool's
/// segments), or an export streamed as the executor yields rows.
///
/// An export whose executor fails part-way ends with a [`BodyError`] instead of a clean end, so the
/// server aborts the transfer (hyper resets the stream or closes the connection) and the client sees a
/// broken download rather than a truncated file that looks complete.
pub struct ResponseBody {
    kind: Kind,
}

enum Kind {
    Full(Option<Bytes>),
    /// Buffers sent one after another (a page whose rows are slices of the spool's segments), the
    /// last first, and how many bytes they hold.
    Parts(Vec<Bytes>, u64),
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

    /// A body of `parts`, sent one after another (each as its own frame; hyper writes them with one
    /// vectored write).
    pub(crate) fn parts(mut parts: Vec<Bytes>) -> Self {
        parts.retain(|part| !part.is_empty());
        parts.reverse();
        let len = parts.iter().map(|part| part.len() as u64).sum();
        Self {
            kind: Kind::Parts(parts, len),
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
            Kind::Parts(parts, len) => f
                .debug_struct("ResponseBody")
                .field("len", len)
                .field("parts", &parts.len())
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
            Kind::Parts(parts, len) => Poll::Ready(parts.pop().map(|part| {
                *len -= part.len() as u64;
                Ok(Frame::data(part))
            })),
            Kind::Export(export) => export.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Parts(parts, _) => parts.is_empty(),
            Kind::Export(export) => export.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Parts(_, len) => SizeHint::with_exact(*len),
            Kind::Export(_) => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod export_tests {
    //! An export streamed through the response body.

    use dual_core::{ResourceId, Row};
    use dual_server::{ExecutorError, RowBatch, RowStream};
    use http_body_util::BodyExt;

    use super::ResponseBody;
    use crate::encode::Encoder;
    use crate::export::{ExportBody, FRAME_TARGET};
    use crate::{ContentCoding, CsvFormulas, ExportFormat};
    use serde_json::json;

    fn rows(range: std::ops::Range<u64>) -> Vec<Row> {
        range
            .map(|i| json!({"i": i}).as_object().cloned().unwrap_or_default())
            .collect()
    }

    /// An NDJSON export of rows 0 and 1, then `batches`.
    fn body(batches: Vec<Result<Vec<Row>, ExecutorError>>) -> ResponseBody {
        let batches = std::iter::once(Ok(rows(0..2)))
            .chain(batches)
            .map(|batch| batch.map(RowBatch::Rows));
        let stream: RowStream = Box::pin(futures_util::stream::iter(batches));
        let encoder = Encoder::new(ExportFormat::Ndjson, vec![], CsvFormulas::default());
        let (body, _) = ExportBody::new(ResourceId::new(), encoder, stream, ContentCoding::Identity);
        ResponseBody::export(body)
    }

    #[tokio::test]
    async fn streams_every_batch_then_ends() {
        let collected = body(vec![Ok(rows(2..3)), Ok(vec![]), Ok(rows(3..5000))])
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&collected);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5000);
        assert_eq!(lines[4999], r#"{"i":4999}"#);
    }

    #[tokio::test]
    async fn frames_stay_near_the_target_size() {
        let mut body = body(vec![Ok(rows(2..100_000))]);
        let mut frames = 0;
        while let Some(frame) = body.frame().await {
            let data = frame.ok().and_then(|f| f.into_data().ok()).unwrap_or_default();
            assert!(data.len() < FRAME_TARGET + 64, "frame of {} bytes", data.len());
            frames += 1;
        }
        assert!(frames > 10);
        assert!(http_body::Body::is_end_stream(&body));
    }

    #[tokio::test]
    async fn a_failing_executor_aborts_the_body() {
        let mut body = body(vec![Ok(rows(2..4)), Err(ExecutorError::new("SELECT boom"))]);
        let mut saw_error = false;
        while let Some(frame) = body.frame().await {
            if frame.is_err() {
                saw_error = true;
            }
        }
        assert!(saw_error);
        assert!(http_body::Body::is_end_stream(&body));
    }

    /// An export of `batches` alone, in `format`.
    fn export(format: ExportFormat, batches: Vec<Result<Vec<Row>, ExecutorError>>) -> ExportBody {
        let batches = batches.into_iter().map(|batch| batch.map(RowBatch::Rows));
        let stream: RowStream = Box::pin(futures_util::stream::iter(batches));
        let encoder = Encoder::new(format, vec![], CsvFormulas::default());
        ExportBody::new(ResourceId::new(), encoder, stream, ContentCoding::Identity).0
    }

    #[tokio::test]
    async fn a_failure_before_the_first_row_is_a_rejection() {
        let busy = || ExecutorError::overloaded("no connection", std::time::Duration::from_secs(2));
        for (batches, code) in [
            (vec![Err(ExecutorError::new("SELECT boom"))], "query_failed"),
            (
                vec![Ok(vec![]), Ok(vec![]), Err(ExecutorError::new("SELECT boom"))],
                "query_failed",
            ),
            (vec![Ok(vec![]), Err(busy())], "overloaded"),
        ] {
            for format in [ExportFormat::Json, ExportFormat::Ndjson, ExportFormat::Csv] {
                let mut body = export(format, batches.iter().map(clone_batch).collect());
                let rejection = body.prime().await.err();
                assert_eq!(rejection.map(|r| r.code().as_str()), Some(code), "{format:?}");
            }
        }
    }

    fn clone_batch(batch: &Result<Vec<Row>, ExecutorError>) -> Result<Vec<Row>, ExecutorError> {
        match batch {
            Ok(rows) => Ok(rows.clone()),
            Err(error) => Err(match error.retry_after() {
                Some(after) => ExecutorError::overloaded(error.message(), after),
                None => ExecutorError::new(error.message()),
            }),
        }
    }

    #[tokio::test]
    async fn primed_frames_go_first_and_a_later_failure_breaks_the_body() {
        let mut body = export(
            ExportFormat::Json,
            vec![
                Ok(vec![]),
                Ok(rows(0..5000)),
                Err(ExecutorError::new("SELECT boom")),
            ],
        );
        // The first frame (about FRAME_TARGET bytes of rows) is ready before the failure.
        assert!(body.prime().await.is_ok());
        let mut body = ResponseBody::export(body);
        let (mut sent, mut failed) = (Vec::new(), false);
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => sent.extend_from_slice(&frame.into_data().unwrap_or_default()),
                Err(_) => failed = true,
            }
        }
        assert!(failed, "the failure after the first frame breaks the transfer");
        let sent = String::from_utf8_lossy(&sent);
        assert!(sent.starts_with(r#"[{"i":0},{"i":1},"#), "{sent:.40}");
        assert!(sent.len() >= FRAME_TARGET && !sent.ends_with(']'));
    }

    #[tokio::test]
    async fn an_empty_export_primes_to_its_end() {
        let mut body = export(ExportFormat::Json, vec![Ok(vec![])]);
        assert!(body.prime().await.is_ok());
        let collected = ResponseBody::export(body).collect().await.map(|c| c.to_bytes());
        assert_eq!(collected.ok().as_deref(), Some(&b"[]"[..]));
    }
}

#[cfg(test)]
mod parts_tests {
    use bytes::Bytes;
    use http_body::Body;
    use http_body_util::BodyExt;

    use super::ResponseBody;

    #[tokio::test]
    async fn parts_are_sent_in_order_as_frames_of_an_exact_length() {
        let parts = ["{\"data\":[", "{\"a\":1},{\"a\":2}", "", ",", "{}", "]}"]
            .map(|part| Bytes::from_static(part.as_bytes()));
        let mut body = ResponseBody::parts(parts.to_vec());
        assert_eq!(body.size_hint().exact(), Some(29));
        let mut frames = Vec::new();
        while let Some(frame) = body.frame().await {
            let data = frame
                .ok()
                .and_then(|frame| frame.into_data().ok())
                .unwrap_or_default();
            frames.push(data);
            assert_eq!(
                body.size_hint().exact(),
                Some(29 - frames.iter().map(|f| f.len() as u64).sum::<u64>())
            );
        }
        assert_eq!(frames.len(), 5, "the empty part is no frame");
        assert_eq!(frames.concat(), parts.concat());
        assert!(body.is_end_stream());
        assert!(ResponseBody::parts(Vec::new()).is_end_stream());
    }
}
