//! Plain HTTP/1.1 requests to a demo server on 127.0.0.1, and the whole reply they got.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tokio::time::timeout;

/// Longest wait for one whole reply (a 25 MB export included).
const REPLY_WITHIN: Duration = Duration::from_secs(30);

/// A pooled (keep-alive) HTTP client of one server.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    client: Client<HttpConnector, Full<Bytes>>,
    addr: SocketAddr,
}

/// A whole reply.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Reply {
    /// The body as JSON (`null` when it is not JSON).
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The body as text (lossy).
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Asserts a retryable `503 overloaded` with `Retry-After`.
    pub(crate) fn assert_overloaded(&self, what: &str) {
        self.assert_retryable_503("overloaded", what);
    }

    /// Asserts a retryable 503 with `Retry-After` and the error code `error`.
    pub(crate) fn assert_retryable_503(&self, error: &str, what: &str) {
        assert_eq!(
            self.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{what}: {}",
            self.text()
        );
        assert!(
            self.headers.contains_key(header::RETRY_AFTER),
            "{what}: {:?}",
            self.headers
        );
        let body = self.json();
        assert_eq!(body["error"], error, "{what}: {body}");
        assert_eq!(body["retryable"], true, "{what}: {body}");
    }
}

impl Http {
    /// A client of the server at `addr`.
    pub(crate) fn new(addr: SocketAddr) -> Self {
        Self {
            client: Client::builder(TokioExecutor::new()).build_http(),
            addr,
        }
    }

    /// A request for `path` on the server, with `Authorization: Bearer TOKEN` when `token` is given.
    pub(crate) fn request(&self, method: Method, path: &str, token: Option<&str>) -> http::request::Builder {
        let mut builder = Request::builder()
            .method(method)
            .uri(format!("http://{}{path}", self.addr));
        if let Some(token) = token {
            builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        builder
    }

    /// Sends `request` with `body` and reads the whole reply; panics on a transport error or a hang.
    pub(crate) async fn send(&self, request: http::request::Builder, body: impl Into<Bytes>) -> Reply {
        let request = request.body(Full::new(body.into())).expect("a request");
        whole_reply(&self.client, request).await
    }

    /// `POST path` with a JSON body.
    pub(crate) async fn post_json(&self, path: &str, token: Option<&str>, body: &Value) -> Reply {
        let request = self
            .request(Method::POST, path, token)
            .header(header::CONTENT_TYPE, "application/json");
        self.send(request, body.to_string()).await
    }

    /// `POST /resources/{id}` with `body` and no token: a page of resource `id`.
    pub(crate) async fn page(&self, id: &str, body: &Value) -> Reply {
        self.post_json(&format!("/resources/{id}"), None, body).await
    }
}

/// Sends `request` on a fresh connection and reads the whole reply; panics on a transport error or
/// a hang.
pub(crate) async fn exchange(request: Request<Full<Bytes>>) -> Reply {
    whole_reply(&Client::builder(TokioExecutor::new()).build_http(), request).await
}

async fn whole_reply(client: &Client<HttpConnector, Full<Bytes>>, request: Request<Full<Bytes>>) -> Reply {
    let what = format!("{} {}", request.method(), request.uri());
    let reply = timeout(REPLY_WITHIN, async {
        let response = client.request(request).await.expect("a response");
        let (parts, body) = response.into_parts();
        let body = body.collect().await.expect("a whole body").to_bytes();
        Reply {
            status: parts.status,
            headers: parts.headers,
            body,
        }
    })
    .await;
    reply.unwrap_or_else(|_| panic!("{what}: no whole reply within {REPLY_WITHIN:?}"))
}
