//! Every shape docs/DESIGN.md §6 lists, from fixture files.

use dual_client::{ClientErrorCode, ColumnType, DualResponseClient, ParsedDualResponse};
use dual_core::mcp::StructuredContent;
use dual_core::{Column, DualResponse, ResourceId, status::ResourceStatus};
use proptest::prelude::*;
use serde_json::{Value, json};
use time::macros::datetime;

const ID: &str = "01JHF3K4Q5R6S7T8V9W0XYZABC";
const URL: &str = "https://api.example.com/resources/01JHF3K4Q5R6S7T8V9W0XYZABC";

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn parse(name: &str) -> ParsedDualResponse {
    parse_value(&fixture(name), name)
}

fn parse_value(value: &Value, what: &str) -> ParsedDualResponse {
    DualResponseClient::new()
        .parse_strict(value)
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// The message of `parse_strict`'s error for `value`, empty if it parses.
fn strict_error(client: &DualResponseClient, value: &Value) -> String {
    client
        .parse_strict(value)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

/// What every fixture of our own shape must yield; `what` names it in failures.
fn assert_ours(parsed: &ParsedDualResponse, what: &str) {
    assert_eq!(parsed.total_count(), Some(847), "{what}");
    assert_eq!(parsed.sample().len(), 3, "{what}");
    assert_eq!(parsed.sample()[0]["name"], "Rutgers University", "{what}");
    assert_eq!(
        parsed.resource_uri(),
        Some(format!("resource://{ID}").as_str()),
        "{what}"
    );
    assert_eq!(parsed.resource_url(), URL, "{what}");
    assert_eq!(parsed.name(), Some("Institution Search Results"), "{what}");
    assert_eq!(
        parsed.columns(),
        [
            Column::new("id", ColumnType::Integer),
            Column::new("name", ColumnType::String),
            Column::new("state", ColumnType::String),
            Column::new("enrollment", ColumnType::Integer),
            Column::new("public", ColumnType::Boolean),
        ],
        "{what}"
    );
    assert_eq!(
        parsed.executed_at(),
        Some(datetime!(2026-01-15 10:30:00 UTC)),
        "{what}"
    );
    assert_eq!(
        parsed.expires_at(),
        Some(datetime!(2026-01-15 10:45:00 UTC)),
        "{what}"
    );
    assert!(
        parsed.is_expired(),
        "{what}: expired in 2026-01 by any clock running these tests"
    );
}

/// Our own shape, in every wrapper a tool result arrives in.
#[test]
fn our_shape_in_every_wrapper() {
    let content_only = fixture("content_only.json");
    let agent_output = fixture("agent_output_tool_result.json");
    assert!(agent_output["output"].is_string());
    for (what, value) in [
        ("a whole tool result", fixture("tool_result.json")),
        ("structuredContent alone", fixture("structured_content.json")),
        (
            "a content array with the JSON in a text block",
            content_only.clone(),
        ),
        // As some SDKs hand over `content` alone.
        ("the bare content array", content_only["content"].clone()),
        ("an OpenAI Agents output item", fixture("openai_agents_item.json")),
        (
            "agent output holding a whole tool result as a string",
            agent_output.clone(),
        ),
        ("the agent output string alone", agent_output["output"].clone()),
    ] {
        assert_ours(&parse_value(&value, what), what);
    }
}

#[test]
fn reference_implementation_output() {
    let parsed = parse("reference_output.json");
    assert_reference(&parsed);
}

#[test]
fn reference_implementation_tool_result_with_pretty_json_text() {
    let value = fixture("reference_tool_result.json");
    let text = value["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("\n  "), "the fixture's text is pretty-printed");
    assert_reference(&parse("reference_tool_result.json"));
}

fn assert_reference(parsed: &ParsedDualResponse) {
    let guid = "3f1c9a52-7d4e-4b8a-9c61-2e5f8d0b7a14";
    assert_eq!(parsed.total_count(), Some(217));
    assert_eq!(parsed.sample().len(), 2);
    assert_eq!(
        parsed.resource_url(),
        format!("http://localhost:3000/resources/{guid}")
    );
    assert_eq!(parsed.resource_uri(), Some(format!("resource://{guid}").as_str()));
    assert_eq!(parsed.expires_at(), None);
    assert!(!parsed.is_expired());
    assert_eq!(parsed.executed_at(), Some(datetime!(2026-01-15 10:30:00.123 UTC)));
    // No declared columns: inferred from the sample.
    let names: Vec<_> = parsed.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "name", "state", "enrollment"]);
    assert_eq!(parsed.columns()[3].column_type, ColumnType::Integer);
}

#[test]
fn lone_resource_link_needs_a_base_url() {
    for name in ["resource_link.json", "resource_link_content.json"] {
        let value = fixture(name);
        let error = DualResponseClient::new().parse_strict(&value).err();
        assert!(
            error
                .as_ref()
                .is_some_and(|e| e.is_parse() && e.message().contains("base URL")),
            "{name}: {error:?}"
        );
        assert!(DualResponseClient::new().parse(&value).is_none());

        let client = DualResponseClient::builder()
            .base_url("http://127.0.0.1:9/api/resources/")
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let parsed = client
            .parse_strict(&value)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            parsed.resource_url(),
            format!("http://127.0.0.1:9/api/resources/{ID}")
        );
        assert_eq!(parsed.resource_uri(), Some(format!("resource://{ID}").as_str()));
        assert_eq!(parsed.name(), Some("Institution Search Results"));
        // Decision: a link carries no count, so it is unknown until `load_metadata`.
        assert_eq!(parsed.total_count(), None);
        assert!(parsed.sample().is_empty() && parsed.columns().is_empty());
        assert_eq!((parsed.executed_at(), parsed.expires_at()), (None, None));
    }
}

