//! `docs/openapi.yaml` describes exactly this API: every response of every endpoint, produced for real,
//! has a documented status, media type and required headers, and its body validates against the
//! documented schema; every documented response is produced.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use dual_http::{Cors, DualHttp};
use futures_util::StreamExt;
use http::{HeaderMap, Method, Request, header};
use http_body_util::{BodyExt, Full};
use hyper::service::Service;
use serde_json::{Value, json};

const SPEC: &str = include_str!("../../../docs/openapi.yaml");

struct Spec {
    doc: Value,
}

impl Spec {
    fn load() -> Self {
        let doc: Value = serde_norway::from_str(SPEC).expect("docs/openapi.yaml is YAML");
        Self { doc }
    }

    /// Follows a local `$ref` (`#/components/...`), once.
    fn resolve<'a>(&'a self, value: &'a Value) -> &'a Value {
        match value.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let pointer = reference.strip_prefix('#').expect("local reference");
                self.doc
                    .pointer(pointer)
                    .unwrap_or_else(|| panic!("dangling {reference}"))
            }
            None => value,
        }
    }

    /// Every documented `(path, method, status)`.
    fn documented(&self) -> BTreeSet<(String, String, u16)> {
        let mut out = BTreeSet::new();
        for (path, item) in self.doc["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("path item") {
                let Some(responses) = operation.get("responses").and_then(Value::as_object) else {
                    continue;
                };
                for status in responses.keys() {
                    out.insert((
                        path.clone(),
                        method.clone(),
                        status.parse().expect("numeric status"),
                    ));
                }
            }
        }
        out
    }

    fn response(&self, path: &str, method: &str, status: u16) -> &Value {
        let operation = &self.doc["paths"][path][method];
        assert!(operation.is_object(), "{method} {path} is not documented");
        let response = &operation["responses"][status.to_string()];
        assert!(
            response.is_object(),
            "{method} {path} → {status} is not documented"
        );
        self.resolve(response)
    }

    /// A validator for `schema`, with the document's components in scope for its `$ref`s.
    fn validator(&self, schema: &Value) -> jsonschema::Validator {
        let mut root = schema.clone();
        root["components"] = self.doc["components"].clone();
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&root)
            .unwrap_or_else(|e| panic!("schema {schema} does not compile: {e}"))
    }

    fn validate(&self, schema: &Value, instance: &Value, what: &str) {
        let validator = self.validator(schema);
        let errors: Vec<String> = validator.iter_errors(instance).map(|e| e.to_string()).collect();
        let shown: String = instance.to_string().chars().take(400).collect();
        assert!(errors.is_empty(), "{what}: {errors:?}\ninstance: {shown}");
    }
}

struct Fixture {
    plain: DualHttp,
    cors: DualHttp,
    impatient: DualHttp,
    /// A handler over a server with snapshots (so with column profiles) and a refine engine, on the
    /// same store.
    snapshots: DualHttp,
    /// As `snapshots`, but anonymous callers hold their one resource already.
    quota: DualHttp,
    store: Arc<common::FlakyStore>,
    server: dual_server::DualResponseServer,
}

struct Case {
    /// The path template of the spec.
    template: &'static str,
    method: Method,
    uri: String,
    headers: Vec<(header::HeaderName, &'static str)>,
    body: &'static str,
    cors: bool,
    broken_store: bool,
    /// Sends `body` and then nothing, to a handler with a 1 ms body timeout.
    stalled_body: bool,
    /// Sent to the handler of the server with snapshots.
    snapshots: bool,
    /// Sent to the handler whose owners are at their resource quota.
    quota: bool,
}

fn case(template: &'static str, method: Method, uri: String) -> Case {
    Case {
        template,
        method,
        uri,
        headers: Vec::new(),
        body: "",
        cors: false,
        broken_store: false,
        stalled_body: false,
        snapshots: false,
        quota: false,
    }
}

impl Case {
    fn header(mut self, name: header::HeaderName, value: &'static str) -> Self {
        self.headers.push((name, value));
        self
    }

