//! The suite's context: its server, its targets, requests and replies.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use dual_core::{ResourceId, error::NOT_FOUND_MESSAGE};
use dual_server::{CreateResponse, DualResponseServer};
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::Value;

use super::Target;
use crate::BreakableStore;

use super::fixtures::{self, BearerIsOwner, STORE_SECRET};
use dual_http::{Cors, DualHttp, DualHttpBuilder};

/// Runs each check (`module::check(args)`) in turn, handing it its name (which its failure messages
/// carry), and records the name in `passed` once the check returns.
macro_rules! run_checks {
    ($passed:ident: $($name:literal => $module:ident::$check:ident($($arg:expr),*)),+ $(,)?) => {
        $(
            $module::$check($($arg,)* $name).await;
            $passed.push($name);
        )+
    };
}
pub(crate) use run_checks;

/// An origin the suite's CORS configuration allows.
pub(crate) const ALLOWED_ORIGIN: &str = "https://app.example.com";

pub(crate) struct Ctx<T> {
    pub(crate) mount: String,
    pub(crate) server: DualResponseServer,
    /// A server without snapshots on the same store and executor: it creates the resources whose
    /// executor is set to fail later (`fail_*` params), which only a live resource asks again. The
    /// targets serve them through `server` all the same, as live records.
    live: DualResponseServer,
    pub(crate) store: Arc<BreakableStore>,
    plain: T,
    cors: T,
}

impl<T: Target> Ctx<T> {
    pub(crate) fn new<F: Fn(DualHttpBuilder) -> T>(mount: &str, make: &F) -> Self {
        let store = Arc::new(BreakableStore::new(STORE_SECRET));
        let configure = || {
            DualResponseServer::builder()
                .base_url("http://127.0.0.1/resources")
                .shared_store(Arc::clone(&store) as Arc<dyn dual_server::dual_store::ResourceStore>)
                .shared_executor("rows", fixtures::executor())
                .without_sweeper()
        };
        let server = configure()
            .build()
            .unwrap_or_else(|e| panic!("the suite's server configuration is valid: {e}"));
        let live = configure()
            .without_snapshots()
            .build()
            .unwrap_or_else(|e| panic!("the suite's server configuration is valid: {e}"));
        let builder = || DualHttp::builder(server.clone()).authorize(BearerIsOwner);
        let cors = Cors::allow_origins([ALLOWED_ORIGIN])
            .expose_headers([header::RETRY_AFTER])
            .max_age(Duration::from_secs(600));
        Self {
            mount: mount.trim_end_matches('/').to_owned(),
            plain: make(builder()),
            cors: make(builder().cors(cors)),
            server,
            live,
            store,
        }
    }

    /// Creates a resource of `n` rows with extra executor params: a live one when a `fail_*` param
    /// sets the executor to fail after creation, a snapshot otherwise.
    pub(crate) async fn create_with(&self, params: Value, owner: Option<&str>) -> ResourceId {
        let mut request = CreateResponse::new("rows", params).name("Suite rows");
        if let Some(owner) = owner {
            request = request.owner(owner);
        }
        let fails_later = params_fail(&request);
        let server = if fails_later { &self.live } else { &self.server };
        match server.create_response(request).await {
            Ok(response) => response.id,
            Err(error) => panic!("the suite could not create a resource: {error}"),
        }
    }

    pub(crate) async fn create(&self, n: u64) -> ResourceId {
        self.create_with(serde_json::json!({ "n": n }), None).await
    }

    /// The stored access count, read without counting.
    pub(crate) async fn access_count(&self, id: ResourceId) -> u64 {
        // Straight from the store: the record may belong to an owner.
        match self.server.store().get(id, self.server.clock().now()).await {
            Ok(dual_store::Lookup::Found(record)) => record.access_count,
            Ok(other) => panic!("resource {id} should exist: {other:?}"),
            Err(error) => panic!("resource {id} should exist: {error}"),
        }
    }

