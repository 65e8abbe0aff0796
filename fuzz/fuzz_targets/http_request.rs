//! dual-http's request parsing, through the public handler (`DualHttp::handle`, no sockets): a request
//! built from the fuzz input against an in-memory server holding two resources. Whatever the request,
//! the answer is a well-formed response: never a 5xx, a body that reads to its end, no body for `HEAD`
//! or 204, and for a 4xx the JSON `{"error", "message", "retryable"}` of docs/DESIGN.md §5.
//!
//! Input: the request as text, like HTTP/1.1 without the version: `METHOD TARGET`, header lines
//! `name: value` (say `accept`, `accept-encoding`, `content-type`, `content-length`, `origin`), an
//! empty line, the body. In the target, `{a}` and `{b}` stand for the ids of the live resources (25
//! rows, and none); the handler is mounted at `/resources` with CORS for `https://app.example.com`.
//!
//! The runtime, server and handler are built once and reused; a live resource that a `DELETE` removed
//! is created again, so every input meets the same two resources.

#![no_main]

use std::sync::{Arc, LazyLock, Mutex};

use bytes::Bytes;
use dual_core::{ResourceId, Row, SortOrder};
use dual_http::{Cors, DualHttp};
use dual_server::{
    CreateResponse, DEFAULT_STREAM_BATCH, DualResponseServer, ExecutorError, LiveQuery, QueryExecutor, QueryStart,
    RowStream, RowWindow, paged_stream,
};
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

/// `n` rows (`params.n`) with an integer, a string, a number and a sometimes-null column.
#[derive(Debug)]
struct Numbers;

fn row(i: u64) -> Row {
    let value = json!({
        "id": i,
        "name": format!("row {:03}", (i * 7) % 31),
        "score": i as f64 / 4.0,
        "note": if i % 3 == 0 { Value::Null } else { Value::String(format!("n{i}")) },
    });
    match value {
        Value::Object(map) => map,
        _ => Row::new(),
    }
}

impl QueryExecutor for Numbers {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        start.started();
        paged_stream(self, params, DEFAULT_STREAM_BATCH)
    }

    fn live(&self) -> Option<&dyn LiveQuery> {
        Some(self)
    }
}

#[async_trait::async_trait]
impl LiveQuery for Numbers {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        params["n"]
            .as_u64()
            .ok_or_else(|| ExecutorError::new("`n` must be an integer"))
    }

    async fn fetch(&self, params: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let RowWindow { offset, limit, sort, .. } = window;
        let n = self.count(params).await?;
        let mut rows: Vec<Row> = (0..n).map(row).collect();
        if let Some(sort) = sort {
            let key = |row: &Row| row.get(&sort.field).map(Value::to_string).unwrap_or_default();
            rows.sort_by_key(key);
            if sort.order == SortOrder::Desc {
                rows.reverse();
            }
        }
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        Ok(rows.into_iter().skip(offset).take(limit).collect())
    }
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    handler: DualHttp,
    /// The live resources: 25 rows and none.
    ids: Mutex<[ResourceId; 2]>,
}

const SIZES: [u64; 2] = [25, 0];

async fn create(server: &DualResponseServer, n: u64) -> ResourceId {
    server
        .create_response(CreateResponse::new("numbers", json!({ "n": n })))
        .await
        .expect("the fixture's resources are created")
        .id
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    let (handler, ids) = runtime.block_on(async {
        let server = DualResponseServer::builder()
            .base_url("https://api.example.com/resources")
            .executor("numbers", Numbers)
            .default_page_limit(10)
            .max_page_limit(50)
            .without_sweeper()
            .build()
            .expect("the fixture's server builds");
        let ids = [create(&server, SIZES[0]).await, create(&server, SIZES[1]).await];
        let handler = DualHttp::builder(server)
            .prefix("/resources")
            .body_limit(4096)
            .cors(Cors::allow_origins(["https://app.example.com"]))
            .build();
        (handler, ids)
    });
    Fixture {
        runtime,
        handler,
        ids: Mutex::new(ids),
    }
});

fuzz_target!(|data: &[u8]| {
    let fixture = &*FIXTURE;
    let mut ids = fixture
        .ids
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some((request, live)) = build(data, &ids) else {
        return;
    };
    let is_head = request.method() == http::Method::HEAD;
    let is_delete = request.method() == http::Method::DELETE;
    fixture.runtime.block_on(async {
        let response = fixture.handler.handle(request).await;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .into_body()
            .collect()
            .await
            .unwrap_or_else(|e| panic!("the body of a {status} reads to its end: {e}"))
            .to_bytes();
        assert!(!status.is_server_error(), "{status}: {body:?}");
        if status.is_client_error() && !is_head {
            check_error(status, &headers, &body);
        }
        if status == http::StatusCode::NO_CONTENT || is_head {
            assert!(body.is_empty(), "{status} with a body");
        }
        // A DELETE took a live resource away: create it again for the next input.
        if is_delete && status == http::StatusCode::NO_CONTENT {
            for (index, named) in live.into_iter().enumerate() {
                if named {
                    ids[index] = create(fixture.handler.server(), SIZES[index]).await;
                }
            }
        }
    });
});

/// The request the input describes and which live resources its target names, or `None` when `http`
/// refuses its parts (a method, URI or header no client could send).
fn build(data: &[u8], ids: &[ResourceId; 2]) -> Option<(http::Request<Full<Bytes>>, [bool; 2])> {
    let split = data.windows(2).position(|w| w == b"\n\n");
    let (head, body) = match split {
        Some(at) => (&data[..at], &data[at + 2..]),
        None => (data, &[][..]),
    };
    let mut lines = head.split(|b| *b == b'\n');
    let first = lines.next()?;
    let space = first.iter().position(|b| *b == b' ')?;
    let method = http::Method::from_bytes(&first[..space]).ok()?;
    let target = std::str::from_utf8(&first[space + 1..]).ok()?;
    let live = [target.contains("{a}"), target.contains("{b}")];
    let target = target
        .replace("{a}", &ids[0].to_string())
        .replace("{b}", &ids[1].to_string());
    let mut builder = http::Request::builder().method(method).uri(target);
    for line in lines {
        let colon = line.iter().position(|b| *b == b':')?;
        let value = line[colon + 1..].strip_prefix(b" ").unwrap_or(&line[colon + 1..]);
        builder = builder.header(
            http::HeaderName::from_bytes(&line[..colon]).ok()?,
            http::HeaderValue::from_bytes(value).ok()?,
        );
    }
    let request = builder.body(Full::new(Bytes::copy_from_slice(body))).ok()?;
    Some((request, live))
}

/// A 4xx is docs/DESIGN.md §5's JSON error.
fn check_error(status: http::StatusCode, headers: &http::HeaderMap, body: &[u8]) {
    let content_type = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    assert_eq!(
        content_type,
        Some("application/json"),
        "content type of a {status}"
    );
    let error: Value = serde_json::from_slice(body).unwrap_or_else(|e| {
        panic!(
            "a {status} body is JSON ({e}): {:?}",
            String::from_utf8_lossy(body)
        )
    });
    assert!(error["error"].is_string(), "{status}: {error}");
    assert!(error["message"].is_string(), "{status}: {error}");
    assert!(error["retryable"].is_boolean(), "{status}: {error}");
}