    fn body(mut self, body: &'static str) -> Self {
        self.body = body;
        self
    }

    fn json(self, body: &'static str) -> Self {
        self.header(header::CONTENT_TYPE, "application/json").body(body)
    }

    fn cors(mut self) -> Self {
        self.cors = true;
        self
    }

    /// A CORS preflight from the allowed origin, asking for `method`.
    fn preflight(self, method: &'static str) -> Self {
        self.header(header::ORIGIN, "https://app.example.com")
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, method)
            .cors()
    }

    fn broken_store(mut self) -> Self {
        self.broken_store = true;
        self
    }

    fn stalled_body(mut self) -> Self {
        self.stalled_body = true;
        self
    }

    fn snapshots(mut self) -> Self {
        self.snapshots = true;
        self
    }

    fn quota(mut self) -> Self {
        self.quota = true;
        self
    }
}

/// Sends the case and checks the response against the spec; returns the `(path, method, status)`.
async fn check(spec: &Spec, fixture: &Fixture, case: Case) -> (String, String, u16) {
    let bytes = Bytes::from_static(case.body.as_bytes());
    let body = if case.stalled_body {
        let stalled = futures_util::stream::iter([Ok(http_body::Frame::data(bytes))])
            .chain(futures_util::stream::pending());
        BodyExt::boxed(http_body_util::StreamBody::new(stalled))
    } else {
        BodyExt::boxed(Full::new(bytes))
    };
    let mut request = Request::new(body);
    *request.method_mut() = case.method.clone();
    *request.uri_mut() = case.uri.parse().expect("uri");
    for (name, value) in &case.headers {
        request
            .headers_mut()
            .append(name.clone(), value.parse().expect("header value"));
    }
    fixture.store.set_broken(case.broken_store);
    let handler = if case.cors {
        &fixture.cors
    } else if case.stalled_body {
        &fixture.impatient
    } else if case.snapshots {
        &fixture.snapshots
    } else if case.quota {
        &fixture.quota
    } else {
        &fixture.plain
    };
    let response = handler.call(request).await.expect("infallible");
    fixture.store.set_broken(false);
    let (parts, body) = response.into_parts();
    let body = decode(
        &parts.headers,
        body.collect().await.expect("complete body").to_bytes(),
    );
    let method = case.method.as_str().to_ascii_lowercase();
    let status = parts.status.as_u16();
    let what = format!("{} {} → {status}", case.method, case.uri);
    let documented = spec.response(case.template, &method, status);

    for (name, header_spec) in documented
        .get("headers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let header_spec = spec.resolve(header_spec);
        let value = parts.headers.get(name.as_str()).and_then(|v| v.to_str().ok());
        if header_spec["required"] == true {
            let value = value.unwrap_or_else(|| panic!("{what}: required header {name} missing"));
            spec.validate(
                &header_spec["schema"],
                &json!(value),
                &format!("{what} header {name}"),
            );
        }
    }
    check_body(spec, documented, &parts.headers, &body, &what);
    (case.template.to_owned(), method, status)
}

/// The body without its `Content-Encoding`.
fn decode(headers: &HeaderMap, body: Bytes) -> Bytes {
    match headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
    {
        None => body,
        Some("gzip") => {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&body[..]), &mut out)
                .expect("gzip body");
            Bytes::from(out)
        }
        Some("zstd") => Bytes::from(zstd::stream::decode_all(&body[..]).expect("zstd body")),
        Some(other) => panic!("unexpected Content-Encoding {other}"),
    }
}

