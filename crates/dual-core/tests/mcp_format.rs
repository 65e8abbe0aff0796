//! MCP formatting: the tool result shape of docs/DESIGN.md §4 and its output schema.

use dual_core::mcp::{ContentBlock, ProtocolVersion, RenderOptions, TextFormat};
use dual_core::{Column, ColumnType, DualResponse, ResourceId, Row, mcp::output_schema};
use proptest::prelude::*;
use serde_json::{Value, json};
use time::OffsetDateTime;

fn validator() -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(&output_schema())
        .expect("the output schema is a valid JSON Schema")
}

fn response(sample: Vec<Row>, total_count: u64, expires: bool) -> DualResponse {
    let id = ResourceId::new();
    let executed_at = OffsetDateTime::from_unix_timestamp(1_768_473_000).expect("valid time");
    DualResponse {
        id,
        uri: format!("resource://{id}"),
        url: format!("https://api.example.com/resources/{id}"),
        name: "Institution Search Results".into(),
        columns: dual_core::column::infer_columns(&sample),
        sample: sample.into(),
        total_count,
        executed_at,
        expires_at: expires.then(|| executed_at + time::Duration::minutes(15)),
        status: dual_core::status::ResourceStatus::Ready,
        profile: dual_core::mcp::ResponseProfile::None,
    }
}

fn rows(value: Value) -> Vec<Row> {
    serde_json::from_value(value).expect("rows")
}

#[test]
fn tool_result_has_the_design_shape() {
    let sample = rows(json!([{"id": 1, "name": "Rutgers"}, {"id": 2, "name": "Princeton"}]));
    let r = response(sample.clone(), 847, true);
    let value = serde_json::to_value(r.tool_result()).expect("serialises");

    let content = value["content"].as_array().expect("content array");
    assert_eq!(content.len(), 3);
    assert_eq!(content[0]["type"], "text");
    assert_eq!(
        content[0]["text"],
        format!(
            "Institution Search Results: 847 rows in total, 2 shown below. The application fetches the \
             complete result from {uri} (expires 2026-01-15T10:45:00Z). To read more rows yourself, call \
             resources/read on {uri}?offset=2&limit=100 (optional &sort=column:asc|desc).",
            uri = r.uri
        )
    );
    assert_eq!(content[1]["type"], "text");
    assert_eq!(
        content[1]["text"], "id:integer|name:string\n1|Rutgers\n2|Princeton",
        "the table: typed header once, one line per row"
    );
    assert_eq!(
        content[2],
        json!({"type": "resource_link", "uri": r.uri, "name": "Institution Search Results",
               "mimeType": "application/json", "description": "847 rows"})
    );

    let sc = &value["structuredContent"];
    assert_eq!(sc["results"], json!(sample));
    assert_eq!(
        sc["resource"],
        json!({"uri": r.uri, "url": r.url, "name": "Institution Search Results", "mimeType": "application/json"})
    );
    assert_eq!(sc["metadata"]["total_count"], 847);
    assert_eq!(sc["metadata"]["sample_count"], 2);
    assert_eq!(
        sc["metadata"]["columns"],
        json!([{"name": "id", "type": "integer"}, {"name": "name", "type": "string"}])
    );
    assert_eq!(sc["metadata"]["executed_at"], "2026-01-15T10:30:00Z");
    assert_eq!(sc["metadata"]["expires_at"], "2026-01-15T10:45:00Z");
    assert!(validator().is_valid(sc));
}

#[test]
fn the_json_text_option_carries_structured_content() {
    let r = response(rows(json!([{"id": 1, "name": "Rutgers"}])), 847, true);
    let options = RenderOptions::default().with_text(TextFormat::Json);
    let value = serde_json::to_value(r.tool_result_with(&options)).expect("serialises");
    let text = value["content"][1]["text"].as_str().expect("text");
    assert!(!text.contains('\n'), "compact JSON");
    let embedded: Value = serde_json::from_str(text).expect("JSON text");
    assert_eq!(embedded, value["structuredContent"]);
}

