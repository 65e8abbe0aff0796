//! MCP Apps (`io.modelcontextprotocol/ui`) on the demo, over real sockets with raw JSON-RPC: a
//! client that negotiated the extension gets the view on both tools, the `ui://` resource, the
//! app-only tool `dual_download_link` and results without the `resource_link` block; every other
//! client gets exactly what it got before the extension existed (golden files, byte for byte).

mod support;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use support::in_process::InProcess;
use support::raw_mcp::{PER_REQUEST_VERSION, RawMcp, apps_capabilities};

const LIMIT: Duration = Duration::from_secs(90);
/// The view's URI (dual_view::VIEW_URI).
const VIEW_URI: &str = "ui://dual-response/result-view.html";
/// The query of the tests: every institution of the small dataset.
const SQL: &str = "SELECT id, name, state FROM institutions ORDER BY id";

/// Runs `test` within [`LIMIT`] against a server of 3-row samples.
async fn with_server(
    configure: impl FnOnce(&mut dual_response_server::serve::ServeOptions),
    test: impl AsyncFnOnce(&InProcess),
) {
    InProcess::run(
        LIMIT,
        |options| {
            options.sample_size = 3;
            configure(options);
        },
        test,
    )
    .await;
}

/// What a client sees of the whole surface: the lists, both tools' results, the app-only tool and
/// the view, each whole JSON-RPC response with its `id` left out, normalized by [`normalize`].
async fn transcript(session: &mut RawMcp) -> String {
    let mut seen = serde_json::Map::new();
    let mut record = |what: &str, mut response: Value| {
        if let Some(object) = response.as_object_mut() {
            object.remove("id");
        }
        seen.insert(what.to_owned(), response);
    };
    record("tools/list", session.request("tools/list", json!({})).await);
    // The results every client is listed (docs/DESIGN.md §9) depend on what was called before;
    // what MCP Apps adds (the view) is what is compared.
    let mut listed = session.request("resources/list", json!({})).await;
    if let Some(resources) = listed["result"]["resources"].as_array_mut() {
        resources.retain(|resource| {
            !resource["uri"]
                .as_str()
                .is_some_and(|uri| uri.starts_with("resource://"))
        });
    }
    record("resources/list", listed);
    record(
        "resources/templates/list",
        session.request("resources/templates/list", json!({})).await,
    );
    let query = session
        .request(
            "tools/call",
            json!({"name": "query", "arguments": {"sql": SQL, "sample_size": 3}}),
        )
        .await;
    let uri = first_resource_uri(&query.to_string());
    record("tools/call query", query);
    record(
        "tools/call search_institutions",
        session
            .request(
                "tools/call",
                json!({"name": "search_institutions", "arguments": {"state": "NJ"}}),
            )
            .await,
    );
    record(
        "tools/call dual_download_link",
        session
            .request(
                "tools/call",
                json!({"name": "dual_download_link", "arguments": {"uri": uri, "format": "csv"}}),
            )
            .await,
    );
    record(
        "resources/read view",
        session.request("resources/read", json!({"uri": VIEW_URI})).await,
    );
    normalize(&serde_json::to_string_pretty(&Value::Object(seen)).unwrap_or_default())
}

/// The first `resource://ID` in `text`.
fn first_resource_uri(text: &str) -> String {
    let start = text.find("resource://").expect("a resource URI");
    text[start..start + "resource://".len() + 26].to_owned()
}