fn check_body(spec: &Spec, documented: &Value, headers: &HeaderMap, body: &Bytes, what: &str) {
    if body.is_empty() {
        return;
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("{what}: a body without Content-Type"));
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    let media = &documented["content"][essence];
    assert!(
        media.is_object(),
        "{what}: media type {essence} is not documented"
    );
    if essence == "application/vnd.apache.arrow.stream" {
        check_arrow(body, what);
        return;
    }
    if essence == "application/vnd.apache.parquet" {
        check_parquet(body, what);
        return;
    }
    let text = std::str::from_utf8(body).expect("UTF-8 body");
    match essence {
        "application/json" => {
            let value: Value = serde_json::from_str(text).expect("JSON body");
            spec.validate(&media["schema"], &value, what);
        }
        "application/x-ndjson" => {
            let validator = spec.validator(&media["x-item-schema"]);
            for line in text.lines() {
                let value: Value = serde_json::from_str(line).expect("JSON line");
                assert!(validator.is_valid(&value), "{what}: line {line}");
            }
        }
        "text/html" => {
            assert!(
                text.contains(dual_view::REST_TRANSPORT_MARKER),
                "{what}: the REST view"
            );
        }
        "text/csv" => {
            assert!(
                text.lines().next().is_some_and(|h| h.starts_with("id,")),
                "{what}: header row"
            );
            assert!(content_type.contains("header=present"), "{what}");
        }
        other => panic!("{what}: unexpected media type {other}"),
    }
}

/// An Arrow IPC stream with every row.
#[cfg(feature = "arrow")]
fn check_arrow(body: &Bytes, what: &str) {
    let reader = arrow_ipc::reader::StreamReader::try_new(&body[..], None)
        .unwrap_or_else(|e| panic!("{what}: not an Arrow stream: {e}"));
    let rows: usize = reader
        .map(|batch| batch.map(|b| b.num_rows()).expect("a well-formed batch"))
        .sum();
    assert_eq!(rows, 250, "{what}");
}

#[cfg(not(feature = "arrow"))]
fn check_arrow(_: &Bytes, what: &str) {
    panic!("{what}: an Arrow export from a handler built without feature `arrow`");
}

/// A Parquet file with every row.
#[cfg(feature = "parquet")]
fn check_parquet(body: &Bytes, what: &str) {
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(body.clone())
        .unwrap_or_else(|e| panic!("{what}: not a Parquet file: {e}"));
    let rows: usize = builder
        .build()
        .expect("a reader")
        .map(|batch| batch.map(|b| b.num_rows()).expect("a well-formed batch"))
        .sum();
    assert_eq!(rows, 250, "{what}");
}

#[cfg(not(feature = "parquet"))]
fn check_parquet(_: &Bytes, what: &str) {
    panic!("{what}: a Parquet export from a handler built without feature `parquet`");
}

