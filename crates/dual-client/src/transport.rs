//! Sending one request: default headers, per-attempt deadline, retries, bounded body reads.

use std::error::Error as StdError;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use serde::de::DeserializeOwned;
use time::OffsetDateTime;
use tokio::time::{Instant, sleep, timeout_at};

use crate::client::DualResponseClient;
use crate::error::ClientError;
use crate::retry::{is_retryable_status, retry_after};

/// How much of an error body is read to find the server's `{"error", "message"}`.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

pub(crate) const JSON: &str = "application/json";
pub(crate) const NDJSON: &str = "application/x-ndjson";

/// The wait before asking again after a 409 `not_ready` without `Retry-After` (servers send 1 s).
const NOT_READY_DELAY: Duration = Duration::from_secs(1);

/// The shortest wait before asking again after a 409 `not_ready`, whatever its `Retry-After` says.
const MIN_NOT_READY_DELAY: Duration = Duration::from_millis(100);

/// One request to make.
#[derive(Debug, Clone)]
pub(crate) struct Call<'a> {
    pub(crate) method: Method,
    pub(crate) url: &'a str,
    pub(crate) accept: &'static str,
    pub(crate) json_body: Option<Bytes>,
    /// When set, a 409 `not_ready` (the resource's query is still running) is asked again after its
    /// `Retry-After` until this instant, then is a `TIMEOUT`; when unset it is a `NOT_READY` error.
    pub(crate) ready_by: Option<Instant>,
}

impl<'a> Call<'a> {
    pub(crate) fn new(method: Method, url: &'a str) -> Self {
        Self {
            method,
            url,
            accept: JSON,
            json_body: None,
            ready_by: None,
        }
    }
}

/// A response head and the deadline its body must be read by.
#[derive(Debug)]
pub(crate) struct Sent {
    pub(crate) response: Response<Incoming>,
    pub(crate) deadline: Instant,
}

impl DualResponseClient {
    /// Sends `call`, retrying connect errors, 429 and 503 as the retry policy allows, and a 409
    /// `not_ready` (the result is still being computed) until `call.ready_by` when it is set.
    ///
    /// Returns the final response whatever its status; the caller decides what a status means. Each
    /// attempt has its own deadline of `timeout`, and the returned deadline bounds reading the body.
    pub(crate) async fn send(&self, call: &Call<'_>) -> Result<Sent, ClientError> {
        let shared = self.shared();
        let uri: Uri = call
            .url
            .parse()
            .map_err(|e| ClientError::parse("invalid resource URL").with_source(e))?;
        let mut retry = 0;
        loop {
            let deadline = Instant::now() + shared.timeout;
            let request = self.build_request(call, &uri);
            let error = match timeout_at(deadline, shared.http.request(request)).await {
                Err(_) => {
                    tracing::debug!(method = %call.method, "request timed out");
                    return Err(ClientError::timeout(format!(
                        "no response within {:?}",
                        shared.timeout
                    )));
                }
                Ok(Ok(response)) => {
                    let status = response.status();
                    if let Some(ready_by) = call.ready_by.filter(|_| status == StatusCode::CONFLICT) {
                        let sent = Sent { response, deadline };
                        wait_until_ready(sent, ready_by).await?;
                        continue;
                    }
                    let retryable = is_retryable_status(status);
                    let delay = (retryable && retry < shared.retry.max_retries)
                        .then(|| shared.retry.delay_for_response(retry, response.headers()))
                        .flatten();
                    let sent = Sent { response, deadline };
                    let Some(delay) = delay else {
                        return Ok(sent);
                    };
                    tracing::debug!(%status, retry, delay_ms = delay.as_millis(), "retrying");
                    // Read the short error body so the connection can be reused; its content is moot.
                    drop(read_limited(sent, ERROR_BODY_LIMIT).await);
                    sleep(delay).await;
                    retry += 1;
                    continue;
                }
                Ok(Err(error)) => error,
            };
            // A certificate the client does not trust stays untrusted: no retry.
            let tls = is_tls_failure(&error);
            let connect = error.is_connect() && !tls;
            if connect && retry < shared.retry.max_retries {
                let delay = shared.retry.backoff(retry);
                tracing::debug!(retry, delay_ms = delay.as_millis(), "connect failed; retrying");
                sleep(delay).await;
                retry += 1;
                continue;
            }
            let message = if tls {
                "the TLS handshake failed"
            } else if connect {
                "could not connect to the server"
            } else {
                "the request failed"
            };
            let error_out = ClientError::fetch(message).with_source(error);
            return Err(if connect { error_out.connect() } else { error_out });
        }
    }

    fn build_request(&self, call: &Call<'_>, uri: &Uri) -> Request<Full<Bytes>> {
        let shared = self.shared();
        let body = call.json_body.clone().unwrap_or_default();
        let has_body = call.json_body.is_some();
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = call.method.clone();
        *request.uri_mut() = uri.clone();
        let headers = request.headers_mut();
        headers.clone_from(&shared.headers);
        headers.insert(header::ACCEPT, HeaderValue::from_static(call.accept));
        if has_body {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
        }
        request
    }

