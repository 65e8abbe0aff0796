//! Downloading row ranges of the `/data` export in parallel, and putting them back in order.

use std::ops::Range;

use dual_core::{Row, Sort};
use futures_util::{StreamExt, stream};
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::time::{Instant, sleep, timeout};

use crate::client::DualResponseClient;
use crate::error::ClientError;
use crate::export;
use crate::ndjson::NdjsonDecoder;
use crate::progress::Progress;
use crate::transport::{Call, NDJSON};

/// Where the ranges come from.
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub(crate) client: &'a DualResponseClient,
    pub(crate) url: &'a str,
    pub(crate) sort: Option<&'a Sort>,
    pub(crate) progress: &'a Progress,
    /// Until when a request answered `not_ready` is asked again.
    pub(crate) ready_by: Instant,
}

/// Downloads `ranges` (contiguous, in order, covering `0..total`) with at most `parallelism` requests
/// in flight, and returns their rows in order.
///
/// `Ok(None)` when the server has no export endpoint. The first failing range fails the whole
/// download at once (the others are cancelled). The last range asks for one row more than planned, so
/// a server holding more rows than `total_count` is caught too.
///
/// # Errors
/// A range's error (see [`fetch_range`]).
pub(crate) async fn download(
    source: Source<'_>,
    ranges: Vec<Range<u64>>,
    parallelism: usize,
) -> Result<Option<Vec<Row>>, ClientError> {
    let last = ranges.len().checked_sub(1);
    let mut slots: Vec<Option<Vec<Row>>> = Vec::new();
    slots.resize_with(ranges.len(), || None);
    let mut done = stream::iter(ranges.into_iter().enumerate())
        .map(|(index, range)| async move { (index, fetch_range(source, range, Some(index) == last).await) })
        .buffer_unordered(parallelism.max(1));
    while let Some((index, result)) = done.next().await {
        match result? {
            Some(rows) => slots[index] = Some(rows),
            None => return Ok(None),
        }
    }
    drop(done);
    let count = slots.iter().flatten().map(Vec::len).sum();
    let mut rows = Vec::with_capacity(count);
    for slot in slots {
        rows.extend(slot.unwrap_or_default());
    }
    Ok(Some(rows))
}

/// Why reading a range's body stopped early.
enum Stop {
    /// The body was cut off or unreadable: the rest of the range may be asked for again.
    Interrupted(ClientError),
    /// Anything else (a bad line, a stall, too many rows): final.
    Failed(ClientError),
}

/// Downloads one range, `Ok(None)` when the server has no export.
///
/// A response cut off midway is resumed from the first missing row, as often as the client's retry
/// policy allows; 429 and 503 (with their `Retry-After`) and connect errors are retried by the
/// transport, and so is 409 `not_ready` until `source.ready_by`. Rows that arrived are kept, and
/// counted in the progress once.
///
/// # Errors
/// The response's error; a `FETCH_ERROR` when a range that is not the last has fewer rows than asked
/// for, or any range has more.
async fn fetch_range(
    source: Source<'_>,
    range: Range<u64>,
    last: bool,
) -> Result<Option<Vec<Row>>, ClientError> {
    let want = range.end - range.start;
    let context = || format!("rows {}..{}", range.start, range.end);
    let mut rows = Vec::with_capacity(usize::try_from(want.min(1 << 16)).unwrap_or(0));
    let retry = source.client.shared().retry;
    let mut retries = 0;
    // The last range asks for one more row: a row past the planned end means a longer result.
    let ask = want + u64::from(last);
    loop {
        // `read_range` never lets more than `ask` rows in, so this cannot underflow.
        let limit = ask - rows.len() as u64;
        if limit == 0 {
            break;
        }
        let offset = range.start + rows.len() as u64;
        let url = crate::url::range_url(source.url, offset, limit, source.sort);
        let call = Call {
            accept: NDJSON,
            ready_by: Some(source.ready_by),
            ..Call::new(Method::GET, &url)
        };
        let sent = source
            .client
            .send(&call)
            .await
            .map_err(|e| e.context(context()))?;
        let Some(body) = export::body_of(sent).await.map_err(|e| e.context(context()))? else {
            return Ok(None);
        };
        match read_range(source, body, &mut rows, ask).await {
            Ok(()) => break,
            Err(Stop::Interrupted(error)) if retries < retry.max_retries => {
                let delay = retry.backoff(retries);
                tracing::debug!(?range, got = rows.len(), retry = retries, delay_ms = delay.as_millis(),
                    error = %dual_core::escape::log_safe(&error.to_string()), "range cut off; resuming");
                retries += 1;
                sleep(delay).await;
            }
            Err(Stop::Interrupted(error) | Stop::Failed(error)) => return Err(error.context(context())),
        }
    }
    let got = rows.len() as u64;
    if got > want {
        return Err(ClientError::fetch(format!(
            "the server has more rows than total_count: expected {} rows in all, got at least {}",
            range.end,
            range.start + got
        ))
        .with_status(StatusCode::OK));
    }
    if got < want && !last {
        return Err(ClientError::fetch(format!(
            "the server returned a short range: expected {want} rows, got {got}"
        ))
        .with_status(StatusCode::OK)
        .context(context()));
    }
    Ok(Some(rows))
}

/// Reads a range's NDJSON body into `rows`, stopping with an error past `max` rows in all.
async fn read_range(
    source: Source<'_>,
    mut body: Incoming,
    rows: &mut Vec<Row>,
    max: u64,
) -> Result<(), Stop> {
    let idle = source.client.timeout();
    let mut decoder = NdjsonDecoder::default();
    let fail = |e: ClientError| Stop::Failed(e.with_status(StatusCode::OK));
    loop {
        let before = rows.len();
        match timeout(idle, body.frame()).await {
            Err(_) => {
                return Err(Stop::Failed(ClientError::timeout(format!(
                    "the export sent nothing for {idle:?}"
                ))));
            }
            Ok(None) => {
                if let Some(row) = decoder.finish().map_err(fail)? {
                    rows.push(row);
                }
                source.progress.add(rows.len() - before);
                return Ok(());
            }
            Ok(Some(Err(error))) => {
                // Rows decoded so far stay; a partial last line is dropped with the decoder.
                return Err(Stop::Interrupted(
                    ClientError::fetch("the export body was cut off or unreadable")
                        .with_status(StatusCode::OK)
                        .with_source(error),
                ));
            }
            Ok(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    decoder.feed(data, |row| rows.push(row)).map_err(fail)?;
                }
            }
        }
        source.progress.add(rows.len() - before);
        if rows.len() as u64 > max {
            return Err(fail(ClientError::fetch(format!(
                "the server sent more rows than the {max} asked for"
            ))));
        }
    }
}
