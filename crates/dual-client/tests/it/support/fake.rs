//! A small in-test server that speaks the REST contract (docs/DESIGN.md §5) over real loopback sockets.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use dual_core::{
    Column, DualResponse, PageRequest, PageResponse, ResourceId, Row, Sort, SortOrder,
    column::infer_columns,
    error::{ErrorBody, ErrorCode},
    metadata::{PinResponse, ResourceMetadata},
    page::{PageLimits, parse_sort_param, validate_sort},
    status::ResourceStatus,
};
use dual_testkit::client::Fixture;
use futures_util::{StreamExt, stream};
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

type Body = BoxBody<Bytes, Infallible>;

/// How the fake behaves.
#[derive(Debug, Clone)]
pub(crate) struct FakeConfig {
    /// Serve `GET /{id}/data`; without it the server answers 404 there, like the reference server.
    pub(crate) export: bool,
    /// Bytes per body frame of the export (small values split rows across frames).
    pub(crate) chunk_bytes: usize,
    /// The page limit maximum.
    pub(crate) max_limit: u64,
    /// The sample size of created resources.
    pub(crate) sample_size: usize,
    /// How long every `/data` response waits before its body, so that requests overlap.
    pub(crate) data_delay: Option<std::time::Duration>,
    /// A dishonest server: the range starting at this offset is one row short.
    pub(crate) short_range_at: Option<u64>,
    /// The first range request starting at this offset gets 503 `storage_error` with `Retry-After: 1`.
    pub(crate) fail_once_at: Option<u64>,
    /// Pages are cut to whole rows within this many bytes, as dual-server's `max_page_bytes` does.
    pub(crate) page_bytes: Option<usize>,
}

impl FakeConfig {
    /// The defaults, with export body frames of `bytes` bytes.
    pub(crate) fn with_chunk_bytes(bytes: usize) -> Self {
        Self {
            chunk_bytes: bytes,
            ..Self::default()
        }
    }

    /// The defaults, without the `/data` export (like the reference server).
    pub(crate) fn without_export() -> Self {
        Self {
            export: false,
            ..Self::default()
        }
    }
}

impl Default for FakeConfig {
    fn default() -> Self {
        Self {
            export: true,
            chunk_bytes: 7,
            max_limit: 10_000,
            sample_size: 5,
            data_delay: None,
            short_range_at: None,
            fail_once_at: None,
            page_bytes: None,
        }
    }
}

struct Resource {
    name: String,
    rows: Vec<Row>,
    columns: Vec<Column>,
    created_at: OffsetDateTime,
    expires_at: Option<OffsetDateTime>,
    access_count: u64,
    last_accessed_at: Option<OffsetDateTime>,
}

#[derive(Default)]
struct State {
    resources: HashMap<String, Resource>,
    log: Vec<String>,
    failed_once: bool,
}

/// Counts `/data` responses in flight (from the request until the body is dropped) and their maximum.
#[derive(Debug, Default)]
struct InFlight {
    now: AtomicUsize,
    max: AtomicUsize,
}

/// One `/data` response in flight; dropped with its body.
struct Flight(Arc<InFlight>);

impl Flight {
    fn start(counters: &Arc<InFlight>) -> Self {
        let now = counters.now.fetch_add(1, AtomicOrdering::SeqCst) + 1;
        counters.max.fetch_max(now, AtomicOrdering::SeqCst);
        Self(Arc::clone(counters))
    }
}

impl Drop for Flight {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, AtomicOrdering::SeqCst);
    }
}