/// `text` with what differs from run to run replaced: resource ids (`{ID}`), the server's address
/// (`{ADDR}`) and RFC 3339 instants (`{TIME}`).
fn normalize(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..chars.len().min(i + 40)].iter().collect();
        if let Some(len) = instant_len(&chars[i..]) {
            out.push_str("{TIME}");
            i += len;
        } else if rest.starts_with("127.0.0.1:") {
            out.push_str("{ADDR}");
            i += "127.0.0.1:".len();
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
        } else if is_ulid(&chars[i..]) && (out.ends_with("://") || out.ends_with('/')) {
            out.push_str("{ID}");
            i += 26;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Whether `chars` start with a ULID (26 Crockford base-32 characters, not followed by another).
fn is_ulid(chars: &[char]) -> bool {
    chars.len() >= 26
        && chars[..26]
            .iter()
            .all(|c| c.is_ascii_digit() || (c.is_ascii_uppercase() && !"ILOU".contains(*c)))
        && chars.get(26).is_none_or(|c| !c.is_ascii_alphanumeric())
}

/// The length of the RFC 3339 instant `chars` start with (`2026-01-26T10:00:00[.123]Z`).
fn instant_len(chars: &[char]) -> Option<usize> {
    let pattern = "dddd-dd-ddTdd:dd:dd";
    if chars.len() < pattern.len()
        || !pattern
            .chars()
            .zip(chars)
            .all(|(p, c)| if p == 'd' { c.is_ascii_digit() } else { p == *c })
    {
        return None;
    }
    let mut len = pattern.len();
    if chars.get(len) == Some(&'.') {
        len += 1;
        while chars.get(len).is_some_and(char::is_ascii_digit) {
            len += 1;
        }
    }
    match chars.get(len) {
        Some('Z') => Some(len + 1),
        Some('+' | '-') => Some(len + 6),
        _ => Some(len),
    }
}

fn golden(version: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("non_apps_{version}.json"))
}

/// A client that did not negotiate the extension — no capabilities, another extension id, the
/// extension without the view's MIME type, or the extension in a version without `_meta` on tools
/// — sees byte for byte what the demo served before MCP Apps (the golden files were recorded
/// from it; `DUAL_BLESS_GOLDEN=1` records them again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_clients_get_exactly_the_surface_they_got_before() {
    with_server(|_| {}, async |server| {
        for version in ["2025-03-26", "2025-06-18", "2025-11-25", PER_REQUEST_VERSION] {
            let mut session = RawMcp::open(server.addr(), version, json!({}), None).await;
            let seen = transcript(&mut session).await;
            let path = golden(version);
            if std::env::var_os("DUAL_BLESS_GOLDEN").is_some() {
                std::fs::create_dir_all(path.parent().expect("a parent")).expect("the directory");
                std::fs::write(&path, &seen).expect("the golden file");
                // Recording compares nothing: never let it pass as a check.
                panic!("recorded {}; run the test again without DUAL_BLESS_GOLDEN", path.display());
            }
            let expected = std::fs::read_to_string(&path).expect("the golden file");
            assert_eq!(seen, expected, "{version}: {}", path.display());
            for capabilities in [
                json!({"extensions": {"io.modelcontextprotocol/apps": {"mimeTypes": ["text/html;profile=mcp-app"]}}}),
                json!({"extensions": {"io.modelcontextprotocol/ui": {}}}),
                json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}}),
            ] {
                let mut session = RawMcp::open(server.addr(), version, capabilities.clone(), None).await;
                assert_eq!(transcript(&mut session).await, expected, "{version} {capabilities}");
            }
        }
        // An apps host on 2025-03-26 (no `_meta` on tools) is no apps host.
        let mut session = RawMcp::open(server.addr(), "2025-03-26", apps_capabilities(), None).await;
        let expected = std::fs::read_to_string(golden("2025-03-26")).expect("the golden file");
        assert_eq!(transcript(&mut session).await, expected);
    })
    .await;
}

/// The bearer tokens of two owners.
const ALICE: &str = "token-of-alice";
const BOB: &str = "token-of-bob";

fn tokens() -> dual_serve::auth::AuthTokens {
    dual_serve::auth::AuthTokens::parse(&format!("{ALICE} alice\n{BOB} bob\n")).expect("tokens")
}

/// The `type`s of a result's content blocks.
fn block_types(result: &Value) -> Vec<String> {
    support::raw_mcp::block_fields(result, "type")
}

