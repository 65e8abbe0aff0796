//! An rmcp streamable-HTTP client transport over hyper, so the demo needs no second HTTP stack.
//!
//! rmcp ships a reqwest-based client; this implements its [`StreamableHttpClient`] trait with
//! hyper-util's pooled client instead (the same stack dual-client and the server use). It follows
//! rmcp's own Unix-socket client: POST a JSON-RPC message and read a JSON or SSE answer, GET an SSE
//! stream, DELETE a session. Plain `http://` only: the demo talks to its own server.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::{StreamExt, TryStreamExt};
use http::{HeaderName, HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, BodyStream, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, ServerJsonRpcMessage};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};

/// Largest JSON answer read (16 MiB, as rmcp's own clients).
const MAX_JSON_BYTES: usize = 16 * 1024 * 1024;
/// Largest error body read (64 KiB).
const MAX_ERROR_BYTES: usize = 64 * 1024;

/// Connects an rmcp client (with no client-side handlers) to the streamable-HTTP endpoint `url`
/// (e.g. `http://127.0.0.1:8080/mcp`) and initializes the session.
///
/// # Errors
/// The initialization error (connection refused, not an MCP endpoint, …).
pub async fn connect(
    url: &str,
) -> Result<RunningService<RoleClient, ()>, rmcp::service::ClientInitializeError> {
    connect_with(url, None).await
}

/// [`connect`], sending `Authorization: Bearer TOKEN` with every request (for a server started with
/// `--auth-tokens`).
///
/// # Errors
/// The initialization error (connection refused, `401` for a wrong token, …).
pub async fn connect_with_token(
    url: &str,
    token: &str,
) -> Result<RunningService<RoleClient, ()>, rmcp::service::ClientInitializeError> {
    connect_with(url, Some(token)).await
}

async fn connect_with(
    url: &str,
    token: Option<&str>,
) -> Result<RunningService<RoleClient, ()>, rmcp::service::ClientInitializeError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::with_client(HyperMcpClient::new(), config);
    ().serve(transport).await
}

/// An HTTP/1.1 [`StreamableHttpClient`] over hyper-util's pooled client.
#[derive(Clone, Debug)]
pub struct HyperMcpClient {
    client: Client<HttpConnector, Full<Bytes>>,
}

impl Default for HyperMcpClient {
    fn default() -> Self {
        Self::new()
    }
}

impl HyperMcpClient {
    /// A client with a fresh connection pool.
    #[must_use]
    pub fn new() -> Self {
        Self {
            client: Client::builder(TokioExecutor::new()).build_http(),
        }
    }

    async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<http::Response<hyper::body::Incoming>, StreamableHttpError<ClientError>> {
        self.client
            .request(request)
            .await
            .map_err(|e| StreamableHttpError::Client(ClientError::Connect(e)))
    }
}

/// A transport-level failure of [`HyperMcpClient`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// Connecting or sending failed.
    #[error("HTTP request failed: {0}")]
    Connect(#[from] hyper_util::client::legacy::Error),
    /// The request could not be built (a malformed URL or header).
    #[error("invalid request: {0}")]
    Http(#[from] http::Error),
    /// Reading the response body failed or it was too large.
    #[error("reading the response body: {0}")]
    Body(String),
    /// The message could not be serialised.
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
}

fn request(
    method: Method,
    uri: &str,
    session_id: Option<&str>,
    auth: Option<String>,
    custom_headers: HashMap<HeaderName, HeaderValue>,
) -> http::request::Builder {
    let mut builder = Request::builder().method(method).uri(uri);
    if let Some(token) = auth {
        builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    if let Some(id) = session_id {
        builder = builder.header(HEADER_SESSION_ID, id);
    }
    for (name, value) in custom_headers {
        builder = builder.header(name, value);
    }
    builder
}

async fn read_body(
    response: http::Response<hyper::body::Incoming>,
    limit: usize,
) -> Result<Bytes, StreamableHttpError<ClientError>> {
    Limited::new(response.into_body(), limit)
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .map_err(|e| StreamableHttpError::Client(ClientError::Body(e.to_string())))
}

/// The body as SSE events, refusing any event larger than `max_event` bytes.
fn sse(
    response: http::Response<hyper::body::Incoming>,
    max_event: usize,
) -> BoxStream<'static, Result<Sse, SseError>> {
    let mut pending = 0usize;
    let bytes = BodyStream::new(response.into_body())
        .try_filter_map(|frame| std::future::ready(Ok(frame.into_data().ok())))
        .map(move |chunk: Result<Bytes, hyper::Error>| {
            let chunk = chunk.map_err(|e| std::io::Error::other(e.to_string()))?;
            // Bytes since the last blank line: a rough but safe bound on one event's size.
            match chunk.windows(2).rposition(|w| w == b"\n\n") {
                Some(end) => pending = chunk.len() - end - 2,
                None => pending += chunk.len(),
            }
            if pending > max_event {
                return Err(std::io::Error::other(format!(
                    "SSE event larger than {max_event} bytes"
                )));
            }
            Ok(chunk)
        });
    SseStream::from_bytes_stream(bytes).boxed()
}

fn content_type_is(response: &http::Response<hyper::body::Incoming>, mime: &str) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|ct| ct.as_bytes().starts_with(mime.as_bytes()))
}