#[test]
fn versions_before_2025_06_18_get_text_blocks_only() {
    let r = response(rows(json!([{"id": 1}])), 5, true);
    for version in ProtocolVersion::ALL {
        let result = r.tool_result_with(&RenderOptions::new(version));
        let value = serde_json::to_value(&result).expect("serialises");
        let types: Vec<&str> = value["content"]
            .as_array()
            .expect("content")
            .iter()
            .filter_map(|block| block["type"].as_str())
            .collect();
        if version >= ProtocolVersion::V2025_06_18 {
            assert_eq!(types, ["text", "text", "resource_link"], "{version}");
            assert!(value.get("structuredContent").is_some(), "{version}");
        } else {
            assert_eq!(types, ["text", "text"], "{version}");
            assert!(value.get("structuredContent").is_none(), "{version}");
            // The summary still names the link and how to read more.
            assert!(
                value["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .contains(&format!("{}?offset=1", r.uri))
            );
        }
    }
}

/// A name made from the model's SQL (`ESC` in a column alias, a right-to-left override in a
/// comment) reaches no block raw: the summary, the `resource_link`, `structuredContent` and its JSON
/// text all carry it escaped, in every protocol version.
#[test]
fn a_hostile_name_is_escaped_in_every_block() {
    let mut r = response(rows(json!([{"id": 1}])), 1, true);
    r.name = "SELECT 1 AS \"x\u{1b}[2J\" -- \u{202e}gnp.exe\r\n".into();
    let escaped = r#"SELECT 1 AS "x\u{1b}[2J" -- \u{202e}gnp.exe\r\n"#;
    for version in ProtocolVersion::ALL {
        for text in [TextFormat::Table, TextFormat::Json] {
            let options = RenderOptions::new(version).with_text(text);
            let value = serde_json::to_value(r.tool_result_with(&options)).expect("serialises");
            for string in dual_testkit::json::strings(&value) {
                // The table's rows are separated by line feeds; the JSON text holds the name JSON-escaped.
                assert!(
                    !string
                        .chars()
                        .any(|c| c != '\n' && dual_core::escape::is_hidden(c))
                        && !string.contains("\\u001b")
                        && !string.contains("\\u202e"),
                    "{version}: a raw control reaches the model: {string:?}"
                );
            }
            let summary = value["content"][0]["text"].as_str().unwrap_or_default();
            assert!(
                summary.starts_with(&format!("{escaped}: ")),
                "{version}: {summary}"
            );
            if version >= ProtocolVersion::V2025_06_18 {
                assert_eq!(value["content"][2]["name"], escaped, "{version}");
                assert_eq!(
                    value["structuredContent"]["resource"]["name"], escaped,
                    "{version}"
                );
            }
        }
    }
}

#[test]
fn wording_when_everything_or_nothing_is_shown() {
    let r = response(rows(json!([{"id": 1}])), 1, false);
    let summary = r.summary_text();
    assert!(
        summary.starts_with("Institution Search Results: all 1 row shown below."),
        "{summary}"
    );
    assert!(
        !summary.contains("resources/read") && !summary.contains("expires"),
        "{summary}"
    );
    let sc = serde_json::to_value(r.structured_content()).expect("serialises");
    assert_eq!(sc["metadata"]["expires_at"], Value::Null);
    assert!(validator().is_valid(&sc));
    let empty = response(vec![], 0, true);
    assert!(
        empty
            .summary_text()
            .starts_with("Institution Search Results: no rows.")
    );
}

#[test]
fn content_blocks_round_trip() {
    let r = response(rows(json!([{"id": 1}])), 1, true);
    let result = r.tool_result();
    let json = serde_json::to_string(&result).expect("serialises");
    let back: dual_core::mcp::ToolResult = serde_json::from_str(&json).expect("deserialises");
    assert_eq!(back, result);
    assert!(matches!(back.content[2], ContentBlock::ResourceLink { .. }));
}

#[test]
fn schema_is_an_object_at_the_root_and_rejects_wrong_shapes() {
    let schema = output_schema();
    assert_eq!(schema["type"], "object");
    let v = validator();
    let good = serde_json::to_value(response(vec![], 0, true).structured_content()).expect("serialises");
    assert!(v.is_valid(&good));
    for (pointer, bad) in [
        ("/metadata/total_count", json!(-1)),
        ("/metadata/executed_at", json!("yesterday")),
        ("/results", json!({"not": "an array"})),
        ("/metadata/columns", json!([{"name": "id", "type": "uuid"}])),
    ] {
        let mut broken = good.clone();
        *broken.pointer_mut(pointer).expect("pointer exists") = bad;
        assert!(!v.is_valid(&broken), "{pointer} should be rejected");
    }
    let mut missing = good;
    missing.as_object_mut().expect("object").remove("resource");
    assert!(!v.is_valid(&missing));
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1e12f64..1e12).prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..3).prop_map(|m| json!(m)),
        ]
    })
}

fn arb_rows() -> impl Strategy<Value = Vec<Row>> {
    prop::collection::vec(
        prop::collection::btree_map("[a-z_]{1,6}", arb_value(), 0..5),
        0..6,
    )
    .prop_map(|rows| rows.into_iter().map(|m| m.into_iter().collect()).collect())
}

proptest! {
    #[test]
    fn every_built_tool_result_validates(sample in arb_rows(), total in 0u64..u64::MAX, expires in any::<bool>()) {
        let r = response(sample, total, expires);
        let value = serde_json::to_value(r.tool_result()).expect("serialises");
        let sc = &value["structuredContent"];
        prop_assert!(validator().is_valid(sc), "{}", sc);
        prop_assert_eq!(sc["metadata"]["sample_count"].as_u64(), Some(r.sample.len() as u64));
        let json = serde_json::to_value(r.tool_result_with(&RenderOptions::default().with_text(TextFormat::Json)))
            .expect("serialises");
        let text = json["content"][1]["text"].as_str().unwrap_or_default();
        let embedded: Value = serde_json::from_str(text).expect("JSON text");
        prop_assert_eq!(&embedded, sc);
        // The table has the header and one line per row.
        let table = value["content"][1]["text"].as_str().unwrap_or_default();
        prop_assert_eq!(table.split('\n').count(), r.sample.len() + 1);
        for column in &r.columns {
            prop_assert!(ColumnType::ALL.contains(&column.column_type));
        }
        let _: Vec<Column> = r.columns;
    }
}
