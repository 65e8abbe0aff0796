use dual_core::mcp::{ProtocolVersion, RenderOptions};
use dual_view::{MIME_TYPE, VIEW_HTML, VIEW_URI};
use rmcp::model::{ClientCapabilities, ResourceContents, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::*;
use crate::tool_result::tests::sample_response;

fn capabilities(value: Value) -> ClientCapabilities {
    serde_json::from_value(value).expect("client capabilities")
}

fn host() -> ClientCapabilities {
    capabilities(json!({"extensions": {EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}}))
}

/// A server of the `numbers` executor on the tokio clock, without a sweeper, still to be built (the
/// download link's tests cap its error texts).
pub(super) fn server_builder() -> dual_server::DualResponseServerBuilder {
    dual_server::DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .clock(dual_store::Clock::tokio())
        .without_sweeper()
        .executor("numbers", dual_testkit::executor::Numbers::new())
}

/// The text of a tool result's first content block.
pub(super) fn text(result: &rmcp::model::CallToolResult) -> String {
    result.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

#[test]
fn the_extension_is_negotiated_only_with_the_view_mime_type() {
    assert!(capabilities_support_apps(&host()));
    let other_types = json!({"extensions": {EXTENSION_ID: {"mimeTypes": ["text/html"]}}});
    for value in [
        json!({}),
        json!({"extensions": {}}),
        json!({"extensions": {EXTENSION_ID: {}}}),
        other_types,
        json!({"extensions": {EXTENSION_ID: {"mimeTypes": MIME_TYPE}}}),
        json!({"experimental": {EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}}),
        json!({"extensions": {"io.modelcontextprotocol/apps": {"mimeTypes": [MIME_TYPE]}}}),
    ] {
        assert!(
            !capabilities_support_apps(&capabilities(value.clone())),
            "{value}"
        );
    }
}

#[test]
fn versions_without_meta_on_tools_never_negotiate() {
    let host = host();
    for version in ProtocolVersion::ALL {
        assert_eq!(
            apps_negotiated(Some(&host), version),
            version >= ProtocolVersion::V2025_06_18,
            "{version:?}"
        );
        assert!(!apps_negotiated(None, version));
    }
}

#[test]
fn the_server_declares_the_extension_beside_the_others() {
    let plain = ServerCapabilities::builder()
        .enable_tools()
        .enable_tasks()
        .build();
    let declared = serde_json::to_value(declare_apps(plain.clone())).unwrap_or_default();
    assert_eq!(declared["extensions"][EXTENSION_ID], json!({}));
    assert!(declared["extensions"]["io.modelcontextprotocol/tasks"].is_object());
    // Nothing else changes.
    let mut without = declared.clone();
    if let Some(extensions) = without["extensions"].as_object_mut() {
        extensions.remove(EXTENSION_ID);
    }
    assert_eq!(without, serde_json::to_value(plain).unwrap_or_default());
    let bare = serde_json::to_value(declare_apps(ServerCapabilities::default())).unwrap_or_default();
    assert_eq!(bare, json!({"extensions": {EXTENSION_ID: {}}}));
}

#[test]
fn the_view_resource_is_listed_and_read_with_its_mime_type_and_ui_meta() {
    let listed = serde_json::to_value(view_resource()).unwrap_or_default();
    assert_eq!(listed["uri"], VIEW_URI);
    assert_eq!(listed["name"], VIEW_NAME);
    assert_eq!(listed["mimeType"], MIME_TYPE);
    assert_eq!(listed["_meta"]["ui"]["prefersBorder"], true);
    assert_eq!(listed["size"], VIEW_HTML.len());
    let read = read_view(VIEW_URI).expect("the view");
    match read.contents.as_slice() {
        [
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                meta,
            },
        ] => {
            assert_eq!((uri.as_str(), mime_type.as_deref()), (VIEW_URI, Some(MIME_TYPE)));
            assert_eq!(text, VIEW_HTML);
            let meta = serde_json::to_value(meta).unwrap_or_default();
            assert_eq!(
                meta,
                json!({"ui": {"csp": {}, "prefersBorder": true, "permissions": {"clipboardWrite": {}}}})
            );
        }
        other => panic!("one text content expected: {other:?}"),
    }
    for uri in [
        "ui://dual-response/other.html",
        "resource://x",
        "",
        "ui://dual-response/result-view.html?x",
    ] {
        assert!(read_view(uri).is_none(), "{uri}");
    }
}

#[test]
fn with_view_adds_the_ui_meta_and_keeps_everything_else() {
    let mut tool = Tool::new("query", "Run SQL", JsonObject::new())
        .with_raw_output_schema(crate::tool_result::output_schema())
        .annotate(ToolAnnotations::new().read_only(true));
    let mut meta = rmcp::model::MetaObject::new();
    meta.0.insert("ui".to_owned(), json!({"prefersBorder": false}));
    meta.0.insert("other".to_owned(), json!(1));
    tool.meta = Some(meta);
    let viewed = with_view(tool.clone());
    let value = serde_json::to_value(&viewed).unwrap_or_default();
    assert_eq!(
        value["_meta"],
        json!({"ui": {"prefersBorder": false, "resourceUri": VIEW_URI}, "other": 1, RESOURCE_URI_META_KEY: VIEW_URI})
    );
    let mut back = viewed;
    back.meta = tool.meta.clone();
    assert_eq!(back, tool);
    // A tool without `_meta`, or with a `_meta.ui` that is no object.
    let bare = with_view(Tool::new("q", "d", JsonObject::new()));
    assert_eq!(
        serde_json::to_value(&bare.meta).unwrap_or_default(),
        json!({"ui": {"resourceUri": VIEW_URI}, RESOURCE_URI_META_KEY: VIEW_URI})
    );
    // Old versions lose it with the rest of `_meta`.
    assert!(
        crate::version::tool_for_version(&bare, ProtocolVersion::V2025_03_26)
            .meta
            .is_none()
    );
    assert_eq!(
        crate::version::tool_for_version(&bare, ProtocolVersion::V2025_06_18),
        bare
    );
}

#[test]
fn the_app_only_tool_is_hidden_from_the_model() {
    let tool = serde_json::to_value(download_link_tool()).unwrap_or_default();
    assert_eq!(tool["name"], DOWNLOAD_LINK_TOOL);
    assert_eq!(tool["_meta"], json!({"ui": {"visibility": ["app"]}}));
    assert_eq!(tool["inputSchema"]["required"], json!(["uri"]));
    assert_eq!(tool["inputSchema"]["additionalProperties"], false);
    assert_eq!(tool["outputSchema"]["required"], json!(["url", "expires_at"]));
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
}

mod rendering {
    use std::time::Duration;

    use dual_server::{Caller, CreateResponse, DualResponseServer};

    use super::*;

    fn server() -> DualResponseServer {
        server_builder().build().expect("valid configuration")
    }

    async fn create(server: &DualResponseServer, owner: &str) -> dual_core::DualResponse {
        server
            .create_response(
                CreateResponse::new("numbers", json!({"n": 40}))
                    .owner(owner)
                    .expiration(Duration::from_secs(60)),
            )
            .await
            .expect("created")
    }

    #[tokio::test]
    async fn the_default_leaves_out_only_the_resource_link() {
        let server = server();
        let response = create(&server, "alice").await;
        let alice = Caller::owner("alice");
        for version in ProtocolVersion::ALL {
            let render = RenderOptions::new(version);
            let plain = crate::tool_result::to_call_tool_result(&response, &render);
            let apps = apps_tool_result(&server, &alice, &response, &render, &AppsOptions::new()).await;
            let mut expected = plain.clone();
            expected
                .content
                .retain(|block| block.as_resource_link().is_none());
            assert_eq!(
                serde_json::to_string(&apps).unwrap_or_default(),
                serde_json::to_string(&expected).unwrap_or_default(),
                "{version:?}"
            );
            assert!(text(&apps).contains(&response.uri), "the URI stays in the text");
            assert_eq!(apps.structured_content, plain.structured_content);
            // Keeping the block is the plain result, byte for byte.
            let kept = apps_tool_result(
                &server,
                &alice,
                &response,
                &render,
                &AppsOptions::new().resource_link(true),
            )
            .await;
            assert_eq!(
                serde_json::to_string(&kept).unwrap_or_default(),
                serde_json::to_string(&plain).unwrap_or_default()
            );
        }
    }

    #[tokio::test]
    async fn the_download_link_line_is_minted_for_the_same_caller() {
        let server = server();
        let response = create(&server, "alice").await;
        let render = RenderOptions::default();
        let options = AppsOptions::new().download_link(true);
        let alice = Caller::owner("alice");
        let result = apps_tool_result(&server, &alice, &response, &render, &options).await;
        let summary = text(&result);
        let line = summary.lines().last().unwrap_or_default();
        let prefix = format!(
            "http://127.0.0.1:1/resources/{}/data?format=csv&expires=",
            response.id
        );
        assert!(
            line.starts_with("Download every row as CSV (the link works until "),
            "{line}"
        );
        assert!(line.contains(&prefix) && line.contains("&token="), "{line}");
        // Another caller gets no link for alice's result.
        let mallory =
            apps_tool_result(&server, &Caller::owner("mallory"), &response, &render, &options).await;
        assert!(
            !text(&mallory).contains("Download every row"),
            "{}",
            text(&mallory)
        );
        // A pending result has nothing to download yet.
        let mut pending = response.clone();
        pending.status = dual_core::status::ResourceStatus::Pending;
        let result = apps_tool_result(&server, &alice, &pending, &render, &options).await;
        assert!(!text(&result).contains("Download every row"));
    }

    #[tokio::test]
    async fn without_the_resource_link_no_sample_row_is_lost() {
        let server = server();
        let apps = apps_tool_result(
            &server,
            &Caller::owner("alice"),
            &sample_response(),
            &RenderOptions::default(),
            &AppsOptions::new(),
        )
        .await;
        assert_eq!(apps.content.len(), 2);
        assert!(apps.content.iter().all(|block| block.as_text().is_some()));
    }
}