/// Polls `id`'s column profile on `server` (every 10 ms, at most 5 s) until `done` holds.
async fn profile_when(
    server: &dual_server::DualResponseServer,
    id: dual_core::ResourceId,
    done: impl Fn(&dual_core::profile::Profile) -> bool,
    what: &str,
) {
    for _ in 0..500 {
        match server.profile(id, &dual_server::Caller::anonymous()).await {
            Ok(profile) if done(&profile) => return,
            _ => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
    panic!("{what}: not within 5 s");
}

#[tokio::test]
async fn every_response_matches_the_spec_and_every_documented_response_occurs() {
    let spec = Spec::load();
    assert_eq!(spec.doc["openapi"].as_str().map(|v| &v[..4]), Some("3.1."));
    let store = Arc::new(common::flaky_store());
    // Live, so that pages and exports of `failing` reach the executor (500 query_failed); one pin
    // per owner, so that a second anonymous pin is 429 quota_exceeded.
    let server = dual_server::DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .shared_store(Arc::clone(&store) as Arc<dyn dual_server::dual_store::ResourceStore>)
        .executor("numbers", common::numbers())
        .without_sweeper()
        .without_snapshots()
        .owner_max_pins(1)
        .build()
        .expect("valid configuration");
    // With snapshots, on the same store: the column profile of `profiled`, and of `spooling` the rows
    // so far (its executor counts, so the tool call answers at once, then yields 10-row steps, the
    // last two opened 50 ms apart, and stops until the gate opens again: never); refinements of
    // `profiled` by the test's engine.
    let gated = Arc::new(common::numbers().steps([10, 10, 10, 220]).counted());
    let snapshot_server = dual_server::DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .shared_store(Arc::clone(&store) as Arc<dyn dual_server::dual_store::ResourceStore>)
        .executor("numbers", common::numbers())
        .shared_executor("gated", Arc::clone(&gated) as Arc<dyn dual_server::QueryExecutor>)
        .refine_engine(common::refine::PassThrough)
        .without_sweeper()
        .build()
        .expect("valid configuration");
    // Anonymous callers may hold one resource on this one, and will: a refinement is 429.
    let quota_server = dual_server::DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .shared_store(Arc::clone(&store) as Arc<dyn dual_server::dual_store::ResourceStore>)
        .executor("numbers", common::numbers())
        .refine_engine(common::refine::PassThrough)
        .owner_max_resources(1)
        .without_sweeper()
        .build()
        .expect("valid configuration");
    let fixture = Fixture {
        plain: DualHttp::new(server.clone()),
        cors: DualHttp::builder(server.clone()).cors(Cors::any()).build(),
        impatient: DualHttp::builder(server.clone())
            .body_timeout(std::time::Duration::from_millis(1))
            .build(),
        snapshots: DualHttp::new(snapshot_server.clone()),
        quota: DualHttp::new(quota_server.clone()),
        store,
        server: server.clone(),
    };
    let id = common::create(&server, json!({"n": 250, "fail_fetch_over": 1000})).await;
    let failing = common::create(
        &server,
        json!({"n": 50, "fail_stream_at": 0, "fail_fetch_over": 20}),
    )
    .await;
    let expired = common::expired_copy(&server, id).await;
    let pending = common::copy_with_status(&server, id, dual_core::status::ResourceStatus::Pending).await;
    let failed = common::copy_with_status(&server, id, dual_core::status::ResourceStatus::Failed).await;
    let unknown = dual_core::ResourceId::new();
    let item = |id: dual_core::ResourceId| format!("/{id}");
    let data = |id: dual_core::ResourceId| format!("/{id}/data");
    let view = |id: dual_core::ResourceId| format!("/{id}/view");
    let other = common::create(&server, json!({"n": 5})).await;
    let read_link = server
        .view_link(id, &dual_server::Caller::anonymous())
        .await
        .expect("a read link");
    let read_link = &read_link.url[read_link.url.find("expires=").expect("expires")..];
    let big: &'static str = Box::leak(format!("{{{}}}", " ".repeat(70_000)).into_boxed_str());
    let profiled = common::create(&snapshot_server, json!({"n": 250})).await;
    profile_when(&snapshot_server, profiled, |p| p.complete, "the complete profile").await;
    let spooling = snapshot_server
        .create_response(dual_server::CreateResponse::new("gated", json!({})).sample_size(5))
        .await
        .expect("created")
        .id;
    gated.open_later(Duration::from_millis(50), 2);
    profile_when(
        &snapshot_server,
        spooling,
        |p| !p.complete && p.rows > 0,
        "the profile of the rows so far",
    )
    .await;
    let snapshot_expired = common::expired_copy(&snapshot_server, profiled).await;
    let snapshot_pending = common::copy_with_status(
        &snapshot_server,
        profiled,
        dual_core::status::ResourceStatus::Pending,
    )
    .await;
    let snapshot_failed = common::copy_with_status(
        &snapshot_server,
        profiled,
        dual_core::status::ResourceStatus::Failed,
    )
    .await;
    let profile_link = snapshot_server
        .view_link(profiled, &dual_server::Caller::anonymous())
        .await
        .expect("a read link");
    let profile_link = &profile_link.url[profile_link.url.find("expires=").expect("expires")..];
    let profile = |id: dual_core::ResourceId| format!("/{id}/profile");
    let query = |id: dual_core::ResourceId| format!("/{id}/query");
    common::create(&quota_server, json!({"n": 1})).await;

    let cases = vec![
        case("/{id}", Method::GET, item(id)),
        case("/{id}", Method::GET, format!("{}?x=1", item(id))),
        case("/{id}", Method::GET, item(unknown)),
        case("/{id}", Method::GET, item(expired)),
        case("/{id}", Method::GET, "/not-an-id".to_owned()),
        case("/{id}", Method::GET, item(id)).broken_store(),
        case("/{id}", Method::HEAD, item(id)),
        case("/{id}", Method::HEAD, format!("{}?x=1", item(id))),
        case("/{id}", Method::HEAD, item(unknown)),
        case("/{id}", Method::HEAD, item(id)).broken_store(),
        case("/{id}", Method::POST, item(id)),
        case("/{id}", Method::POST, item(id))
            .json(r#"{"offset": 200, "limit": 100, "sort": {"field": "id", "order": "desc"}}"#),
        case("/{id}", Method::POST, item(id)).json(r#"{"limit": 0}"#),
        case("/{id}", Method::POST, item(unknown)),
        case("/{id}", Method::POST, item(id)).json(big),
        case("/{id}", Method::POST, item(id))
            .header(header::CONTENT_TYPE, "text/plain")
            .body("{}"),
        case("/{id}", Method::POST, item(id))
            .json("{\"offset\":")
            .stalled_body(),
        case("/{id}", Method::POST, item(failing)),
        case("/{id}", Method::GET, item(pending)),
        case("/{id}", Method::GET, item(failed)),
        case("/{id}", Method::POST, item(pending)),
        case("/{id}", Method::POST, item(failed)),
        case("/{id}/data", Method::GET, data(pending)),
        case("/{id}/data", Method::GET, data(failed)),
        case("/{id}/data", Method::HEAD, data(pending)),
        case("/{id}", Method::POST, item(id)).broken_store(),
        case("/{id}", Method::PUT, item(id)),
        case("/{id}", Method::PUT, item(failing)),
        case("/{id}", Method::PUT, format!("{}?x", item(id))),
        case("/{id}", Method::PUT, item(unknown)),
        case("/{id}", Method::PUT, item(id)).broken_store(),
        case("/{id}", Method::DELETE, format!("{}?x", item(id))),
        case("/{id}", Method::DELETE, item(unknown)),
        case("/{id}", Method::DELETE, item(id)).broken_store(),
        case("/{id}", Method::OPTIONS, item(id)).preflight("POST"),
        case("/{id}", Method::OPTIONS, item(id)),
        case("/{id}/data", Method::GET, data(id)),
        case("/{id}/data", Method::GET, data(id)).header(header::ACCEPT, "application/x-ndjson"),
        case("/{id}/data", Method::GET, format!("{}?sort=id:desc", data(id)))
            .header(header::ACCEPT, "text/csv"),
        case("/{id}/data", Method::GET, format!("{}?sort=id:up", data(id))),
        case(
            "/{id}/data",
            Method::GET,
            format!("{}?sort=id:desc&offset=100&limit=50", data(id)),
        )
        .header(header::ACCEPT_ENCODING, "gzip"),
        case("/{id}/data", Method::GET, format!("{}?offset=10", data(id)))
            .header(header::ACCEPT, "application/x-ndjson")
            .header(header::ACCEPT_ENCODING, "zstd"),
        case("/{id}/data", Method::GET, format!("{}?offset=251", data(id))),
        case("/{id}/data", Method::GET, data(id)).header(header::ACCEPT, "image/png"),
        case("/{id}/data", Method::HEAD, data(id)).header(header::ACCEPT, "image/png"),
        case("/{id}/data", Method::HEAD, format!("{}?limit=0", data(id))),
        case("/{id}/data", Method::GET, data(unknown)),
        case("/{id}/data", Method::GET, data(failing)),
        case("/{id}/data", Method::GET, data(id)).broken_store(),
        case("/{id}/data", Method::HEAD, data(id)),
        case("/{id}/data", Method::HEAD, format!("{}?sort=", data(id))),
        case("/{id}/data", Method::HEAD, data(unknown)),
        // HEAD runs no export: a query that would fail is a 200; a failed resource is the 500.
        case("/{id}/data", Method::HEAD, data(failing)),
        case("/{id}/data", Method::HEAD, data(failed)),
        case("/{id}/data", Method::HEAD, data(id)).broken_store(),
        case("/{id}/data", Method::OPTIONS, data(id)).preflight("GET"),
        case("/{id}/data", Method::OPTIONS, data(id)),
        // 200 with feature `arrow`, else 406: documented either way.
        case("/{id}/data", Method::GET, data(id))
            .header(header::ACCEPT, "application/vnd.apache.arrow.stream")
            .header(header::ACCEPT_ENCODING, "zstd"),
        // 200 with feature `parquet` (never content-encoded), else 406.
        case("/{id}/data", Method::GET, data(id))
            .header(header::ACCEPT, "application/vnd.apache.parquet")
            .header(header::ACCEPT_ENCODING, "zstd"),
        case("/{id}/data", Method::GET, format!("{}?format=csv", data(id)))
            .header(header::ACCEPT, "application/json"),
        case(
            "/{id}/data",
            Method::HEAD,
            format!("{}?format=ndjson&limit=3", data(id)),
        ),
        case("/{id}/data", Method::GET, format!("{}?format=xml", data(id))),
        case(
            "/{id}/data",
            Method::GET,
            format!("{}?format=csv&{read_link}", data(id)),
        ),
        case(
            "/{id}/data",
            Method::GET,
            format!("{}?format=csv&{read_link}", data(other)),
        ),
        case("/{id}", Method::GET, format!("{}?{read_link}", item(id))),
        case("/{id}", Method::POST, format!("{}?{read_link}", item(id))),
        case("/{id}/view", Method::GET, view(id)),
        case("/{id}/view", Method::GET, format!("{}?{read_link}", view(id))),
        case("/{id}/view", Method::GET, format!("{}?x=1", view(id))),
        case("/{id}/view", Method::GET, view(unknown)),
        case("/{id}/view", Method::GET, view(id)).broken_store(),
        case("/{id}/view", Method::HEAD, view(id)),
        case("/{id}/view", Method::HEAD, format!("{}?x=1", view(id))),
        case("/{id}/view", Method::HEAD, view(unknown)),
        case("/{id}/view", Method::HEAD, view(id)).broken_store(),
        case("/{id}/view", Method::OPTIONS, view(id)).preflight("GET"),
        case("/{id}/view", Method::OPTIONS, view(id)),
        case("/{id}/profile", Method::GET, profile(profiled)).snapshots(),
        // The rows so far (`"complete": false`), while the snapshot is written.
        case("/{id}/profile", Method::GET, profile(spooling)).snapshots(),
        case(
            "/{id}/profile",
            Method::GET,
            format!("{}?{profile_link}", profile(profiled)),
        )
        .snapshots(),
        case(
            "/{id}/profile",
            Method::GET,
            format!("{}?offset=3", profile(profiled)),
        )
        .snapshots(),
        case("/{id}/profile", Method::GET, profile(unknown)).snapshots(),
        case("/{id}/profile", Method::GET, profile(snapshot_expired)).snapshots(),
        // A live result: 404 `no_profile`.
        case("/{id}/profile", Method::GET, profile(id)).snapshots(),
        case("/{id}/profile", Method::GET, profile(snapshot_pending)).snapshots(),
        case("/{id}/profile", Method::GET, profile(snapshot_failed)).snapshots(),
        case("/{id}/profile", Method::GET, profile(profiled))
            .snapshots()
            .broken_store(),
        case("/{id}/profile", Method::HEAD, profile(profiled)).snapshots(),
        case(
            "/{id}/profile",
            Method::HEAD,
            format!("{}?x=1", profile(profiled)),
        )
        .snapshots(),
        case("/{id}/profile", Method::HEAD, profile(unknown)).snapshots(),
        case("/{id}/profile", Method::HEAD, profile(snapshot_pending)).snapshots(),
        case("/{id}/profile", Method::HEAD, profile(snapshot_failed)).snapshots(),
        case("/{id}/profile", Method::HEAD, profile(profiled))
            .snapshots()
            .broken_store(),
        case("/{id}/profile", Method::OPTIONS, profile(profiled)).preflight("GET"),
        case("/{id}/profile", Method::OPTIONS, profile(profiled)),
        case("/{id}/query", Method::POST, query(profiled))
            .json(r#"{"sql": "SELECT * FROM result"}"#)
            .snapshots(),
        // Still running after the server's wait (2 s): 201 with `"status": "pending"`.
        case("/{id}/query", Method::POST, query(profiled))
            .json(r#"{"sql": "SELECT * FROM result -- FOREVER"}"#)
            .snapshots(),
        // The engine refuses the SQL, or fails running it: its message, 400.
        case("/{id}/query", Method::POST, query(profiled))
            .json(r#"{"sql": "DELETE FROM result"}"#)
            .snapshots(),
        case("/{id}/query", Method::POST, query(profiled))
            .json(r#"{"sql": "SELECT FAIL FROM result"}"#)
            .snapshots(),
        case("/{id}/query", Method::POST, query(profiled))
            .json(r#"{"sql": "SELECT * FROM result", "limit": 5}"#)
            .snapshots(),
        case("/{id}/query", Method::POST, query(profiled)).snapshots(),
        case("/{id}/query", Method::POST, format!("{}?x=1", query(profiled)))
            .json(r#"{"sql": "SELECT * FROM result"}"#)
            .snapshots(),
        case("/{id}/query", Method::POST, query(unknown))
            .json(r#"{"sql": "SELECT * FROM result"}"#)
            .snapshots(),
        case("/{id}/query", Method::POST, query(snapshot_expired))
            .json(r#"{"sql": "SELECT * FROM result"}"#)
            .snapshots(),
        case("/{id}/query", Method::POST, query(profiled))
            .json("{\"sql\":")
            .stalled_body(),
        // Pending: 409 `not_ready`; live, or a server without an engine: 409 `not_refinable`.
        case("/{id}/query", Method::POST, query(snapshot_pending))
            .json(r#"{"sql": "SELECT * FROM result"}"#)
            .snapshots(),
        case("/{id}/query", Method::POST, query(id))
            .json(r#"{"sql": "SELECT * FROM result"}"#)
            .snapshots(),
        case("/{id}/query", Method::POST, query(profiled)).json(r#"{"sql": "SELECT * FROM result"}"#),
        case("/{id}/query", Method::POST, query(profiled))
            .json(big)
            .snapshots(),
        case("/{id}/query", Method::POST, query(profiled))
            .header(header::CONTENT_TYPE, "text/plain")
            .body(r#"{"sql": "SELECT * FROM result"}"#)
            .snapshots(),
        case("/{id}/query", Method::POST, query(profiled))
            .json(r#"{"sql": "SELECT * FROM result"}"#)
            .quota(),
        case("/{id}/query", Method::POST, query(snapshot_failed))
            .json(r#"{"sql": "SELECT * FROM result"}"#)
            .snapshots(),
        case("/{id}/query", Method::POST, query(profiled))
            .json(r#"{"sql": "SELECT * FROM result"}"#)
            .snapshots()
            .broken_store(),
        case("/{id}/query", Method::OPTIONS, query(profiled)).preflight("POST"),
        case("/{id}/query", Method::OPTIONS, query(profiled)),
        // Last: deleting the resource the cases above read.
        case("/{id}", Method::DELETE, item(id)),
    ];
    let mut produced = BTreeSet::new();
    for case in cases {
        produced.insert(check(&spec, &fixture, case).await);
    }
    let documented = spec.documented();
    let missing: Vec<_> = documented.difference(&produced).collect();
    assert!(missing.is_empty(), "documented but never produced: {missing:?}");
    assert!(produced.is_subset(&documented));
    drop(fixture.server);
    drop(snapshot_server);
    drop(quota_server);
}

#[test]
fn error_codes_and_page_request_schema_agree_with_the_implementation() {
    let spec = Spec::load();
    let codes: BTreeSet<&str> = spec.doc["components"]["schemas"]["ErrorCode"]["enum"]
        .as_array()
        .expect("enum")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    use dual_core::error::ErrorCode as C;
    let implemented: BTreeSet<&str> = [
        C::InvalidRequest,
        C::NotFound,
        C::Expired,
        C::MethodNotAllowed,
        C::NotAcceptable,
        C::RequestTimeout,
        C::PayloadTooLarge,
        C::UnsupportedMediaType,
        C::NotReady,
        C::QueryFailed,
        C::StorageError,
        C::Overloaded,
        C::QuotaExceeded,
        C::NoProfile,
        C::NotRefinable,
    ]
    .iter()
    .map(|c| c.as_str())
    .collect();
    assert_eq!(codes, implemented);

    // The schema accepts what the server accepts and rejects what it rejects (with default limits).
    let schema = json!({"$ref": "#/components/schemas/PageRequest"});
    let validator = spec.validator(&schema);
    let limits = dual_core::page::PageLimits::default();
    let columns = [dual_core::Column::new(
        "enrollment",
        dual_core::ColumnType::Integer,
    )];
    for body in [
        json!({}),
        json!({"offset": 0, "limit": 100, "sort": {"field": "enrollment", "order": "desc"}}),
        json!({"offset": null, "limit": null, "sort": null}),
        json!({"limit": 10000}),
        json!({"sort": {"field": "enrollment"}}),
        json!({"limit": 0}),
        json!({"limit": 10001}),
        json!({"offset": -1}),
        json!({"offset": 1.5}),
        json!({"offset": "1"}),
        json!({"page": 1}),
        json!({"sort": {"field": "enrollment", "order": "up"}}),
        json!({"sort": {"field": ""}}),
        json!({"sort": {"field": "enrollment", "x": 1}}),
        json!([]),
    ] {
        let server_accepts = dual_core::PageRequest::from_value(&body)
            .and_then(|r| r.validate(limits, &columns))
            .is_ok();
        assert_eq!(validator.is_valid(&body), server_accepts, "{body}");
    }
}

#[tokio::test]
async fn the_refine_request_schema_agrees_with_the_implementation() {
    let spec = Spec::load();
    let validator = spec.validator(&json!({"$ref": "#/components/schemas/RefineRequest"}));
    // A server without a refine engine reads the body first: one it accepts is then 409
    // `not_refinable`, one it refuses 400 `invalid_request`.
    let handler = DualHttp::new(common::server());
    let uri = format!("/{}/query", dual_core::ResourceId::new());
    for body in [
        json!({"sql": "SELECT * FROM result"}),
        json!({"sql": ""}),
        json!({}),
        json!({"sql": 1}),
        json!({"sql": null}),
        json!({"sql": ["SELECT 1"]}),
        json!({"sql": "SELECT 1", "y": 1}),
        json!({"SQL": "SELECT 1"}),
        json!(["SELECT 1"]),
        json!("SELECT 1"),
        json!(null),
    ] {
        let mut request = Request::new(BodyExt::boxed(Full::new(Bytes::from(body.to_string()))));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = uri.parse().expect("uri");
        request.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        let response = handler.call(request).await.expect("infallible");
        let accepted = match response.status().as_u16() {
            409 => true,
            400 => false,
            other => panic!("{body}: {other}"),
        };
        assert_eq!(validator.is_valid(&body), accepted, "{body}");
    }
}