/// A running fake server; dropped, it stops accepting.
pub(crate) struct FakeServer {
    /// `http://127.0.0.1:{port}/resources`.
    pub(crate) base_url: String,
    config: FakeConfig,
    state: Arc<Mutex<State>>,
    connections: Arc<AtomicUsize>,
    in_flight: Arc<InFlight>,
    task: JoinHandle<()>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A panicking test thread may poison it; the data is still fine for the other requests.
    state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `n` rows of 4 columns; `id` is distinct and ascending, `score` distinct and shuffled.
pub(crate) fn rows(n: usize) -> Vec<Row> {
    (0..n)
        .filter_map(|i| {
            json!({
                "id": i,
                "name": format!("Institution \"{i}\"\nwith ünïcödé"),
                "score": (i * 7919) % 10_007,
                "public": i.is_multiple_of(2),
            })
            .as_object()
            .cloned()
        })
        .collect()
}

impl FakeServer {
    pub(crate) async fn start(config: FakeConfig) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        let cfg = config.clone();
        let connections = Arc::new(AtomicUsize::new(0));
        let accepted = Arc::clone(&connections);
        let in_flight = Arc::new(InFlight::default());
        let counters = Arc::clone(&in_flight);
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                accepted.fetch_add(1, AtomicOrdering::SeqCst);
                let state = Arc::clone(&shared);
                let cfg = cfg.clone();
                let counters = Arc::clone(&counters);
                tokio::spawn(async move {
                    let service = service_fn(move |req| {
                        let state = Arc::clone(&state);
                        let cfg = cfg.clone();
                        let counters = Arc::clone(&counters);
                        async move { Ok::<_, Infallible>(handle(req, &state, &cfg, &counters).await) }
                    });
                    drop(
                        http1::Builder::new()
                            .serve_connection(TokioIo::new(socket), service)
                            .await,
                    );
                });
            }
        });
        Self {
            base_url: format!("http://{addr}/resources"),
            config,
            state,
            connections,
            in_flight,
            task,
        }
    }

    /// Creates a resource holding `rows` and returns its MCP tool result (built by dual-core).
    pub(crate) fn create(&self, name: &str, rows: Vec<Row>) -> (ResourceId, Value) {
        let id = ResourceId::new();
        let now = OffsetDateTime::now_utc();
        let columns = infer_columns(&rows);
        let response = DualResponse {
            id,
            uri: format!("resource://{id}"),
            url: format!("{}/{id}", self.base_url),
            name: name.to_owned(),
            sample: rows.iter().take(self.config.sample_size).cloned().collect(),
            total_count: rows.len() as u64,
            columns: columns.clone(),
            executed_at: now,
            expires_at: Some(now + Duration::minutes(15)),
            status: ResourceStatus::Ready,
            profile: dual_core::mcp::ResponseProfile::None,
        };
        lock(&self.state).resources.insert(
            id.to_string(),
            Resource {
                name: name.to_owned(),
                rows,
                columns,
                created_at: now,
                expires_at: response.expires_at,
                access_count: 0,
                last_accessed_at: None,
            },
        );
        let tool_result = serde_json::to_value(response.tool_result()).expect("tool result serialises");
        (id, tool_result)
    }

    /// A suite fixture: a new resource of `n` rows.
    pub(crate) fn fixture(&self, n: usize) -> Fixture {
        let rows = rows(n);
        let (_, tool_result) = self.create("Fixture", rows.clone());
        Fixture {
            tool_result,
            rows,
            sort_field: "score".to_owned(),
        }
    }

    /// Moves a resource's expiry into the past.
    pub(crate) fn expire(&self, id: ResourceId) {
        if let Some(resource) = lock(&self.state).resources.get_mut(&id.to_string()) {
            resource.expires_at = Some(OffsetDateTime::now_utc() - Duration::seconds(1));
        }
    }

    /// Connections accepted so far.
    pub(crate) fn connections(&self) -> usize {
        self.connections.load(AtomicOrdering::SeqCst)
    }

    /// The most `/data` responses that were in flight at once.
    pub(crate) fn max_in_flight(&self) -> usize {
        self.in_flight.max.load(AtomicOrdering::SeqCst)
    }

    /// Every request so far, as `METHOD /path?query`.
    pub(crate) fn log(&self) -> Vec<String> {
        lock(&self.state).log.clone()
    }
}

