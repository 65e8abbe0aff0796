//! The demo's MCP tool arguments (`DemoMcp::request`, which every `tools/call` goes through): arbitrary
//! JSON as the arguments of `query`, `search_institutions` and an unknown tool, anonymous and with an
//! owner. Arguments are either a request that says what was asked or an `isError` result naming the
//! argument; never a panic.
//!
//! Input: one byte choosing the tool, then the JSON arguments.

#![no_main]

use dual_response_server::ipeds::mcp_server::{DemoMcp, QUERY_TOOL, SEARCH_TOOL};
use dual_rmcp::rmcp::model::JsonObject;
use std::sync::LazyLock;

use dual_server::{Caller, DualResponseServer};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// The handler, built once: parsing arguments reads only its configuration (the error-text cap), so
/// its server has no executors and no sweeper.
static MCP: LazyLock<DemoMcp> = LazyLock::new(|| {
    let server = DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .without_sweeper()
        .build()
        .expect("a server without a sweeper builds outside a runtime");
    DemoMcp::new(server)
});

fuzz_target!(|data: &[u8]| {
    let Some((&choice, json)) = data.split_first() else {
        return;
    };
    let arguments: JsonObject = match serde_json::from_slice::<Value>(json) {
        Ok(Value::Object(map)) => map,
        Ok(_) | Err(_) => return,
    };
    let tool = match choice % 3 {
        0 => QUERY_TOOL,
        1 => SEARCH_TOOL,
        _ => "drop_tables",
    };
    for caller in [Caller::anonymous(), Caller::owner("fuzz")] {
        let outcome = MCP.request(tool, &arguments, &caller);
        match outcome {
            Err(error) => assert!(tool != QUERY_TOOL && tool != SEARCH_TOOL, "{error:?}"),
            Ok(Err(result)) => assert_eq!(result.is_error, Some(true)),
            Ok(Ok(request)) => {
                let params = &request.query().params;
                if tool == QUERY_TOOL {
                    assert!(arguments.get("sql").is_some_and(Value::is_string));
                    assert_eq!(
                        params.get("sql"),
                        arguments.get("sql"),
                        "the statement asked for, unchanged"
                    );
                }
            }
        }
    }
});