    pub(crate) fn path(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.mount)
    }

    pub(crate) fn req(&self, method: Method, suffix: &str) -> Req<'_, T> {
        Req {
            ctx: self,
            method,
            uri: self.path(suffix),
            headers: HeaderMap::new(),
            body: Bytes::new(),
        }
    }

    pub(crate) fn get(&self, suffix: &str) -> Req<'_, T> {
        self.req(Method::GET, suffix)
    }

    pub(crate) fn post(&self, suffix: &str) -> Req<'_, T> {
        self.req(Method::POST, suffix)
    }

    pub(crate) fn head(&self, suffix: &str) -> Req<'_, T> {
        self.req(Method::HEAD, suffix)
    }

    /// `GET /{id}/data`, with `query` (if not empty) as its query string.
    pub(crate) fn data(&self, id: ResourceId, query: &str) -> Req<'_, T> {
        let suffix = if query.is_empty() {
            format!("/{id}/data")
        } else {
            format!("/{id}/data?{query}")
        };
        self.get(&suffix)
    }
}

/// A request under construction, sent through the context it was made from.
pub(crate) struct Req<'c, T> {
    ctx: &'c Ctx<T>,
    method: Method,
    uri: String,
    headers: HeaderMap,
    body: Bytes,
}

impl<T: Target> Req<'_, T> {
    pub(crate) fn header(mut self, name: HeaderName, value: &str) -> Self {
        match HeaderValue::from_str(value) {
            Ok(value) => {
                self.headers.append(name, value);
            }
            Err(_) => panic!("suite header value {value:?} is valid"),
        }
        self
    }

    /// The header when `value` is `Some`, nothing otherwise.
    pub(crate) fn header_opt(self, name: HeaderName, value: Option<&str>) -> Self {
        match value {
            Some(value) => self.header(name, value),
            None => self,
        }
    }

    pub(crate) fn accept(self, value: &str) -> Self {
        self.header(header::ACCEPT, value)
    }

    pub(crate) fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// A JSON body with `Content-Type: application/json`.
    pub(crate) fn json(self, body: &str) -> Self {
        self.header(header::CONTENT_TYPE, "application/json")
            .body(body.to_owned())
    }

    /// Sends the request to the target without CORS.
    pub(crate) async fn send(self) -> Reply {
        let target = &self.ctx.plain;
        Reply::read(target, self.build()).await
    }

    /// Sends the request to the target with the suite's CORS configuration.
    pub(crate) async fn send_cors(self) -> Reply {
        let target = &self.ctx.cors;
        Reply::read(target, self.build()).await
    }

    fn build(self) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(self.body));
        *request.method_mut() = self.method;
        *request.uri_mut() = match self.uri.parse() {
            Ok(uri) => uri,
            Err(_) => panic!("suite URI {:?} is valid", self.uri),
        };
        *request.headers_mut() = self.headers;
        request
    }
}

/// A response, its body read. An aborted body is kept as `body_error`.
#[derive(Debug)]
pub struct Reply {
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The body bytes (empty when the body failed).
    pub body: Bytes,
    /// The body's error, when the transfer was aborted.
    pub body_error: Option<String>,
}

impl Reply {
    async fn read<T: Target>(target: &T, request: Request<Full<Bytes>>) -> Self {
        let response = target.send(request).await;
        let (parts, body) = response.into_parts();
        let (body, body_error) = match body.collect().await {
            Ok(collected) => (collected.to_bytes(), None),
            Err(error) => (Bytes::new(), Some(error.to_string())),
        };
        Self {
            status: parts.status,
            headers: parts.headers,
            body,
            body_error,
        }
    }

    /// A header as text (`""` when absent).
    #[must_use]
    pub fn header(&self, name: HeaderName) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    /// Every value of a header, joined by `", "`.
    #[must_use]
    pub fn header_all(&self, name: HeaderName) -> String {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The body as JSON.
    ///
    /// # Panics
    /// When it is not JSON.
    #[must_use]
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The NDJSON lines of the body as JSON values (`null` for a line that is not JSON).
    #[must_use]
    pub(crate) fn ndjson(&self) -> Vec<Value> {
        String::from_utf8_lossy(&self.body)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or(Value::Null))
            .collect()
    }

    /// Asserts a 400 `invalid_request` (for `case` of `check`) whose message names `field`.
    #[track_caller]
    pub(crate) fn expect_invalid(&self, check: &str, case: &str, field: &str) {
        let message = self.error(&format!("{check} {case}"), 400, "invalid_request");
        assert!(
            message.contains(field),
            "[{check}] {case}: {message:?} should name {field}"
        );
    }

