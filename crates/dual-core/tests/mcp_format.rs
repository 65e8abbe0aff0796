//! MCP formatting: the tool result shape of DESIGN §4 and its output schema.

use dual_core::mcp::ContentBlock;
use dual_core::{Column, ColumnType, DualResponse, ResourceId, Row, output_schema};
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
        columns: dual_core::infer_columns(&sample),
        sample: sample.into(),
        total_count,
        executed_at,
        expires_at: expires.then(|| executed_at + time::Duration::minutes(15)),
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
            "Found 847 results for \"Institution Search Results\"; 2 sample rows below. Full data: {}",
            r.uri
        )
    );
    assert_eq!(content[1]["type"], "text");
    let embedded: Value =
        serde_json::from_str(content[1]["text"].as_str().expect("text")).expect("JSON text");
    assert_eq!(
        embedded, value["structuredContent"],
        "the text block carries structuredContent"
    );
    assert!(
        !content[1]["text"].as_str().unwrap_or_default().contains('\n'),
        "compact JSON"
    );
    assert_eq!(
        content[2],
        json!({"type": "resource_link", "uri": r.uri, "name": "Institution Search Results",
               "mimeType": "application/json", "description": "847 rows; fetch via REST"})
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
fn singular_wording_and_pinned_expiry() {
    let r = response(rows(json!([{"id": 1}])), 1, false);
    assert!(
        r.summary_text()
            .starts_with("Found 1 result for \"Institution Search Results\"; 1 sample row below.")
    );
    let sc = serde_json::to_value(r.structured_content()).expect("serialises");
    assert_eq!(sc["metadata"]["expires_at"], Value::Null);
    assert!(validator().is_valid(&sc));
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
        let text = value["content"][1]["text"].as_str().unwrap_or_default();
        let embedded: Value = serde_json::from_str(text).expect("JSON text");
        prop_assert_eq!(&embedded, sc);
        for column in &r.columns {
            prop_assert!(ColumnType::ALL.contains(&column.column_type));
        }
        let _: Vec<Column> = r.columns;
    }
}