fn is_notification_or_reply(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Notification(_)
            | ClientJsonRpcMessage::Response(_)
            | ClientJsonRpcMessage::Error(_)
    )
}

/// A server that predates `server/discover` rejects it with a 4xx; answer the client with a JSON-RPC
/// error so that it falls back to `initialize` (as rmcp's own clients do).
fn discover_fallback(
    message: &ClientJsonRpcMessage,
    status: StatusCode,
    body: &str,
) -> Option<StreamableHttpPostResponse> {
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    if !matches!(request.request, ClientRequest::DiscoverRequest(_))
        || !status.is_client_error()
        || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
    {
        return None;
    }
    let error = match serde_json::from_str::<ServerJsonRpcMessage>(body) {
        Ok(ServerJsonRpcMessage::Error(error)) => error.error,
        _ => ErrorData::invalid_request(format!("server/discover rejected with HTTP {status}"), None),
    };
    Some(StreamableHttpPostResponse::Json(
        ServerJsonRpcMessage::error(error, Some(request.id.clone())),
        None,
    ))
}

impl StreamableHttpClient for HyperMcpClient {
    type Error = ClientError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            MAX_JSON_BYTES,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let body = serde_json::to_vec(&message).map_err(|e| StreamableHttpError::Client(e.into()))?;
        let request = request(
            Method::POST,
            &uri,
            session_id.as_deref(),
            auth_header,
            custom_headers,
        )
        .header(header::CONTENT_TYPE, JSON_MIME_TYPE)
        .header(
            header::ACCEPT,
            format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
        )
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| StreamableHttpError::Client(e.into()))?;
        let response = self.send(request).await?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        if !status.is_success() {
            let body = read_body(response, MAX_ERROR_BYTES).await.unwrap_or_default();
            let body = String::from_utf8_lossy(&body);
            if let Some(fallback) = discover_fallback(&message, status, &body) {
                return Ok(fallback);
            }
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}: {body}"),
            )));
        }
        let new_session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if content_type_is(&response, EVENT_STREAM_MIME_TYPE) {
            return Ok(StreamableHttpPostResponse::Sse(
                sse(response, max_sse_event_size),
                new_session,
            ));
        }
        if content_type_is(&response, JSON_MIME_TYPE) {
            let body = read_body(response, MAX_JSON_BYTES).await?;
            return match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, new_session)),
                Err(_) if is_notification_or_reply(&message) => Ok(StreamableHttpPostResponse::Accepted),
                Err(e) => Err(StreamableHttpError::Deserialize(e)),
            };
        }
        if is_notification_or_reply(&message) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|ct| String::from_utf8_lossy(ct.as_bytes()).into_owned());
        Err(StreamableHttpError::UnexpectedContentType(content_type))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let request = request(
            Method::DELETE,
            &uri,
            Some(&session_id),
            auth_header,
            custom_headers,
        )
        .body(Full::new(Bytes::new()))
        .map_err(|e| StreamableHttpError::Client(e.into()))?;
        let status = self.send(request).await?.status();
        if status.is_success() || status == StatusCode::METHOD_NOT_ALLOWED {
            Ok(())
        } else {
            Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("delete_session returned {status}"),
            )))
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            MAX_JSON_BYTES,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let mut builder = request(
            Method::GET,
            &uri,
            session_id.as_deref(),
            auth_header,
            custom_headers,
        )
        .header(header::ACCEPT, EVENT_STREAM_MIME_TYPE);
        if let Some(id) = last_event_id {
            builder = builder.header(HEADER_LAST_EVENT_ID, id);
        }
        let request = builder
            .body(Full::new(Bytes::new()))
            .map_err(|e| StreamableHttpError::Client(e.into()))?;
        let response = self.send(request).await?;
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        if !status.is_success() {
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("GET returned {status}"),
            )));
        }
        if !content_type_is(&response, EVENT_STREAM_MIME_TYPE) {
            let content_type = response
                .headers()
                .get(header::CONTENT_TYPE)
                .map(|ct| String::from_utf8_lossy(ct.as_bytes()).into_owned());
            return Err(StreamableHttpError::UnexpectedContentType(content_type));
        }
        Ok(sse(response, max_sse_event_size))
    }
}
