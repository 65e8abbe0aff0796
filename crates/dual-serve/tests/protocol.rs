//! The MCP surface per protocol version, over real sockets with raw JSON-RPC (no SDK smoothing
//! anything over), of `DatabaseMcp` served by dual-serve on a small SQLite database: results of
//! every version from 2024-11-05 to 2026-07-28 validate against that version's published schema, a
//! 2025-03-26 session works end to end, the text is lean, and malformed requests get the JSON-RPC
//! answers.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::{DEGREES, INSTITUTIONS, Served, within};
use dual_testkit::mcp_schema::{VERSIONS, assert_valid, validator};
use dual_testkit::raw_mcp::{PER_REQUEST_VERSION, RawMcp, exchange, messages};
use http::{Method, Request, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(90);
/// The reference implementation's text blocks for a 10-row sample of a 7-column table, in bytes.
const REFERENCE_TEXT_BYTES: usize = 2_531;
/// Every row of the 7-column table.
const DEGREES_SQL: &str = "SELECT * FROM degrees_awarded ORDER BY id";
/// The institutions in NJ: 14 rows, more than a sample of 10.
const NJ_SQL: &str = "SELECT id, name FROM institutions WHERE state = 'NJ' ORDER BY id";

/// Runs `test` within [`LIMIT`] against a server of 10-row samples.
async fn with_server(test: impl AsyncFnOnce(&Served)) {
    Served::run(LIMIT, |o| o.sample_size = 10, test).await;
}

/// A session of `version` with `server`, not opened (no handshake), checking that no answer holds
/// rmcp's priming event.
fn new_session(server: &Served, version: &'static str) -> RawMcp {
    RawMcp::new(server.mcp_url(), version).no_priming()
}

/// A session of `version` with `server` after its `initialize` handshake, and the response to
/// `initialize`.
async fn open_session(server: &Served, version: &'static str) -> (RawMcp, Value) {
    let mut session = new_session(server, version);
    let initialize = session.handshake().await;
    (session, initialize)
}

/// A session of `version`: opened with the handshake before 2026-07-28, per request from then on.
async fn session_of(server: &Served, version: &'static str) -> RawMcp {
    if version >= PER_REQUEST_VERSION {
        new_session(server, version)
    } else {
        open_session(server, version).await.0
    }
}

/// The texts of a result's content blocks.
fn texts(result: &Value) -> Vec<String> {
    dual_testkit::raw_mcp::block_fields(result, "text")
}

/// The `resources/read` URI the summary tells the model to use.
fn read_more_uri(summary: &str) -> String {
    let (_, rest) = summary
        .split_once("resources/read on ")
        .expect("the summary says how to read more");
    rest.split_whitespace().next().expect("a URI").to_owned()
}

/// Runs the results a tool server sends through `session` and validates each against the
/// session version's published schema: `tools/list`, `resources/templates/list`, two `query` calls
/// with the `resources/read` their summaries point to, a `describe_schema` call, and a tool error.
/// From 2025-06-18 on the successful queries must carry the `resource_link` and `structuredContent`
/// being validated.
async fn validate_results(session: &mut RawMcp) {
    let version = session.version();
    let tools = session.result("tools/list", json!({})).await;
    assert_valid(version, "ListToolsResult", &tools);
    let templates = session.result("resources/templates/list", json!({})).await;
    assert_valid(version, "ListResourceTemplatesResult", &templates);
    let mut reads = 0;
    let mut last_uri = String::new();
    for sql in [DEGREES_SQL, NJ_SQL] {
        let result = session.call("query", json!({"sql": sql})).await;
        assert_valid(version, "CallToolResult", &result);
        assert_ne!(result["isError"], true, "{version} {sql}: {result}");
        if version >= "2025-06-18" {
            let link = result["content"]
                .as_array()
                .and_then(|blocks| blocks.iter().find(|b| b["type"] == "resource_link"));
            assert!(link.is_some(), "{version} {sql}: no resource_link in {result}");
            assert!(
                result["structuredContent"].is_object(),
                "{version} {sql}: {result}"
            );
        }
        let summary = texts(&result).into_iter().next().unwrap_or_default();
        if summary.contains("resources/read on ") {
            let uri = read_more_uri(&summary);
            let read = session.result("resources/read", json!({"uri": uri})).await;
            assert_valid(version, "ReadResourceResult", &read);
            if version >= PER_REQUEST_VERSION {
                // A snapshot expiring in minutes, created without an owner.
                let ttl = read["ttlMs"].as_u64().unwrap_or(0);
                assert!(ttl > 60_000 && ttl <= 15 * 60_000, "{version}: ttlMs {ttl}");
                assert_eq!(read["cacheScope"], "public", "{version}");
            }
            last_uri = uri;
            reads += 1;
        }
    }
    assert_eq!(reads, 2, "{version}: each summary points to more rows to read");
    let schema = session.call("describe_schema", json!({})).await;
    assert_valid(version, "CallToolResult", &schema);
    assert_ne!(schema["isError"], true, "{version}: {schema}");
    assert!(
        texts(&schema).concat().contains("degrees_awarded"),
        "{version}: {schema}"
    );
    validate_discovery(session, &last_uri).await;
    // A tool error is a valid result too.
    let error = session
        .result("tools/call", json!({"name": "query", "arguments": {"sql": 123}}))
        .await;
    assert_eq!(error["isError"], true, "{version}: {error}");
    assert_valid(version, "CallToolResult", &error);
}

/// `resources/list`, `prompts/list` and both `prompts/get` validate against the session version's
/// schema; the list holds the results just created, newest first; an unknown resource is
/// `-32002` before 2026-07-28 and `-32602` from it on.
async fn validate_discovery(session: &mut RawMcp, read_uri: &str) {
    let version = session.version();
    let listed = session.result("resources/list", json!({})).await;
    assert_valid(version, "ListResourcesResult", &listed);
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .map(|all| all.iter().filter_map(|r| r["uri"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(uris.len(), 2, "{version}: the two results created: {listed}");
    let base = read_uri.split('?').next().unwrap_or_default();
    assert_eq!(uris[0], base, "{version}: newest first");
    let prompts = session.result("prompts/list", json!({})).await;
    assert_valid(version, "ListPromptsResult", &prompts);
    for (name, arguments) in [
        ("explore_result", json!({"uri": base})),
        (
            "answer_from_data",
            json!({"question": "How many public colleges are in NJ?"}),
        ),
    ] {
        let prompt = session
            .result("prompts/get", json!({"name": name, "arguments": arguments}))
            .await;
        assert_valid(version, "GetPromptResult", &prompt);
    }
    if version < PER_REQUEST_VERSION {
        // Sessions subscribe with resources/subscribe; both answers are empty results.
        for method in ["resources/subscribe", "resources/unsubscribe"] {
            let acknowledged = session.result(method, json!({"uri": base})).await;
            assert_valid(version, "EmptyResult", &acknowledged);
        }
    }
    let unknown = "resource://01J00000000000000000000000";
    let missing = session.request("resources/read", json!({"uri": unknown})).await;
    let code = if version >= PER_REQUEST_VERSION {
        -32602
    } else {
        -32002
    };
    assert_eq!(missing["error"]["code"], code, "{version}: {missing}");
}

/// One version's results over a real session (an `initialize` handshake, or per-request `_meta`
/// from 2026-07-28 on) against a server of its own.
async fn validate_a_session(version: &'static str) {
    with_server(async |server| {
        let mut session = if version >= PER_REQUEST_VERSION {
            new_session(server, version)
        } else {
            let (session, initialize) = open_session(server, version).await;
            assert_eq!(initialize["result"]["protocolVersion"], version, "{initialize}");
            session
        };
        validate_results(&mut session).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_validate_against_the_2024_11_05_schema() {
    validate_a_session("2024-11-05").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_validate_against_the_2025_03_26_schema() {
    validate_a_session("2025-03-26").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_validate_against_the_2025_06_18_schema() {
    validate_a_session("2025-06-18").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_validate_against_the_2025_11_25_schema() {
    validate_a_session("2025-11-25").await;
}

/// 2026-07-28 has no `initialize`: rmcp 3.9 routes a request whose `_meta` names the version and
/// the client's capabilities past the session layer and answers it directly, so this runs end to
/// end over HTTP like the others. rmcp adds the `resultType` (and `ttlMs` and `cacheScope` on the
/// list and read results) that this version requires and earlier ones do not define.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_validate_against_the_2026_07_28_schema() {
    validate_a_session("2026-07-28").await;
}

#[test]
fn the_schema_check_catches_what_a_version_does_not_define() {
    let link = json!({"content": [{"type": "resource_link", "uri": "resource://x", "name": "x"}]});
    assert!(!validator("2025-03-26", "CallToolResult").is_valid(&link));
    assert!(validator("2025-06-18", "CallToolResult").is_valid(&link));
    let structured = json!({"content": [], "structuredContent": {}});
    assert!(!validator("2024-11-05", "CallToolResult").is_valid(&structured));
    // `resultType` arrived with 2026-07-28, where it is required.
    let typed = json!({"content": [], "resultType": "complete"});
    assert!(!validator("2025-11-25", "CallToolResult").is_valid(&typed));
    assert!(validator("2026-07-28", "CallToolResult").is_valid(&typed));
    assert!(!validator("2026-07-28", "CallToolResult").is_valid(&json!({"content": []})));
    // …and a list result of 2026-07-28 needs its caching hints.
    let tools = json!({"tools": [], "resultType": "complete"});
    assert!(!validator("2026-07-28", "ListToolsResult").is_valid(&tools));
    // A resource link's URI must be a URI.
    let bad_uri = json!({"content": [{"type": "resource_link", "uri": "not a uri", "name": "x"}]});
    assert!(!validator("2025-11-25", "CallToolResult").is_valid(&bad_uri));
    // Every version's excerpt holds the definitions these tests validate (a missing one does not build).
    for version in VERSIONS {
        for name in [
            "CallToolResult",
            "ListToolsResult",
            "ReadResourceResult",
            "ListResourcesResult",
            "GetPromptResult",
        ] {
            drop(validator(version, name));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newer_versions_get_the_resource_link_and_structured_content() {
    with_server(async |server| {
        for version in ["2025-06-18", "2025-11-25"] {
            let (mut session, _) = open_session(server, version).await;
            let result = session.call("query", json!({"sql": NJ_SQL})).await;
            let types: Vec<&str> = result["content"]
                .as_array()
                .map(|blocks| blocks.iter().filter_map(|b| b["type"].as_str()).collect())
                .unwrap_or_default();
            // The summary, the table, the column profile, the link.
            assert_eq!(types, ["text", "text", "text", "resource_link"], "{version}");
            assert_eq!(
                result["structuredContent"]["profile"]["rows"], 14,
                "{version}: {result}"
            );
            assert_eq!(
                result["structuredContent"]["metadata"]["total_count"], 14,
                "{version}: {result}"
            );
            let tools = session.result("tools/list", json!({})).await;
            assert!(tools["tools"][0]["outputSchema"].is_object(), "{version}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_03_26_session_works_end_to_end() {
    with_server(async |server| {
        let (mut session, initialize) = open_session(server, "2025-03-26").await;
        assert_eq!(initialize["result"]["protocolVersion"], "2025-03-26");
        let tools = session.result("tools/list", json!({})).await;
        for tool in tools["tools"].as_array().expect("tools") {
            assert!(tool.get("outputSchema").is_none() && tool.get("title").is_none(), "{tool}");
        }
        let result = session
            .result(
                "tools/call",
                json!({"name": "query", "arguments": {"sql": "SELECT id, name FROM institutions ORDER BY id"}}),
            )
            .await;
        assert!(result.get("structuredContent").is_none(), "{result}");
        let texts = texts(&result);
        assert_eq!(texts.len(), 2, "{result}");
        let summary = &texts[0];
        assert!(
            summary.contains(&format!("{INSTITUTIONS} rows in total, 10 shown below"))
                && summary.contains("The application fetches"),
            "{summary}"
        );
        assert_eq!(texts[1].lines().next(), Some("id:integer|name:string"));
        assert_eq!(texts[1].lines().count(), 11);
        // The model reads the next rows where the summary says.
        let read = session
            .result("resources/read", json!({"uri": read_more_uri(summary)}))
            .await;
        let page: Value =
            serde_json::from_str(read["contents"][0]["text"].as_str().expect("text")).expect("a JSON page");
        assert_eq!(page["offset"], 10);
        assert_eq!(page["data"][0]["id"], 11, "{page}");
        // Ending the session: 202, and then the session is unknown.
        let end = session.raw(Method::DELETE, "application/json", String::new());
        assert_eq!(exchange(end).await.0, StatusCode::ACCEPTED);
        let again = session.raw(Method::DELETE, "application/json", String::new());
        assert_eq!(exchange(again).await.0, StatusCode::NOT_FOUND);
    })
    .await;
}

/// docs/PERFORMANCE.md's figure (issue 11): the text blocks of a 10-row sample of a 7-column table
/// are at most half the reference implementation's, and each further row adds at most 0.6× its
/// compact JSON. `DatabaseMcp`'s `query` takes no sample size, so each size is a server of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_text_is_lean_on_a_seven_column_table() {
    within(LIMIT, async {
        let mut bytes = Vec::new();
        let mut rows = Vec::new();
        for sample_size in 10..=20 {
            let server = Served::start(None, |o| o.sample_size = sample_size).await;
            let (mut session, _) = open_session(&server, "2025-06-18").await;
            let result = session.call("query", json!({"sql": DEGREES_SQL})).await;
            let metadata = &result["structuredContent"]["metadata"];
            assert_eq!(metadata["columns"].as_array().map(Vec::len), Some(7), "{result}");
            assert_eq!(metadata["total_count"], DEGREES, "{result}");
            let texts = texts(&result);
            if sample_size == 10 {
                eprintln!("the summary: {} bytes", texts.first().map_or(0, String::len));
            }
            bytes.push(texts.iter().map(String::len).sum::<usize>());
            rows = result["structuredContent"]["results"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert_eq!(rows.len() as u64, sample_size, "{result}");
            server.stop().await;
        }
        let ten = bytes[0];
        eprintln!("text bytes for 10 rows x 7 columns: {ten} (reference {REFERENCE_TEXT_BYTES})");
        assert!(ten * 2 <= REFERENCE_TEXT_BYTES, "{ten} bytes for 10 rows");
        for (i, pair) in bytes.windows(2).enumerate() {
            let row = &rows[10 + i];
            let json = serde_json::to_string(row).expect("json").len();
            let added = pair[1] - pair[0];
            eprintln!(
                "row {}: +{added} text bytes, {json} bytes of compact JSON",
                11 + i
            );
            assert!(
                added * 10 <= json * 6,
                "row {}: {added} bytes vs {json} of JSON",
                11 + i
            );
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_get_json_rpc_answers() {
    with_server(async |server| {
        let (mut session, _) = open_session(server, "2025-06-18").await;
        for (method, params) in [
            ("tools/call", json!({"name": 5})),
            ("resources/read", json!({"uri": 7})),
        ] {
            let response = session.request(method, params).await;
            assert_eq!(response["error"]["code"], -32602, "{method}: {response}");
        }
        let response = session.request("no/such/method", json!({})).await;
        assert_eq!(response["error"]["code"], -32601, "{response}");
        // Malformed params of `subscriptions/listen` (2026-07-28) are invalid params too.
        let (mut listening, _) = open_session(server, "2026-07-28").await;
        let response = listening
            .request("subscriptions/listen", json!({"resourceSubscriptions": 5}))
            .await;
        assert_eq!(response["error"]["code"], -32602, "{response}");
        let (status, _, body) =
            exchange(session.raw(Method::POST, "application/json", "not json".to_owned())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let body: Value = serde_json::from_str(&body).expect("a JSON-RPC error");
        assert_eq!(
            (body["error"]["code"].as_i64(), &body["id"]),
            (Some(-32700), &Value::Null)
        );
        let mut stranger = session.raw(Method::DELETE, "application/json", String::new());
        stranger
            .headers_mut()
            .insert("mcp-session-id", "no-such-session".parse().expect("a header"));
        assert_eq!(exchange(stranger).await.0, StatusCode::NOT_FOUND);
    })
    .await;
}

/// The cap the whole-result test runs with.
const RESULT_CAP: usize = 48 * 1024;

/// Issue 21: `ServeOptions::max_sample_bytes` bounds the whole tool result (text blocks and
/// `structuredContent` together), whatever version the client speaks, for wide rows full of
/// characters the table and the JSON escape: with samples of 100 rows, the 40 rows of 3 KB are cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_tool_result_stays_within_max_sample_bytes_in_every_version() {
    Served::run(
        LIMIT,
        |o| {
            o.max_sample_bytes = RESULT_CAP;
            o.sample_size = 100;
        },
        async |server| {
            let sql =
                "SELECT id, replace(hex(zeroblob(1500)), '00', 'a|\"') AS v FROM institutions ORDER BY id";
            for version in VERSIONS {
                let mut session = session_of(server, version).await;
                let result = session.call("query", json!({"sql": sql})).await;
                assert_ne!(result["isError"], true, "{version}: {result}");
                let bytes = serde_json::to_vec(&result).map_or(usize::MAX, |v| v.len());
                assert!(bytes <= RESULT_CAP, "{version}: the tool result is {bytes} bytes");
                let summary = texts(&result).into_iter().next().unwrap_or_default();
                assert!(
                    summary.contains(&format!("{INSTITUTIONS} rows in total, ")),
                    "{version}: the cap cut the sample: {summary}"
                );
            }
        },
    )
    .await;
}

/// 2026-07-28 (SEP-2243): a load balancer may route on the `Mcp-Name` header without reading the
/// body, so a header that names another resource than the body is refused, never served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_mcp_name_header_must_name_what_the_body_reads() {
    with_server(async |server| {
        let mut session = new_session(server, PER_REQUEST_VERSION);
        let listed = session.result("resources/list", json!({})).await;
        assert_eq!(listed["resources"], json!([]), "nothing created yet");
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": PER_REQUEST_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "protocol-test", "version": "0"},
        });
        let uri = "resource://01J00000000000000000000000";
        let message = json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read",
                             "params": {"uri": uri, "_meta": meta}});
        let mut request = session.post(&message);
        request.headers_mut().insert(
            "mcp-name",
            "resource://01J00000000000000000000001"
                .parse()
                .expect("a header value"),
        );
        let (status, _, body) = exchange(request).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let answer = messages(&body).into_iter().next().unwrap_or_default();
        assert_eq!(answer["error"]["code"], -32020, "header mismatch: {answer}");
        // With the header naming the body's URI the request is served (here: not found).
        let (status, _, body) = exchange(session.post(&message)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let answer = messages(&body).into_iter().next().unwrap_or_default();
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    })
    .await;
}

/// 2026-07-28 has no session: a client subscribes with `subscriptions/listen`, a request that stays
/// open and carries the acknowledgment, then `notifications/resources/updated` when the result
/// changes (here: deleted over REST), and ends with the final result once nothing is left to
/// watch. Each message validates against the 2026-07-28 schema; a result the caller cannot read
/// is not found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_listen_request_carries_the_updates_of_its_results() {
    with_server(async |server| {
        let mut session = new_session(server, PER_REQUEST_VERSION);
        let result = session.call("query", json!({"sql": NJ_SQL})).await;
        let uri = result["structuredContent"]["resource"]["uri"]
            .as_str()
            .expect("a URI")
            .to_owned();
        let url = result["structuredContent"]["resource"]["url"]
            .as_str()
            .expect("a URL")
            .to_owned();
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": PER_REQUEST_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "protocol-test", "version": "0"},
        });
        let listen = json!({"jsonrpc": "2.0", "id": 41, "method": "subscriptions/listen",
                            "params": {"notifications": {"resourceSubscriptions": [uri]}, "_meta": meta}});
        let stream = tokio::spawn(exchange(session.post(&listen)));
        tokio::time::sleep(Duration::from_millis(300)).await;
        let delete = Request::builder()
            .method(Method::DELETE)
            .uri(&url)
            .body(Full::new(Bytes::new()))
            .expect("a request");
        let (status, _, body) = exchange(delete).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
        let (status, _, body) = timeout(Duration::from_secs(10), stream)
            .await
            .expect("the listen request ends once its result is gone")
            .expect("joined");
        assert_eq!(status, StatusCode::OK, "{body}");
        let received = messages(&body);
        let methods: Vec<&str> = received.iter().filter_map(|m| m["method"].as_str()).collect();
        assert_eq!(
            methods,
            [
                "notifications/subscriptions/acknowledged",
                "notifications/resources/updated"
            ],
            "{body}"
        );
        assert_valid(
            PER_REQUEST_VERSION,
            "SubscriptionsAcknowledgedNotification",
            &received[0],
        );
        assert_valid(PER_REQUEST_VERSION, "ResourceUpdatedNotification", &received[1]);
        assert_eq!(received[1]["params"]["uri"], uri);
        let last = received.last().expect("the final result");
        assert_eq!(last["id"], 41, "{body}");
        assert_valid(PER_REQUEST_VERSION, "SubscriptionsListenResult", &last["result"]);

        // Listening to a result nobody created is refused.
        let unknown = json!({"jsonrpc": "2.0", "id": 42, "method": "subscriptions/listen",
            "params": {"notifications": {"resourceSubscriptions": ["resource://01J00000000000000000000000"]},
                       "_meta": listen["params"]["_meta"].clone()}});
        let (_, _, body) = timeout(Duration::from_secs(10), exchange(session.post(&unknown)))
            .await
            .expect("answered");
        let answer = messages(&body)
            .into_iter()
            .find(|m| m["id"] == 42)
            .unwrap_or_default();
        assert_eq!(answer["error"]["code"], -32602, "{body}");
    })
    .await;
}