    /// Asserts the status is `status`, showing the body otherwise.
    #[track_caller]
    pub(crate) fn expect_status(&self, check: &str, status: u16) {
        assert_eq!(
            self.status.as_u16(),
            status,
            "[{check}] expected {status}, got {}: {}",
            self.status,
            String::from_utf8_lossy(&self.body)
        );
    }

    /// Asserts a `status` answer without a body (`HEAD`, `204`), its transfer not aborted.
    #[track_caller]
    pub(crate) fn expect_no_body(&self, check: &str, status: u16) {
        self.expect_status(check, status);
        assert!(
            self.body.is_empty() && self.body_error.is_none(),
            "[{check}] no body: {:?} {:?}",
            self.body,
            self.body_error
        );
    }

    /// Asserts a 200 answer whose body arrived whole.
    #[track_caller]
    pub(crate) fn expect_complete(&self, check: &str) {
        self.expect_status(check, 200);
        assert!(
            self.body_error.is_none(),
            "[{check}] body aborted: {:?}",
            self.body_error
        );
    }

    /// Asserts the header `name` is `expected`.
    #[track_caller]
    pub(crate) fn expect_header(&self, check: &str, name: HeaderName, expected: &str) {
        assert_eq!(self.header(name.clone()), expected, "[{check}] {name}");
    }

    /// Asserts the header `name` is absent.
    #[track_caller]
    pub(crate) fn expect_no_header(&self, check: &str, name: HeaderName) {
        assert!(
            self.headers.get(&name).is_none(),
            "[{check}] no {name}: {:?}",
            self.headers
        );
    }

    /// Asserts `Vary` lists `value` (lowercase).
    #[track_caller]
    pub(crate) fn expect_vary(&self, check: &str, value: &str) {
        let vary = self.header_all(header::VARY).to_ascii_lowercase();
        assert!(vary.contains(value), "[{check}] Vary: {value} (got {vary:?})");
    }

    /// Asserts a 200 JSON answer (for `check`) and returns the body.
    pub(crate) fn ok_json(&self, check: &str) -> Value {
        self.expect_status(check, 200);
        self.expect_header(check, header::CONTENT_TYPE, "application/json");
        self.expect_header(check, header::CACHE_CONTROL, "no-store");
        self.json()
    }

    /// Asserts an error answer of docs/DESIGN.md §5's shape with `status` and `code`; returns the message.
    pub(crate) fn error(&self, check: &str, status: u16, code: &str) -> String {
        self.expect_status(&format!("{check} {code}"), status);
        self.expect_header(check, header::CONTENT_TYPE, "application/json");
        let body = self.json();
        let object = body.as_object().map(|o| {
            let mut keys: Vec<&str> = o.keys().map(String::as_str).collect();
            keys.sort_unstable();
            keys
        });
        assert_eq!(
            object,
            Some(vec!["error", "message", "retryable"]),
            "[{check}] error body {body}"
        );
        assert_eq!(body["error"], code, "[{check}] code");
        assert_eq!(
            body["retryable"],
            status == 503 || status == 409,
            "[{check}] retryable"
        );
        let message = body["message"].as_str().unwrap_or_default().to_owned();
        assert!(!message.is_empty(), "[{check}] message is empty");
        if code == "not_found" {
            assert_eq!(message, NOT_FOUND_MESSAGE, "[{check}] not_found message");
        }
        message
    }
}

/// Every method of every route of resource `id`, as `(method, suffix)`.
pub(crate) fn every_route(id: dual_core::ResourceId) -> [(Method, String); 5] {
    let item = format!("/{id}");
    [
        (Method::GET, item.clone()),
        (Method::POST, item.clone()),
        (Method::PUT, item.clone()),
        (Method::DELETE, item),
        (Method::GET, format!("/{id}/data")),
    ]
}

fn params_fail(request: &CreateResponse) -> bool {
    request
        .query()
        .params
        .as_object()
        .is_some_and(|params| params.keys().any(|key| key.starts_with("fail_")))
}
