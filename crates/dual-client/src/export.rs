//! The streamed export, `GET {url}/data` as NDJSON, read batch by batch.

use std::time::Duration;

use dual_core::{Row, Sort};
use http::{Method, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::time::{Instant, timeout};

use crate::client::DualResponseClient;
use crate::error::ClientError;
use crate::ndjson::NdjsonDecoder;
use crate::transport::{Call, NDJSON, Sent, error_from_response};

/// An open export body and its decoder.
#[derive(Debug)]
pub(crate) struct Export {
    body: Incoming,
    decoder: NdjsonDecoder,
    idle: Duration,
    ended: bool,
}

/// Opens the export of the resource at `url`; a `not_ready` answer is asked again until `ready_by`
/// when it is set.
///
/// `Ok(None)` means the server has no export (see [`body_of`]): the caller falls back to pages, which
/// tell a missing resource from a missing endpoint.
pub(crate) async fn open(
    client: &DualResponseClient,
    url: &str,
    sort: Option<&Sort>,
    ready_by: Option<Instant>,
) -> Result<Option<Export>, ClientError> {
    let export_url = crate::url::export_url(url, sort);
    let call = Call {
        accept: NDJSON,
        ready_by,
        ..Call::new(Method::GET, &export_url)
    };
    let sent = client.send(&call).await?;
    Ok(body_of(sent).await?.map(|body| Export {
        body,
        decoder: NdjsonDecoder::default(),
        idle: client.timeout(),
        ended: false,
    }))
}

/// The NDJSON body of an answer to an export request (whole or a range).
///
/// `Ok(None)` means the server has no export: 404 other than `expired`, 405, 501, or a 200 that is not
/// NDJSON. Any other error status is its error, and so is a `Content-Encoding` the client never asked
/// for (it asks for none).
pub(crate) async fn body_of(sent: Sent) -> Result<Option<Incoming>, ClientError> {
    let status = sent.response.status();
    match status {
        StatusCode::OK => {}
        StatusCode::NOT_FOUND => {
            let error = error_from_response(sent).await;
            if error.is_expired() {
                return Err(error);
            }
            tracing::debug!("no export endpoint (404); falling back to pages");
            return Ok(None);
        }
        StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED => {
            tracing::debug!(%status, "no export endpoint; falling back to pages");
            return Ok(None);
        }
        _ => return Err(error_from_response(sent).await),
    }
    let headers = sent.response.headers();
    let is_ndjson = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| {
            let v = v.trim();
            v.eq_ignore_ascii_case(NDJSON)
                || v.eq_ignore_ascii_case("application/jsonl")
                || v.eq_ignore_ascii_case("application/ndjson")
        });
    if !is_ndjson {
        tracing::debug!("export answered without NDJSON; falling back to pages");
        return Ok(None);
    }
    let encoded = headers
        .get(header::CONTENT_ENCODING)
        .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"));
    if encoded {
        return Err(ClientError::fetch(
            "the export is content-encoded although the client asked for no encoding",
        )
        .with_status(status));
    }
    Ok(Some(sent.response.into_body()))
}

impl Export {
    /// Up to `max` further rows; `None` once the export is exhausted.
    ///
    /// Every wait for the next chunk of body is bounded by the client's timeout.
    pub(crate) async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<Row>>, ClientError> {
        let max = max.max(1);
        let mut rows = Vec::with_capacity(max.min(4096));
        loop {
            while rows.len() < max {
                match self
                    .decoder
                    .next_row()
                    .map_err(|e| e.with_status(StatusCode::OK))?
                {
                    Some(row) => rows.push(row),
                    None => break,
                }
            }
            if rows.len() >= max {
                return Ok(Some(rows));
            }
            if self.ended {
                if let Some(row) = self.decoder.finish().map_err(|e| e.with_status(StatusCode::OK))? {
                    rows.push(row);
                }
                return Ok((!rows.is_empty()).then_some(rows));
            }
            match timeout(self.idle, self.body.frame()).await {
                Err(_) => {
                    return Err(ClientError::timeout(format!(
                        "the export sent nothing for {:?}",
                        self.idle
                    )));
                }
                Ok(None) => self.ended = true,
                Ok(Some(Err(error))) => {
                    return Err(ClientError::fetch("the export body was cut off or unreadable")
                        .with_status(StatusCode::OK)
                        .with_source(error));
                }
                Ok(Some(Ok(frame))) => {
                    if let Some(data) = frame.data_ref() {
                        self.decoder.push(data);
                    }
                }
            }
        }
    }
}
