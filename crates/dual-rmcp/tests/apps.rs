//! MCP Apps (`io.modelcontextprotocol/ui`) on `DatabaseMcp`, with raw JSON-RPC over an in-process
//! pipe: a client that negotiated the extension gets the view on `query`, the `ui://` resource, the
//! app-only tool `dual_download_link` and results without the `resource_link` block (as tool
//! results and as task results); every other client gets exactly what it got before the extension
//! existed (golden files, byte for byte). That the links download every row over HTTP, past the
//! bearer check, is dual-serve's `tests/apps.rs`.
#![cfg(feature = "apps")]

mod common;

use std::path::PathBuf;

use common::raw_mcp::{PER_REQUEST_VERSION, RawMcp, apps_capabilities};
use common::{Fixture, fixture};
use dual_rmcp::DatabaseMcp;
use dual_rmcp::apps::AppsOptions;
use dual_rmcp::dual_view::VIEW_URI;
use dual_testkit::mcp_schema::assert_valid;
use dual_testkit::wait::until;
use serde_json::{Value, json};

/// The query of the tests: every order (3 rows).
const SQL: &str = "SELECT id, region, total FROM orders ORDER BY id";

/// The fixture and `DatabaseMcp` over it rendering apps results as `options` asks.
fn server(options: AppsOptions) -> (Fixture, DatabaseMcp) {
    let f = fixture("dual-rmcp-apps-");
    let mcp = f.database_mcp().with_apps(options);
    (f, mcp)
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
        .request("tools/call", json!({"name": "query", "arguments": {"sql": SQL}}))
        .await;
    let uri = first_resource_uri(&query.to_string());
    record("tools/call query", query);
    record(
        "tools/call describe_schema",
        session
            .request(
                "tools/call",
                json!({"name": "describe_schema", "arguments": {"table": "orders"}}),
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
    let start = text
        .find("resource://")
        .unwrap_or_else(|| panic!("a resource URI in {text}"));
    text[start..start + "resource://".len() + 26].to_owned()
}

/// `text` with what differs from run to run replaced: resource ids (`{ID}`) and RFC 3339 instants
/// (`{TIME}`).
fn normalize(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if let Some(len) = instant_len(&chars[i..]) {
            out.push_str("{TIME}");
            i += len;
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

/// The golden transcript of `version`, checked to hold nothing of MCP Apps, so that recording it
/// from a server that leaked the extension fails too.
fn expected(version: &str) -> String {
    let path = golden(version);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for apps in [
        "resourceUri",
        "visibility",
        "text/html;profile=mcp-app",
        "Download every row",
    ] {
        assert!(!text.contains(apps), "{}: {apps}", path.display());
    }
    assert!(
        text.contains("unknown tool `dual_download_link`"),
        "{}",
        path.display()
    );
    text
}

/// A client that did not negotiate the extension — no capabilities, another extension id, the
/// extension without the view's MIME type, or the extension in a version without `_meta` on tools
/// — sees byte for byte the golden transcript of its version, which holds nothing of MCP Apps
/// ([`expected`]), though this server renders apps results with a download line; an apps host's
/// transcript differs. `DUAL_BLESS_GOLDEN=1` records the golden files again from this server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_clients_get_exactly_the_surface_they_got_before() {
    let (_f, mcp) = server(AppsOptions::new().download_link(true));
    let versions = ["2025-03-26", "2025-06-18", "2025-11-25", PER_REQUEST_VERSION];
    if std::env::var_os("DUAL_BLESS_GOLDEN").is_some() {
        for version in versions {
            let mut session = RawMcp::open(mcp.clone(), version, json!({})).await;
            let path = golden(version);
            std::fs::create_dir_all(path.parent().unwrap_or_else(|| panic!("a parent")))
                .unwrap_or_else(|e| panic!("the directory: {e}"));
            std::fs::write(&path, transcript(&mut session).await)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        // Recording compares nothing: never let it pass as a check.
        panic!("recorded {versions:?}; run the test again without DUAL_BLESS_GOLDEN");
    }
    for version in versions {
        let mut session = RawMcp::open(mcp.clone(), version, json!({})).await;
        let expected = expected(version);
        assert_eq!(transcript(&mut session).await, expected, "{version}");
        for capabilities in [
            json!({"extensions": {"io.modelcontextprotocol/apps": {"mimeTypes": ["text/html;profile=mcp-app"]}}}),
            json!({"extensions": {"io.modelcontextprotocol/ui": {}}}),
            json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}}),
        ] {
            let mut session = RawMcp::open(mcp.clone(), version, capabilities.clone()).await;
            assert_eq!(
                transcript(&mut session).await,
                expected,
                "{version} {capabilities}"
            );
        }
        // The transcript does show the extension: an apps host's differs.
        if version >= "2025-06-18" {
            let mut host = RawMcp::open(mcp.clone(), version, apps_capabilities()).await;
            assert_ne!(transcript(&mut host).await, expected, "{version}");
        }
    }
    // An apps host on 2025-03-26 (no `_meta` on tools) is no apps host.
    let mut session = RawMcp::open(mcp.clone(), "2025-03-26", apps_capabilities()).await;
    assert_eq!(transcript(&mut session).await, expected("2025-03-26"));
}

/// The `type`s of a raw tool result's content blocks.
fn block_types(result: &Value) -> Vec<&str> {
    let blocks = result["content"].as_array().into_iter().flatten();
    blocks.filter_map(|block| block["type"].as_str()).collect()
}

/// The first text block of a result.
fn summary(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// A link from `dual_download_link`, checked: no error, valid in the session's version, the URL as
/// text and in `structuredContent`, an RFC 3339 expiry.
async fn link(host: &mut RawMcp, arguments: Value) -> String {
    let result = host.call("dual_download_link", arguments).await;
    assert_ne!(result["isError"], true, "{result}");
    assert_valid(host.version(), "CallToolResult", &result);
    let url = result["structuredContent"]["url"].as_str().unwrap_or_default();
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
    url.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_host_gets_the_view_the_app_only_tool_and_results_without_a_resource_link() {
    let (_f, mcp) = server(AppsOptions::new());
    for version in ["2025-11-25", PER_REQUEST_VERSION] {
        let mut host = RawMcp::open(mcp.clone(), version, apps_capabilities()).await;
        let mut plain = RawMcp::open(mcp.clone(), version, json!({})).await;

        // `query` carries the view (`describe_schema` returns no result to show); the app-only
        // tool comes last; nothing else differs.
        let listed = host.result("tools/list", json!({})).await;
        assert_valid(version, "ListToolsResult", &listed);
        let tools = listed["tools"].clone();
        let plain_tools = plain.result("tools/list", json!({})).await["tools"].clone();
        let names: Vec<&str> = tools
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(
            names,
            ["query", "describe_schema", "dual_download_link"],
            "{version}"
        );
        let mut query = tools[0].clone();
        assert_eq!(
            query["_meta"],
            json!({"ui": {"resourceUri": VIEW_URI}, "ui/resourceUri": VIEW_URI}),
            "{version}"
        );
        query.as_object_mut().map(|t| t.remove("_meta"));
        assert_eq!(query, plain_tools[0], "{version}");
        assert_eq!(tools[1], plain_tools[1], "{version}");
        assert_eq!(plain_tools.as_array().map(Vec::len), Some(2), "{version}");
        assert_eq!(tools[2]["_meta"]["ui"]["visibility"], json!(["app"]));

        // The view: listed first, and read with its MIME type and `_meta.ui`.
        let resources = host.result("resources/list", json!({})).await;
        assert_valid(version, "ListResourcesResult", &resources);
        let views = resources["resources"].as_array().map(|all| {
            all.iter()
                .filter(|r| r["uri"].as_str().is_some_and(|u| u.starts_with("ui://")))
                .count()
        });
        assert_eq!(views, Some(1), "{resources}");
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
            ),
            "the view comes first: {resources}"
        );
        let read = host.result("resources/read", json!({"uri": VIEW_URI})).await;
        assert_valid(version, "ReadResourceResult", &read);
        let contents = &read["contents"][0];
        assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
        assert!(
            contents["text"]
                .as_str()
                .unwrap_or_default()
                .starts_with("<!doctype html>")
        );
        assert_eq!(contents["_meta"]["ui"]["csp"], json!({}));

        // The result: no resource_link block, the URI in the text.
        let result = host.call("query", json!({"sql": SQL})).await;
        let before = plain.call("query", json!({"sql": SQL})).await;
        assert_valid(version, "CallToolResult", &result);
        // The summary, the table and the column profile.
        assert_eq!(
            block_types(&result),
            ["text", "text", "text"],
            "{version}: {result}"
        );
        assert_eq!(block_types(&before), ["text", "text", "text", "resource_link"]);
        let uri = result["structuredContent"]["resource"]["uri"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(summary(&result).contains(&uri), "the URI stays in the text");
        assert_eq!(result["structuredContent"]["metadata"]["total_count"], 3);

        // The app-only tool mints links to the result for the view.
        let id = uri.trim_start_matches("resource://");
        for format in ["csv", "ndjson"] {
            let url = link(&mut host, json!({"uri": uri, "format": format})).await;
            let data = format!("http://localhost/resources/{id}/data?format={format}&expires=");
            assert!(url.starts_with(&data), "{url}");
        }
        let page = link(&mut host, json!({"uri": uri, "view": true})).await;
        assert!(
            page.starts_with(&format!("http://localhost/resources/{id}/view?")),
            "{page}"
        );
        // An unknown result is not found.
        let unknown = "resource://01ARZ3NDEKTSV4RRFFQ69G5FAV";
        let missing = host
            .call("dual_download_link", json!({"uri": unknown, "format": "csv"}))
            .await;
        assert_eq!(missing["isError"], true, "{missing}");
        assert_eq!(
            summary(&missing),
            format!("resource not found or expired: {unknown}")
        );

        // A client without the extension cannot call the app-only tool.
        let refused = plain
            .request(
                "tools/call",
                json!({"name": "dual_download_link", "arguments": {"uri": uri, "view": true}}),
            )
            .await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_result_may_carry_a_download_link_for_hosts_that_show_links() {
    let (_f, mcp) = server(AppsOptions::new().download_link(true));
    let mut host = RawMcp::open(mcp.clone(), "2025-11-25", apps_capabilities()).await;
    let result = host.call("query", json!({"sql": SQL})).await;
    let text = summary(&result);
    let line = text.lines().last().unwrap_or_default();
    assert!(
        line.starts_with("Download every row as CSV (the link works until "),
        "{text}"
    );
    let url = line.rsplit_once(": ").map(|(_, url)| url).unwrap_or_default();
    let id = result["structuredContent"]["resource"]["uri"]
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("resource://");
    assert!(
        url.starts_with(&format!(
            "http://localhost/resources/{id}/data?format=csv&expires="
        )),
        "{line}"
    );
    assert_eq!(block_types(&result), ["text", "text", "text"], "{result}");
    // Other clients: exactly the result they got before.
    let mut plain = RawMcp::open(mcp, "2025-11-25", json!({})).await;
    let before = plain.call("query", json!({"sql": SQL})).await;
    assert!(!summary(&before).contains("Download every row"), "{before}");
    assert_eq!(block_types(&before), ["text", "text", "text", "resource_link"]);
}

/// An apps host that also declares tasks gets a task, and the task's result is rendered for apps
/// too: no `resource_link` block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_of_an_apps_host_ends_with_the_apps_rendering() {
    let (_f, mcp) = server(AppsOptions::new());
    let mut capabilities = apps_capabilities();
    capabilities["extensions"]["io.modelcontextprotocol/tasks"] = json!({});
    let mut host = RawMcp::open(mcp, "2025-11-25", capabilities).await;
    let created = host.call("query", json!({"sql": SQL})).await;
    let task_id = created["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_owned();
    let mut task = Value::Null;
    until("the task completes", async || {
        task = host.result("tasks/get", json!({"taskId": task_id})).await;
        task["status"] == "completed"
    })
    .await;
    let result = task
        .as_object()
        .and_then(|task| task.values().find(|value| value.get("content").is_some()))
        .unwrap_or_else(|| panic!("no tool result in {task}"));
    // The summary, the table and the column profile (complete when the task ended).
    assert_eq!(block_types(result), ["text", "text", "text"], "{result}");
    assert_eq!(result["structuredContent"]["profile"]["rows"], 3, "{result}");
    assert_eq!(
        result["structuredContent"]["metadata"]["total_count"], 3,
        "{result}"
    );
}