async fn handle(
    req: Request<Incoming>,
    state: &Mutex<State>,
    config: &FakeConfig,
    counters: &Arc<InFlight>,
) -> Response<Body> {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().map(str::to_owned);
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    lock(state).log.push(match &query {
        Some(q) => format!("{method} {path}?{q}"),
        None => format!("{method} {path}"),
    });
    let body = match req.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return error(ErrorCode::InvalidRequest, "unreadable body"),
    };
    let Some(rest) = path.strip_prefix("/resources/") else {
        return error(ErrorCode::NotFound, dual_core::error::NOT_FOUND_MESSAGE);
    };
    let (id, export) = match rest.strip_suffix("/data") {
        Some(id) => (id, true),
        None => (rest, false),
    };
    if export && !config.export {
        return error(ErrorCode::NotFound, dual_core::error::NOT_FOUND_MESSAGE);
    }
    let flight = export.then(|| Flight::start(counters));
    if let Some(delay) = config.data_delay.filter(|_| export) {
        tokio::time::sleep(delay).await;
    }
    let mut guard = lock(state);
    let now = OffsetDateTime::now_utc();
    let Some(resource) = guard.resources.get_mut(id) else {
        return error(ErrorCode::NotFound, dual_core::error::NOT_FOUND_MESSAGE);
    };
    if resource.expires_at.is_some_and(|at| at <= now) {
        return error(ErrorCode::Expired, "Resource expired");
    }
    resource.access_count += 1;
    resource.last_accessed_at = Some(now);
    match (method, export) {
        (Method::GET, true) => {
            let params = match DataParams::parse(query.as_deref(), &resource.columns) {
                Ok(params) => params,
                Err(message) => return error(ErrorCode::InvalidRequest, message),
            };
            let total = resource.rows.len() as u64;
            let offset = params.offset.unwrap_or(0);
            if offset > total {
                return error(
                    ErrorCode::InvalidRequest,
                    format!("`offset` {offset} is past the end ({total} rows)"),
                );
            }
            let rows = sorted(&resource.rows, params.sort.as_ref());
            if params.offset.is_some() && config.fail_once_at == Some(offset) && !guard.failed_once {
                guard.failed_once = true;
                let mut response = error(ErrorCode::StorageError, "storage briefly unavailable");
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
                return response;
            }
            drop(guard);
            let start = usize::try_from(offset).unwrap_or(usize::MAX);
            let mut end = params
                .limit
                .map_or(rows.len(), |l| {
                    start.saturating_add(usize::try_from(l).unwrap_or(usize::MAX))
                })
                .min(rows.len());
            if params.offset.is_some() && config.short_range_at == Some(offset) && end > start {
                end -= 1;
            }
            if accept.contains("application/x-ndjson") {
                ndjson(&rows[start..end], config.chunk_bytes, flight)
            } else {
                json_response(StatusCode::OK, &&rows[start..end])
            }
        }
        (Method::GET, false) => {
            let metadata = ResourceMetadata {
                id: id.parse().unwrap_or_default(),
                name: resource.name.clone(),
                status: ResourceStatus::Ready,
                total_count: resource.rows.len() as u64,
                columns: resource.columns.clone(),
                created_at: resource.created_at,
                expires_at: resource.expires_at,
                access_count: resource.access_count,
                last_accessed_at: resource.last_accessed_at,
                metadata: Value::Null,
                consistency: dual_core::consistency::Consistency::Snapshot,
                progress: None,
                spooled_rows: None,
                error: None,
            };
            json_response(StatusCode::OK, &metadata)
        }
        (Method::POST, false) => {
            let limits = PageLimits {
                default_limit: 100,
                max_limit: config.max_limit,
            };
            let page = match PageRequest::from_json(&body).and_then(|r| r.validate(limits, &resource.columns))
            {
                Ok(page) => page,
                Err(e) => return error(ErrorCode::InvalidRequest, e.to_string()),
            };
            let rows = sorted(&resource.rows, page.sort.as_ref());
            let start = usize::try_from(page.offset).unwrap_or(usize::MAX).min(rows.len());
            let end = start
                .saturating_add(usize::try_from(page.fetch_limit()).unwrap_or(usize::MAX))
                .min(rows.len());
            let total = resource.rows.len() as u64;
            let response = match config.page_bytes {
                None => PageResponse::from_rows(rows[start..end].to_vec(), &page, total),
                Some(cap) => {
                    let mut budget = dual_core::budget::RowBudget::for_page(&page, cap);
                    let data: Vec<Row> = rows[start..end]
                        .iter()
                        .take_while(|row| budget.admit(serde_json::to_vec(row).map_or(0, |v| v.len())))
                        .cloned()
                        .collect();
                    PageResponse {
                        data,
                        ..budget.paginate(&page, total)
                    }
                }
            };
            json_response(StatusCode::OK, &response)
        }
        (Method::PUT, false) => {
            resource.expires_at = None;
            json_response(StatusCode::OK, &PinResponse::pinned())
        }
        (Method::DELETE, false) => {
            guard.resources.remove(id);
            let mut response = Response::new(Full::new(Bytes::new()).boxed());
            *response.status_mut() = StatusCode::NO_CONTENT;
            response
        }
        _ => error(ErrorCode::MethodNotAllowed, "method not allowed"),
    }
}