    /// Sends `call` and decodes a successful JSON response as `T`; `what` names it in errors.
    pub(crate) async fn json<T: DeserializeOwned>(
        &self,
        call: &Call<'_>,
        what: &str,
    ) -> Result<T, ClientError> {
        self.json_and_headers(call, what).await.map(|(value, _)| value)
    }

    /// As [`json`](Self::json), with the response headers.
    pub(crate) async fn json_and_headers<T: DeserializeOwned>(
        &self,
        call: &Call<'_>,
        what: &str,
    ) -> Result<(T, HeaderMap), ClientError> {
        let sent = self.send(call).await?;
        let status = sent.response.status();
        if !status.is_success() {
            return Err(error_from_response(sent).await);
        }
        let headers = sent.response.headers().clone();
        let body = read_limited(sent, self.shared().max_body_bytes)
            .await
            .map_err(|e| e.with_status(status))?;
        let value = decode_json(&body, what).map_err(|e| e.with_status(status))?;
        Ok((value, headers))
    }

    /// Sends `call` and checks for a success status, discarding the body.
    pub(crate) async fn expect_success(&self, call: &Call<'_>) -> Result<StatusCode, ClientError> {
        let sent = self.send(call).await?;
        let status = sent.response.status();
        if !status.is_success() {
            return Err(error_from_response(sent).await);
        }
        read_limited(sent, ERROR_BODY_LIMIT)
            .await
            .map_err(|e| e.with_status(status))?;
        Ok(status)
    }
}

/// Waits as a 409 response asks before the request is sent again: its `Retry-After` (else 1 s; at
/// least 100 ms), at most until `ready_by`.
///
/// # Errors
/// The response's error when it is not `not_ready` (another conflict); a `TIMEOUT` when `ready_by`
/// has passed.
async fn wait_until_ready(sent: Sent, ready_by: Instant) -> Result<(), ClientError> {
    let delay = retry_after(sent.response.headers(), OffsetDateTime::now_utc())
        .unwrap_or(NOT_READY_DELAY)
        .max(MIN_NOT_READY_DELAY);
    let error = error_from_response(sent).await;
    if !error.is_not_ready() {
        return Err(error);
    }
    let now = Instant::now();
    if now >= ready_by {
        return Err(ClientError::timeout(
            "the resource's query was still running when the wait for it ended",
        ));
    }
    let delay = delay.min(ready_by - now);
    tracing::debug!(
        delay_ms = delay.as_millis(),
        "the resource is not ready yet; asking again"
    );
    sleep(delay).await;
    Ok(())
}

/// Decodes `body` as `T`. The message gives the position, not the content (which may be row data);
/// the serde error with its details is the source.
pub(crate) fn decode_json<T: DeserializeOwned>(body: &[u8], what: &str) -> Result<T, ClientError> {
    decode_json_with(body, || what.to_owned())
}

/// [`decode_json`] naming the body only when it fails: `what` runs on the error path alone, so a
/// caller decoding many small bodies (the lines of an export) formats nothing per body.
pub(crate) fn decode_json_with<T: DeserializeOwned>(
    body: &[u8],
    what: impl FnOnce() -> String,
) -> Result<T, ClientError> {
    serde_json::from_slice(body).map_err(|e| {
        let what = what();
        let kind = match e.classify() {
            serde_json::error::Category::Eof => "truncated JSON",
            serde_json::error::Category::Syntax | serde_json::error::Category::Io => "invalid JSON",
            serde_json::error::Category::Data => "JSON of the wrong shape",
        };
        ClientError::fetch(format!(
            "{what}: the response body is {kind} (line {}, column {})",
            e.line(),
            e.column()
        ))
        .with_source(e)
    })
}

/// Reads the whole body, at most `limit` bytes, by the response's deadline.
pub(crate) async fn read_limited(sent: Sent, limit: usize) -> Result<Bytes, ClientError> {
    let body = Limited::new(sent.response.into_body(), limit);
    match timeout_at(sent.deadline, body.collect()).await {
        Err(_) => Err(ClientError::timeout("timed out reading the response body")),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) if error.downcast_ref::<LengthLimitError>().is_some() => Err(ClientError::fetch(
            format!("the response body is larger than {limit} bytes"),
        )),
        Ok(Err(error)) => {
            Err(ClientError::fetch("the response body was cut off or unreadable").with_source(error))
        }
    }
}

/// Turns a non-success response into the error it stands for, reading the server's error body.
pub(crate) async fn error_from_response(sent: Sent) -> ClientError {
    let status = sent.response.status();
    let body = read_limited(sent, ERROR_BODY_LIMIT)
        .await
        .ok()
        .and_then(|bytes| serde_json::from_slice::<dual_core::error::ErrorBody>(&bytes).ok());
    tracing::debug!(%status, code = body.as_ref().map(|b| b.error.as_str()), "error response");
    ClientError::from_status(status, body)
}

/// Whether a rustls error (a failed handshake, an untrusted certificate) is in `error`'s source chain.
fn is_tls_failure(error: &(dyn StdError + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        if error.downcast_ref::<rustls::Error>().is_some() {
            return true;
        }
        // `io::Error::source` skips the wrapped error itself (which may be another `io::Error`), so
        // step into it directly.
        current = match error.downcast_ref::<std::io::Error>() {
            Some(io) => io.get_ref().map(|inner| inner as &(dyn StdError + 'static)),
            None => error.source(),
        };
    }
    false
}
