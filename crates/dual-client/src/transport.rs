//! Sending one request: default headers, per-attempt deadline, retries, bounded body reads.

use std::error::Error as StdError;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use serde::de::DeserializeOwned;
use tokio::time::{Instant, sleep, timeout_at};

use crate::client::DualResponseClient;
use crate::error::ClientError;
use crate::retry::is_retryable_status;

/// How much of an error body is read to find the server's `{"error", "message"}`.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

pub(crate) const JSON: &str = "application/json";
pub(crate) const NDJSON: &str = "application/x-ndjson";

/// One request to make.
#[derive(Debug, Clone)]
pub(crate) struct Call<'a> {
    pub(crate) method: Method,
    pub(crate) url: &'a str,
    pub(crate) accept: &'static str,
    pub(crate) json_body: Option<Bytes>,
}

impl<'a> Call<'a> {
    pub(crate) fn new(method: Method, url: &'a str) -> Self {
        Self {
            method,
            url,
            accept: JSON,
            json_body: None,
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
    /// Sends `call`, retrying connect errors, 429, 503 and 409 with `Retry-After` (`not_ready`: the result
    /// is still being computed) as the retry policy allows.
    ///
    /// Returns the final response whatever its status; the caller decides what a status means. Each
    /// attempt has its own deadline of `timeout`, and the returned deadline bounds reading the body.
    pub(crate) async fn send(&self, call: &Call<'_>) -> Result<Sent, ClientError> {
        let shared = self.shared();
        let uri: Uri = call
            .url
            .parse()
            .map_err(|e| ClientError::parse(format!("invalid resource URL: {e}")))?;
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
                    let retryable = is_retryable_status(status)
                        || (status == StatusCode::CONFLICT
                            && response.headers().contains_key(header::RETRY_AFTER));
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
        let sent = self.send(call).await?;
        let status = sent.response.status();
        if !status.is_success() {
            return Err(error_from_response(sent).await);
        }
        let body = read_limited(sent, self.shared().max_body_bytes)
            .await
            .map_err(|e| e.with_status(status))?;
        decode_json(&body, what).map_err(|e| e.with_status(status))
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

/// Decodes `body` as `T`. The message gives the position, not the content (which may be row data);
/// the serde error with its details is the source.
pub(crate) fn decode_json<T: DeserializeOwned>(body: &[u8], what: &str) -> Result<T, ClientError> {
    serde_json::from_slice(body).map_err(|e| {
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
        .and_then(|bytes| serde_json::from_slice::<dual_core::ErrorBody>(&bytes).ok());
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
