//! dual-rmcp's client side, `parse_call_tool_result`: arbitrary JSON deserialised as an rmcp
//! `CallToolResult` (as an MCP client receives it), then recognised as a dual response. It agrees with
//! dual-client's `parse` of the same result, and an error result is never a dual response.

#![no_main]

use std::sync::LazyLock;

use dual_client::DualResponseClient;
use dual_rmcp::client::parse_call_tool_result;
use dual_rmcp::rmcp::model::CallToolResult;
use libfuzzer_sys::fuzz_target;

static CLIENT: LazyLock<DualResponseClient> = LazyLock::new(|| {
    DualResponseClient::builder()
        .base_url("https://api.example.com/resources")
        .build()
        .expect("a valid base URL")
});

fuzz_target!(|data: &[u8]| {
    let Ok(result) = serde_json::from_slice::<CallToolResult>(data) else {
        return;
    };
    let parsed = parse_call_tool_result(&result, &CLIENT);
    if result.is_error == Some(true) {
        assert!(parsed.is_none(), "an error result is not a dual response");
        return;
    }
    let value = serde_json::to_value(&result).expect("a CallToolResult serialises");
    assert_eq!(parsed.is_some(), CLIENT.parse(&value).is_some());
    if let Some(parsed) = parsed {
        assert!(!parsed.resource_url().is_empty());
        let _ = (
            parsed.total_count(),
            parsed.sample().len(),
            parsed.columns().len(),
        );
    }
});