/// The first text block of a result.
fn summary(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `GET url` with no `Authorization` header.
async fn get(url: &str) -> support::http::Reply {
    let request = http::Request::get(url)
        .body(http_body_util::Full::default())
        .expect("a request");
    support::http::exchange(request).await
}

/// The rows of a CSV (after its header) or NDJSON body.
fn rows_of(format: &str, body: &str) -> u64 {
    let lines = body.lines().filter(|line| !line.is_empty()).count() as u64;
    if format == "csv" { lines - 1 } else { lines }
}

/// A link from `dual_download_link`, checked: no error, the URL as text and in
/// `structuredContent`, an RFC 3339 expiry.
async fn link(host: &mut RawMcp, arguments: Value) -> String {
    let result = host.call("dual_download_link", arguments).await;
    assert_ne!(result["isError"], true, "{result}");
    support::schema::assert_valid(host.version(), "CallToolResult", &result);
    let url = result["structuredContent"]["url"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(summary(&result), url);
    let expires_at = result["structuredContent"]["expires_at"]
        .as_str()
        .unwrap_or_default();
    assert!(
        expires_at.len() >= 20
            && expires_at.ends_with('Z')
            && instant_len(&expires_at.chars().collect::<Vec<_>>()).is_some(),
        "{expires_at}"
    );
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_host_gets_the_view_and_downloads_every_row_without_a_header() {
    with_server(
        |o| o.authentication = dual_serve::auth::Authentication::Tokens(tokens()),
        async |server| {
            for version in ["2025-11-25", PER_REQUEST_VERSION] {
                let mut host = RawMcp::open(server.addr(), version, apps_capabilities(), Some(ALICE)).await;
                let mut plain = RawMcp::open(server.addr(), version, json!({}), Some(ALICE)).await;

                // Both tools carry the view; the app-only tool comes last; nothing else differs.
                let listed = host.result("tools/list", json!({})).await;
                support::schema::assert_valid(version, "ListToolsResult", &listed);
                let tools = listed["tools"].clone();
                let plain_tools = plain.result("tools/list", json!({})).await["tools"].clone();
                let names: Vec<&str> = tools
                    .as_array()
                    .expect("tools")
                    .iter()
                    .filter_map(|t| t["name"].as_str())
                    .collect();
                assert_eq!(
                    names,
                    ["query", "search_institutions", "dual_download_link"],
                    "{version}"
                );
                for i in 0..2 {
                    let mut tool = tools[i].clone();
                    assert_eq!(
                        tool["_meta"],
                        json!({"ui": {"resourceUri": VIEW_URI}, "ui/resourceUri": VIEW_URI}),
                        "{version}"
                    );
                    tool.as_object_mut().map(|t| t.remove("_meta"));
                    assert_eq!(tool, plain_tools[i], "{version}");
                }
                assert_eq!(tools[2]["_meta"]["ui"]["visibility"], json!(["app"]));

                // The view: listed, and read with its MIME type and `_meta.ui`.
                let resources = host.result("resources/list", json!({})).await;
                let views = resources["resources"].as_array().map(|all| {
                    all.iter()
                        .filter(|r| r["uri"].as_str().is_some_and(|u| u.starts_with("ui://")))
                        .count()
                });
                assert_eq!(views, Some(1), "{resources}");
                assert!(
                    resources["resources"][0]["uri"]
                        .as_str()
                        .is_some_and(|u| u.starts_with("ui://")),
                    "the view comes first: {resources}"
                );
                let view = &resources["resources"][0];
                assert_eq!(
                    (
                        &view["uri"],
                        &view["mimeType"],
                        &view["_meta"]["ui"]["prefersBorder"]
                    ),
                    (
                        &json!(VIEW_URI),
                        &json!("text/html;profile=mcp-app"),
                        &json!(true)
                    )
                );
                let read = host.result("resources/read", json!({"uri": VIEW_URI})).await;
                support::schema::assert_valid(version, "ReadResourceResult", &read);
                let contents = &read["contents"][0];
                assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
                assert!(
                    contents["text"]
                        .as_str()
                        .unwrap_or_default()
                        .starts_with("<!doctype html>")
                );
                assert_eq!(contents["_meta"]["ui"]["csp"], json!({}));

                for (tool, arguments) in [
                    ("query", json!({"sql": SQL})),
                    ("search_institutions", json!({"state": "NJ"})),
                ] {
                    let result = host.call(tool, arguments.clone()).await;
                    let before = plain.call(tool, arguments).await;
                    support::schema::assert_valid(version, "CallToolResult", &result);
                    assert_eq!(
                        block_types(&result),
                        ["text", "text"],
                        "{version} {tool}: {result}"
                    );
                    assert_eq!(block_types(&before), ["text", "text", "resource_link"]);
                    let uri = result["structuredContent"]["resource"]["uri"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    assert!(summary(&result).contains(&uri), "the URI stays in the text");
                    let total = result["structuredContent"]["metadata"]["total_count"]
                        .as_u64()
                        .expect("a count");
                    assert!(total > 3, "{tool}: {total}");
                    for format in ["csv", "ndjson"] {
                        let url = link(&mut host, json!({"uri": uri, "format": format})).await;
                        let reply = get(&url).await;
                        assert_eq!(reply.status, http::StatusCode::OK, "{url}: {}", reply.text());
                        assert_eq!(rows_of(format, &reply.text()), total, "{version} {tool} {format}");
                    }
                    let page = link(&mut host, json!({"uri": uri, "view": true})).await;
                    let reply = get(&page).await;
                    assert_eq!(reply.status, http::StatusCode::OK, "{page}");
                    assert!(reply.text().contains(r#"content="rest""#), "the REST page");

                    // Another owner, even through an apps host, finds nothing.
                    let mut bob = RawMcp::open(server.addr(), version, apps_capabilities(), Some(BOB)).await;
                    let stolen = bob
                        .call("dual_download_link", json!({"uri": uri, "format": "csv"}))
                        .await;
                    assert_eq!(stolen["isError"], true, "{stolen}");
                    assert_eq!(summary(&stolen), format!("resource not found or expired: {uri}"));
                }

                // A client without the extension cannot call the app-only tool.
                let refused = plain
                .request(
                    "tools/call",
                    json!({"name": "dual_download_link", "arguments": {"uri": "resource://x", "view": true}}),
                )
                .await;
                assert_eq!(refused["error"]["code"], -32602, "{refused}");
            }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_passes_the_bearer_check_and_a_bad_one_is_not_found() {
    with_server(
        |o| o.authentication = dual_serve::auth::Authentication::Tokens(tokens()),
        async |server| {
            let mut host = RawMcp::open(server.addr(), "2025-11-25", apps_capabilities(), Some(ALICE)).await;
            let result = host.call("query", json!({"sql": SQL})).await;
            let uri = result["structuredContent"]["resource"]["uri"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let rest = result["structuredContent"]["resource"]["url"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let total = result["structuredContent"]["metadata"]["total_count"]
                .as_u64()
                .expect("a count");
            let url = link(&mut host, json!({"uri": uri, "format": "csv"})).await;
            // No header, a valid link: every row.
            let reply = get(&url).await;
            assert_eq!(reply.status, http::StatusCode::OK, "{}", reply.text());
            assert_eq!(rows_of("csv", &reply.text()), total);
            // No header, a tampered token (or another id, or a widened export): 404 like an unknown id.
            let (head, token) = url.rsplit_once("&token=").expect("a token");
            let flipped = if token.starts_with('A') { "B" } else { "A" };
            let unknown = format!(
                "http://{}/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV/data?format=csv&expires=1&token=x",
                server.addr()
            );
            let unknown = get(&unknown).await;
            assert_eq!(unknown.status, http::StatusCode::NOT_FOUND);
            for bad in [
                format!("{head}&token={flipped}{}", &token[1..]),
                format!("{head}&token={}", &token[..token.len() - 1]),
                url.replace("format=csv", "format=ndjson"),
                format!("{url}&offset=1"),
            ] {
                let reply = get(&bad).await;
                assert_eq!(
                    reply.status,
                    http::StatusCode::NOT_FOUND,
                    "{bad}: {}",
                    reply.text()
                );
                assert_eq!(reply.json(), unknown.json(), "{bad}");
            }
            // No header and no token: 401, as before.
            let reply = get(&format!("{rest}/data?format=csv")).await;
            assert_eq!(reply.status, http::StatusCode::UNAUTHORIZED, "{}", reply.text());
            // A token never opens /mcp.
            let reply = get(&format!("http://{}/mcp?token=x", server.addr())).await;
            assert_eq!(reply.status, http::StatusCode::UNAUTHORIZED);
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_result_may_carry_a_download_link_for_hosts_that_show_links() {
    with_server(
        |o| o.apps = dual_rmcp::apps::AppsOptions::new().download_link(true),
        async |server| {
            let mut host = RawMcp::open(server.addr(), "2025-11-25", apps_capabilities(), None).await;
            let result = host.call("search_institutions", json!({"state": "NJ"})).await;
            let total = result["structuredContent"]["metadata"]["total_count"]
                .as_u64()
                .expect("a count");
            let text = summary(&result);
            let line = text.lines().last().unwrap_or_default();
            assert!(line.starts_with("Download every row as CSV"), "{text}");
            let url = line.rsplit_once(": ").map(|(_, url)| url).unwrap_or_default();
            let reply = get(url).await;
            assert_eq!(reply.status, http::StatusCode::OK, "{url}");
            assert_eq!(rows_of("csv", &reply.text()), total);
            // Other clients: exactly the result they got before.
            let mut plain = RawMcp::open(server.addr(), "2025-11-25", json!({}), None).await;
            let before = plain.call("search_institutions", json!({"state": "NJ"})).await;
            assert!(!summary(&before).contains("Download every row"));
            assert_eq!(block_types(&before), ["text", "text", "resource_link"]);
        },
    )
    .await;
}

/// `dual-response serve` with the link flags: a key file of fewer than 32 bytes is refused at start-up;
/// with a key and a lifetime the result's download line says when the link ends; without a key the
/// start-up log says that links do not outlive the process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_takes_the_link_flags() {
    support::within(LIMIT, async {
        let db = support::TempDb::new();
        let short = db.dir().join("short.key");
        let key = db.dir().join("link.key");
        std::fs::write(&short, [1_u8; 31]).expect("written");
        std::fs::write(&key, [2_u8; 32]).expect("written");
        let mut refused = support::serve_command(&db.path());
        refused.arg("--link-key-file").arg(&short);
        let stderr = support::start_up_error(refused).await;
        assert!(stderr.contains("holds no usable key"), "{stderr}");

        let keyed = support::Instance::start_memory(&[
            "--link-key-file",
            key.to_str().expect("a UTF-8 path"),
            "--link-lifetime-secs",
            "60",
            "--result-download-link",
        ])
        .await;
        let mut host = RawMcp::open(keyed.addr(), "2025-11-25", apps_capabilities(), None).await;
        let before = std::time::SystemTime::now();
        let result = host.call("query", json!({"sql": SQL})).await;
        let line = summary(&result).lines().last().unwrap_or_default().to_owned();
        let until = line
            .split_once("until ")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(at, _)| at.to_owned())
            .unwrap_or_default();
        let expires: u64 = line
            .split_once("&expires=")
            .and_then(|(_, rest)| rest.split('&').next())
            .and_then(|n| n.parse().ok())
            .expect("an expiry in the URL");
        let now = before
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        assert!(
            (now + 59..=now + 62).contains(&expires),
            "{expires} vs {now}: {line}"
        );
        assert!(until.ends_with('Z'), "{line}");
        assert!(!keyed.log().contains("random key"), "{}", keyed.log());

        let random = support::Instance::start_memory(&[]).await;
        assert!(
            random
                .log()
                .contains("capability links are signed with a random key of this process"),
            "{}",
            random.log()
        );
    })
    .await;
}

/// An apps host that also declares tasks gets a task, and the task's result is rendered for apps
/// too: no `resource_link` block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_of_an_apps_host_ends_with_the_apps_rendering() {
    with_server(
        |_| {},
        async |server| {
            let mut capabilities = apps_capabilities();
            capabilities["extensions"]["io.modelcontextprotocol/tasks"] = json!({});
            let mut host = RawMcp::open(server.addr(), "2025-11-25", capabilities, None).await;
            let created = host.call("query", json!({"sql": SQL})).await;
            let task_id = created["taskId"]
                .as_str()
                .unwrap_or_else(|| panic!("a task: {created}"))
                .to_owned();
            let mut task = Value::Null;
            for _ in 0..500 {
                task = host.result("tasks/get", json!({"taskId": task_id})).await;
                if task["status"] == "completed" {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert_eq!(task["status"], "completed", "{task}");
            let result = task
                .as_object()
                .and_then(|task| task.values().find(|value| value.get("content").is_some()))
                .cloned()
                .unwrap_or_else(|| panic!("no tool result in {task}"));
            assert_eq!(block_types(&result), ["text", "text"], "{result}");
            assert!(
                result["structuredContent"]["metadata"]["total_count"].is_u64(),
                "{result}"
            );
        },
    )
    .await;
}