#[test]
fn base_url_overrides_the_url_in_the_result() {
    let client = DualResponseClient::builder()
        .base_url("http://internal:8080/resources")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let parsed = client
        .parse_strict(&fixture("tool_result.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        parsed.resource_url(),
        format!("http://internal:8080/resources/{ID}")
    );
    let reference = client
        .parse_strict(&fixture("reference_output.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        reference.resource_url(),
        "http://internal:8080/resources/3f1c9a52-7d4e-4b8a-9c61-2e5f8d0b7a14"
    );
}

#[test]
fn other_tool_results_are_not_dual_responses() {
    let client = DualResponseClient::new();
    for value in [
        fixture("not_dual.json"),
        json!(null),
        json!(42),
        json!("just text"),
        json!("{not json"),
        json!([]),
        json!({}),
        json!({"content": []}),
        json!({"resource": {"uri": "file:///etc/passwd", "text": "…"}, "type": "resource"}),
    ] {
        assert!(client.parse(&value).is_none(), "{value}");
        let error = client.parse_strict(&value).err();
        assert_eq!(error.map(|e| e.code()), Some(ClientErrorCode::Parse), "{value}");
    }
}

#[test]
fn malformed_dual_responses_say_what_is_wrong() {
    let client = DualResponseClient::new();
    let value = fixture("malformed_total_count.json");
    assert!(client.parse(&value).is_none());
    let error = strict_error(&client, &value);
    assert!(
        error.starts_with("PARSE_ERROR") && error.contains("metadata.total_count"),
        "{error}"
    );

    // A structured result whose URL is not http(s).
    let mut bad_url = fixture("structured_content.json");
    bad_url["resource"]["url"] = json!("ftp://x/y");
    let error = strict_error(&client, &bad_url);
    assert!(error.contains("http(s)"), "{error}");

    // A text block cut off in the middle (agent SDKs truncate long tool outputs).
    let text = fixture("structured_content.json").to_string();
    let cut = json!({"content": [{"type": "text", "text": &text[..text.len() - 20]}]});
    let error = strict_error(&client, &cut);
    assert!(error.contains("truncated"), "{error}");
}

#[test]
fn parse_str_and_from_structured() {
    let client = DualResponseClient::new();
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/tool_result.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_default();
    assert_ours(
        &client.parse_str(&text).unwrap_or_else(|e| panic!("{e}")),
        "parse_str",
    );
    assert!(client.parse_str("{oops").is_err_and(|e| e.is_parse()));

    let structured: StructuredContent =
        serde_json::from_value(fixture("structured_content.json")).unwrap_or_else(|e| panic!("{e}"));
    assert_ours(
        &client
            .from_structured(&structured)
            .unwrap_or_else(|e| panic!("{e}")),
        "from_structured",
    );
}

#[test]
fn the_whole_result_fixture_is_what_dual_core_builds() {
    // Guards the fixtures against drifting from the real shape.
    let structured = fixture("structured_content.json");
    let sample = serde_json::from_value(structured["results"].clone()).unwrap_or_default();
    let columns: Vec<Column> =
        serde_json::from_value(structured["metadata"]["columns"].clone()).unwrap_or_default();
    let response = DualResponse {
        id: ID.parse().unwrap_or_default(),
        uri: format!("resource://{ID}"),
        url: URL.to_owned(),
        name: "Institution Search Results".to_owned(),
        sample,
        total_count: 847,
        columns,
        executed_at: datetime!(2026-01-15 10:30:00 UTC),
        expires_at: Some(datetime!(2026-01-15 10:45:00 UTC)),
        status: ResourceStatus::Ready,
        profile: dual_core::mcp::ResponseProfile::None,
    };
    let built = serde_json::to_value(response.tool_result()).unwrap_or_default();
    assert_eq!(built, fixture("tool_result.json"));
}

#[test]
fn debug_output_holds_no_row_data() {
    let parsed = parse("tool_result.json");
    let debug = format!("{parsed:?}");
    assert!(
        !debug.contains("Rutgers") && debug.contains("sample_len: 3"),
        "{debug}"
    );
}

fn arb_row() -> impl Strategy<Value = dual_core::Row> {
    proptest::collection::btree_map(
        "[a-z][a-z_]{0,8}",
        prop_oneof![
            any::<i64>().prop_map(Value::from),
            any::<bool>().prop_map(Value::from),
            "[ -~\\n\"\\\\é]{0,12}".prop_map(Value::from),
            Just(Value::Null),
        ],
        1..5,
    )
    .prop_map(|map| map.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever dual-core builds parses back, from the whole result, from `content` alone (with the
    /// JSON text option) and from an agent wrapper, to the same sample, count and expiry.
    #[test]
    fn dual_core_results_round_trip(sample in proptest::collection::vec(arb_row(), 0..6), total in 0u64..1_000_000,
                                    pinned in any::<bool>(), pending in any::<bool>()) {
        let id = ResourceId::new();
        let response = DualResponse {
            id,
            uri: format!("resource://{id}"),
            url: format!("http://127.0.0.1:1/resources/{id}"),
            name: "Round \"trip\"".to_owned(),
            columns: dual_core::column::infer_columns(&sample),
            sample: sample.into(),
            total_count: total,
            executed_at: datetime!(2026-01-15 10:30:00 UTC),
            expires_at: (!pinned).then_some(datetime!(2026-01-15 10:45:00 UTC)),
            status: if pending { ResourceStatus::Pending } else { ResourceStatus::Ready },
            profile: dual_core::mcp::ResponseProfile::None,
        };
        let whole = serde_json::to_value(response.tool_result()).unwrap_or_default();
        // `content` alone carries the JSON with the JSON text option (the default is a table).
        let options = dual_core::mcp::RenderOptions::default().with_text(dual_core::mcp::TextFormat::Json);
        let json_text = serde_json::to_value(response.tool_result_with(&options)).unwrap_or_default();
        let client = DualResponseClient::new();
        let wrapped = json!({"output": whole.to_string()});
        for value in [whole.clone(), json_text["content"].clone(), wrapped] {
            let parsed = client.parse_strict(&value);
            prop_assert!(parsed.is_ok(), "{:?}", parsed.err());
            let parsed = parsed.unwrap_or_else(|_| unreachable!());
            prop_assert_eq!(parsed.sample(), &response.sample[..]);
            prop_assert_eq!(parsed.total_count(), Some(total));
            prop_assert_eq!(parsed.expires_at(), response.expires_at);
            prop_assert_eq!(parsed.columns(), response.columns.as_slice());
            prop_assert_eq!(parsed.resource_url(), response.url.as_str());
            prop_assert_eq!(parsed.status(), response.status);
        }
    }

    /// Arbitrary JSON never panics the parser.
    #[test]
    fn arbitrary_json_never_panics(text in "[\\[\\]{}\",:a-z0-9 ]{0,64}") {
        if let Ok(value) = serde_json::from_str::<Value>(&text) {
            let _ = DualResponseClient::new().parse(&value);
            let _ = DualResponseClient::new().parse(&Value::String(text));
        }
    }
}
