//! Protocol errors rmcp would otherwise get wrong: a standard method whose params do not parse.
//!
//! rmcp parses a request of a standard method (`tools/call`, `resources/read`, …) whose params do not
//! match that method as a *custom* request, and a handler without `on_custom_request` answers it
//! `-32601 method not found`. JSON-RPC asks for `-32602 invalid params`. [`DatabaseMcp`](crate::DatabaseMcp)
//! answers with [`custom_request_error`]; a handler of your own does the same in its
//! `on_custom_request`:
//!
//! ```
//! use rmcp::model::{CustomRequest, ErrorCode};
//! use serde_json::json;
//!
//! let request = CustomRequest::new("tools/call", Some(json!({"name": 5})));
//! let error = dual_rmcp::protocol::custom_request_error(&request);
//! assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
//! ```

use rmcp::model::{CallToolRequestParams, CustomRequest, ErrorCode, ErrorData, ReadResourceRequestParams};
use serde_json::{Value, json};

/// Standard client methods; rmcp turns one of them into a custom request only when its params do
/// not parse as that method's params.
const STANDARD_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "subscriptions/listen",
];

/// Whether `method` is a method of the MCP specification a client sends.
#[must_use]
pub fn is_standard_method(method: &str) -> bool {
    STANDARD_METHODS.contains(&method)
}

/// The error for a request that reached the custom-request hook: `-32602 invalid params` naming
/// what is wrong for a standard method, `-32601 method not found` for anything else.
#[must_use]
pub fn custom_request_error(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    if !is_standard_method(method) {
        return ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method.to_owned(), None);
    }
    let params = request.params.clone().unwrap_or(Value::Null);
    let reason = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params)
            .err()
            .map(|error| error.to_string()),
        "resources/read" => serde_json::from_value::<ReadResourceRequestParams>(params)
            .err()
            .map(|error| error.to_string()),
        _ => None,
    }
    .unwrap_or_else(|| "the params do not match the method".to_owned());
    ErrorData::invalid_params(
        format!("invalid params for `{method}`: {reason}"),
        Some(json!({"method": method})),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_params_of_standard_methods_are_invalid_params() {
        let error = custom_request_error(&CustomRequest::new("tools/call", Some(json!({"name": 5}))));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(
            error.message.starts_with("invalid params for `tools/call`"),
            "{}",
            error.message
        );
        let error = custom_request_error(&CustomRequest::new("resources/read", Some(json!({}))));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(error.message.contains("uri"), "{}", error.message);
        let error = custom_request_error(&CustomRequest::new(
            "subscriptions/listen",
            Some(json!({"resourceSubscriptions": 5})),
        ));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        let error = custom_request_error(&CustomRequest::new("nope/nothing", None));
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
    }
}
