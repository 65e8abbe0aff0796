//! Clean output (issue 42, item 6): a name and column aliases made from the model's SQL, with `ESC`
//! and a right-to-left override in them, and an executor message with a terminal escape, reach no
//! surface the model reads raw: the tool result's summary, `resource_link` and `structuredContent`,
//! `resources/list`, the `explore_result` prompt and the error result.
#![cfg(feature = "server")]

use dual_core::escape::is_hidden;
use dual_core::mcp::ProtocolVersion;
use dual_rmcp::tool_result::ErrorResultOptions;
use dual_server::{Caller, CreateResponse, DualResponseServer, ExecutorError, ServerError};
use dual_testkit::executor::{Paged, object};
use rmcp::model::CallToolResult;
use serde_json::json;

/// A name as the demo makes it from the model's SQL: `ESC[2J` in an alias, U+202E in a comment.
const NAME: &str = "SELECT id AS \"x\u{1b}[2J\" -- \u{202e}gnp.exe";
const NAME_ESCAPED: &str = r#"SELECT id AS "x\u{1b}[2J" -- \u{202e}gnp.exe"#;
const ALIAS: &str = "x\u{1b}[2J";
const ALIAS_ESCAPED: &str = r"x\u{1b}[2J";

fn server() -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .executor("hostile", Paged::new(|_, i| object(json!({ ALIAS: i }))))
        .without_sweeper()
        .without_snapshots()
        .build()
        .expect("valid configuration")
}

/// The text blocks and `resource_link` names of a tool result: what the model reads as text.
fn model_texts(result: &CallToolResult) -> Vec<String> {
    let value = serde_json::to_value(&result.content).expect("serialises");
    value
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|block| [&block["text"], &block["name"]])
        .filter_map(|field| field.as_str().map(str::to_owned))
        .collect()
}

fn assert_clean(text: &str, what: &str) {
    assert!(
        !text.chars().any(|c| c != '\n' && is_hidden(c)),
        "{what}: a control character reaches the model raw: {text:?}"
    );
}

#[tokio::test]
async fn names_and_aliases_from_the_sql_reach_the_model_escaped() {
    let server = server();
    let created = server
        .create_response(CreateResponse::new("hostile", json!({"n": 30})).name(NAME))
        .await
        .expect("created");
    assert_eq!(created.name, NAME_ESCAPED, "stored escaped");

    // The tool result: summary, table, resource_link and structuredContent.
    let result =
        dual_rmcp::tool_result::to_call_tool_result(&created, &dual_core::mcp::RenderOptions::default());
    let texts = model_texts(&result);
    for text in &texts {
        assert_clean(text, "a content block");
    }
    assert!(texts[0].starts_with(&format!("{NAME_ESCAPED}: ")), "{}", texts[0]);
    assert!(
        texts[1].starts_with(&format!("{ALIAS_ESCAPED}:integer")),
        "{}",
        texts[1]
    );
    assert_eq!(
        texts.last().map(String::as_str),
        Some(NAME_ESCAPED),
        "the resource_link"
    );
    let structured = result.structured_content.clone().unwrap_or_default();
    assert_eq!(structured["resource"]["name"], NAME_ESCAPED);

    // resources/list: the name and the column names of the description.
    let caller = Caller::anonymous();
    let listed = dual_rmcp::resources::list_resources(&server, &caller, None, 10, ProtocolVersion::LATEST)
        .await
        .expect("listed");
    let entry = listed
        .resources
        .iter()
        .find(|r| r.uri == created.uri)
        .expect("the result is listed");
    assert_eq!(entry.name, NAME_ESCAPED);
    let description = entry.description.clone().unwrap_or_default();
    assert!(description.contains(ALIAS_ESCAPED), "{description}");
    for text in dual_testkit::json::strings(&serde_json::to_value(&listed).expect("serialises")) {
        assert_clean(text, "resources/list");
    }

    // The explore_result prompt names the result and its columns.
    let prompt = dual_rmcp::prompts::Prompts::new("query")
        .get(
            &server,
            &caller,
            dual_rmcp::prompts::EXPLORE_RESULT_PROMPT,
            json!({"uri": created.uri}).as_object(),
        )
        .await
        .expect("the prompt");
    let prompt = serde_json::to_value(&prompt).expect("serialises");
    let texts = dual_testkit::json::strings(&prompt);
    for text in &texts {
        assert_clean(text, "the prompt");
    }
    let text = texts.join("\n");
    assert!(
        text.contains(NAME_ESCAPED) && text.contains(ALIAS_ESCAPED),
        "{text}"
    );
}

#[test]
fn an_executor_message_reaches_the_model_escaped_with_its_lines() {
    let error = ServerError::QueryExecutionFailed(ExecutorError::new(
        "near \"\u{1b}[2J\": syntax error\nLINE 1: SELECT \u{202e}x\r",
    ));
    let result = dual_rmcp::tool_result::server_error_result(&error, &ErrorResultOptions::default());
    let texts = model_texts(&result);
    assert_eq!(
        texts,
        [r#"The query failed: near "\u{1b}[2J": syntax error"#.to_owned()
            + "\n"
            + r"LINE 1: SELECT \u{202e}x\r"]
    );
    let argument =
        dual_rmcp::tool_result::error_result("unknown argument `\u{9b}2J`", &ErrorResultOptions::default());
    assert_eq!(model_texts(&argument), [r"unknown argument `\u{9b}2J`"]);
}
