//! Protocol errors rmcp would otherwise get wrong: a standard method whose params do not parse.

use rmcp::model::{CallToolRequestParams, CustomRequest, ErrorCode, ErrorData, ReadResourceRequestParams};
use serde::de::DeserializeOwned;
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

/// The error for a request that reached the custom-request hook: `-32602 invalid params` naming
/// what is wrong for a standard method, `-32601 method not found` for anything else.
pub(super) fn custom_request_error(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    if !STANDARD_METHODS.contains(&method) {
        return ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method.to_owned(), None);
    }
    let params = request.params.clone().unwrap_or(Value::Null);
    let reason = match method {
        "tools/call" => parse_error::<CallToolRequestParams>(params),
        "resources/read" => parse_error::<ReadResourceRequestParams>(params),
        _ => None,
    }
    .unwrap_or_else(|| "the params do not match the method".to_owned());
    ErrorData::invalid_params(
        format!("invalid params for `{method}`: {reason}"),
        Some(json!({"method": method})),
    )
}

fn parse_error<T: DeserializeOwned>(params: Value) -> Option<String> {
    serde_json::from_value::<T>(params)
        .err()
        .map(|error| error.to_string())
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