/// The query of `GET /{id}/data`: `offset`, `limit` (at least 1), `sort=field:order`; nothing else.
struct DataParams {
    offset: Option<u64>,
    limit: Option<u64>,
    sort: Option<Sort>,
}

impl DataParams {
    fn parse(query: Option<&str>, columns: &[Column]) -> Result<Self, String> {
        let mut params = Self {
            offset: None,
            limit: None,
            sort: None,
        };
        for pair in query.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let number = || {
                value
                    .parse::<u64>()
                    .map_err(|_| format!("`{name}` must be a non-negative integer"))
            };
            match name {
                "offset" => params.offset = Some(number()?),
                "limit" => match number()? {
                    0 => return Err("`limit` must be at least 1".to_owned()),
                    limit => params.limit = Some(limit),
                },
                "sort" => {
                    let text = value.replace("%20", " ");
                    let sort = parse_sort_param(&text)
                        .and_then(|s| validate_sort(&s, columns))
                        .map_err(|e| e.to_string())?;
                    params.sort = Some(sort);
                }
                other => return Err(format!("unknown parameter `{other}`")),
            }
        }
        Ok(params)
    }
}

fn sorted(rows: &[Row], sort: Option<&Sort>) -> Vec<Row> {
    let mut rows = rows.to_vec();
    if let Some(sort) = sort {
        rows.sort_by(|a, b| {
            let ordering = match (a.get(&sort.field), b.get(&sort.field)) {
                (Some(Value::Number(x)), Some(Value::Number(y))) => {
                    x.as_f64().partial_cmp(&y.as_f64()).unwrap_or(Ordering::Equal)
                }
                (x, y) => x.map(Value::to_string).cmp(&y.map(Value::to_string)),
            };
            if sort.order == SortOrder::Desc {
                ordering.reverse()
            } else {
                ordering
            }
        });
    }
    rows
}

fn ndjson(rows: &[Row], chunk_bytes: usize, flight: Option<Flight>) -> Response<Body> {
    let mut bytes = Vec::new();
    for row in rows {
        bytes.extend(serde_json::to_vec(row).unwrap_or_default());
        bytes.push(b'\n');
    }
    let chunks: Vec<Result<Frame<Bytes>, Infallible>> = bytes
        .chunks(chunk_bytes.max(1))
        .map(|c| Ok(Frame::data(Bytes::copy_from_slice(c))))
        .collect();
    // The body owns the in-flight mark. It ends when the body has no more data, before the end of the
    // body is written (so before the client can start another request), or when the body is dropped.
    let mut flight = flight;
    let frames = stream::iter(chunks).chain(stream::poll_fn(move |_| {
        drop(flight.take());
        std::task::Poll::Ready(None)
    }));
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(frames)));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/x-ndjson"),
    );
    response
}

fn json_response(status: StatusCode, value: &impl serde::Serialize) -> Response<Body> {
    let mut response =
        Response::new(Full::new(Bytes::from(serde_json::to_vec(value).unwrap_or_default())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

fn error(code: ErrorCode, message: impl Into<String>) -> Response<Body> {
    let status = StatusCode::from_u16(code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(status, &ErrorBody::new(code, message))
}
