//! The router's own answers: JSON errors in the REST API's shape
//! (`{"error": CODE, "message": TEXT, "retryable": BOOL}`), and a JSON-RPC error for MCP.

use std::time::Duration;

use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

use super::Body;

/// `Retry-After` of a refused `initialize`, in seconds.
const SESSIONS_RETRY_AFTER_SECS: u32 = 5;

/// `404`: neither `/mcp` nor `/resources`.
pub(super) fn not_found() -> Response<Body> {
    let message = "Not found: MCP is at /mcp, the REST API under /resources";
    json_response(StatusCode::NOT_FOUND, &error("not_found", message, false))
}

/// `401` with the `WWW-Authenticate` header `challenge` (RFC 6750) and `message`.
pub(super) fn unauthorized(challenge: &'static str, message: &str) -> Response<Body> {
    let mut response = json_response(StatusCode::UNAUTHORIZED, &error("unauthorized", message, false));
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
    response
}

/// `408`, closing the connection: the request body did not arrive within `limit`.
pub(super) fn request_timeout(limit: Duration) -> Response<Body> {
    let message = format!("the request body did not arrive within {} s", limit.as_secs_f64());
    let mut response = json_response(
        StatusCode::REQUEST_TIMEOUT,
        &error("request_timeout", &message, true),
    );
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// `503` with `Retry-After` and a JSON-RPC error: no new MCP session now.
pub(super) fn too_many_sessions(cap: usize) -> Response<Body> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": format!("too many MCP sessions (cap {cap}); retry later"),
            "data": {"error": "overloaded", "retryable": true},
        },
    });
    let mut response = json_response(StatusCode::SERVICE_UNAVAILABLE, &body);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(SESSIONS_RETRY_AFTER_SECS));
    response
}

/// A JSON-RPC error response without an id (the request could not be read far enough to have one).
pub(super) fn jsonrpc_error(status: StatusCode, code: i64, message: &str) -> Response<Body> {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    json_response(status, &body)
}

/// `200` with the JSON-RPC error `error` answering the request `id`.
pub(super) fn jsonrpc_answer(id: &rmcp::model::RequestId, error: &rmcp::model::ErrorData) -> Response<Body> {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
    json_response(StatusCode::OK, &body)
}

/// `413` for an MCP body over `limit` bytes.
pub(super) fn mcp_payload_too_large(limit: usize) -> Response<Body> {
    jsonrpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        -32600,
        &format!("the request body exceeds {limit} bytes"),
    )
}

/// `404` for `/mcp` when MCP is served on stdio, not over HTTP.
pub(super) fn mcp_not_served() -> Response<Body> {
    let message =
        "Not found: this server speaks MCP on stdio; only the REST API under /resources is served over HTTP";
    json_response(StatusCode::NOT_FOUND, &error("not_found", message, false))
}

/// The REST API's error body.
pub(super) fn error(code: &str, message: &str, retryable: bool) -> Value {
    json!({"error": code, "message": message, "retryable": retryable})
}

/// `status` with the JSON `body`.
pub(super) fn json_response(status: StatusCode, body: &Value) -> Response<Body> {
    json_text_response(status, body.to_string())
}

/// `status` with `text`, which is JSON.
pub(super) fn json_text_response(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::from(text).map_err(|never| match never {}).boxed_unsync());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
