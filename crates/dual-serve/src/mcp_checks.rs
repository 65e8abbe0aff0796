//! Answers the MCP endpoint gives in front of rmcp where rmcp's would be wrong (see the README's known
//! issues): a POST body that is not JSON is a JSON-RPC parse error (`-32700`, HTTP 400), a JSON body
//! that is no JSON-RPC message an invalid request (`-32600`, HTTP 400), rather than rmcp's 415; a
//! request of a standard method whose params do not parse is `-32602 invalid params` (rmcp would hand
//! it to the handler as a custom request, and most handlers answer `-32601 method not found`); and
//! `DELETE` of a session that does not exist is 404 rather than 202.

use http::{HeaderMap, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};

use super::{Body, reply};
use crate::auth::ScopeGate;

/// The method of a JSON-RPC message (a response has none).
#[derive(serde::Deserialize)]
struct Method {
    #[serde(default)]
    method: Option<String>,
}

/// The request body rmcp is given.
pub(super) type McpBody = http_body_util::combinators::UnsyncBoxBody<bytes::Bytes, std::io::Error>;

/// The largest MCP request body, as rmcp's own default (4 MiB); rmcp is configured with the same.
pub(super) const MAX_MCP_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Reads a JSON POST body in full and checks it is a JSON-RPC message, so that rmcp sees only
/// messages it can parse. Other requests (and POSTs that are not `application/json`, which rmcp
/// answers 415 as the transport requires) pass through untouched.
pub(super) async fn checked_post(request: Request<McpBody>) -> Result<Request<McpBody>, Response<Body>> {
    let (parts, body) = request.into_parts();
    let bytes = match Limited::new(body, MAX_MCP_BODY_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => {
            return Err(reply::mcp_payload_too_large(MAX_MCP_BODY_BYTES));
        }
        // A body that did not arrive: the guard answers 408 when it was the deadline.
        Err(_) => {
            return Err(reply::jsonrpc_error(
                StatusCode::BAD_REQUEST,
                -32700,
                "Parse error: the request body could not be read",
            ));
        }
    };
    if let Some(error) = jsonrpc_problem(&bytes) {
        return Err(error);
    }
    // With OAuth scopes: `tools/call` and `resources/read` need theirs (403 insufficient_scope). A
    // message whose method cannot be read unambiguously (a repeated `method`) is refused.
    if let Some(gate) = parts.extensions.get::<ScopeGate>() {
        match serde_json::from_slice::<Method>(&bytes) {
            Ok(Method { method: Some(method) }) => {
                if let Some(refusal) = gate.refusal(&method) {
                    return Err(refusal);
                }
            }
            Ok(Method { method: None }) => {}
            Err(_) => {
                return Err(reply::jsonrpc_error(
                    StatusCode::BAD_REQUEST,
                    -32600,
                    "Invalid Request: the message's method cannot be read",
                ));
            }
        }
    }
    Ok(Request::from_parts(
        parts,
        Full::new(bytes).map_err(|never| match never {}).boxed_unsync(),
    ))
}

/// Whether `headers` declare a JSON body.
pub(super) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        })
}

/// The error for a body that is not JSON, or not a JSON-RPC message; `None` when rmcp can take it.
fn jsonrpc_problem(body: &[u8]) -> Option<Response<Body>> {
    if let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        return Some(reply::jsonrpc_error(
            StatusCode::BAD_REQUEST,
            -32700,
            &format!("Parse error: the body is not JSON ({error})"),
        ));
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(body) {
        Err(_) => Some(reply::jsonrpc_error(
            StatusCode::BAD_REQUEST,
            -32600,
            "Invalid Request: the body is not a JSON-RPC 2.0 request, notification or response",
        )),
        Ok(JsonRpcMessage::Request(request)) => match &request.request {
            ClientRequest::CustomRequest(custom)
                if dual_rmcp::protocol::is_standard_method(&custom.method) =>
            {
                let error = dual_rmcp::protocol::custom_request_error(custom);
                Some(reply::jsonrpc_answer(&request.id, &error))
            }
            _ => None,
        },
        Ok(_) => None,
    }
}

/// `404` for a `DELETE` naming a session that does not exist (MCP transports: a server MUST answer
/// requests with an unknown or terminated session id with 404).
pub(super) fn unknown_session() -> Response<Body> {
    reply::jsonrpc_error(StatusCode::NOT_FOUND, -32001, "Session not found")
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn error_of(body: &[u8]) -> Option<(StatusCode, serde_json::Value)> {
        let response = jsonrpc_problem(body)?;
        let status = response.status();
        let bytes = response.into_body().collect().await.ok()?.to_bytes();
        Some((status, serde_json::from_slice(&bytes).ok()?))
    }

    #[tokio::test]
    async fn bodies_that_are_not_json_rpc_are_told_apart() {
        let (status, body) = error_of(b"this is not json").await.expect("an error");
        assert_eq!(
            (status, body["error"]["code"].as_i64()),
            (StatusCode::BAD_REQUEST, Some(-32700))
        );
        assert_eq!(body["id"], serde_json::Value::Null);
        let (status, body) = error_of(br#"{"hello": "world"}"#).await.expect("an error");
        assert_eq!(
            (status, body["error"]["code"].as_i64()),
            (StatusCode::BAD_REQUEST, Some(-32600))
        );
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(error_of(ping).await.is_none());
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#;
        let (status, body) = error_of(call).await.expect("an error");
        assert_eq!(
            (status, body["error"]["code"].as_i64(), body["id"].as_i64()),
            (StatusCode::OK, Some(-32602), Some(7))
        );
        let custom = br#"{"jsonrpc":"2.0","id":8,"method":"vendor/thing","params":{}}"#;
        assert!(
            error_of(custom).await.is_none(),
            "a custom method is the handler's"
        );
    }
}
