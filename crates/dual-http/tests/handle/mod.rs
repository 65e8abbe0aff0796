//! Requests through `DualHttp::handle`, no sockets, and their bodies: shared by the handler, arrow and
//! export tests.
#![allow(dead_code, unreachable_pub)]

use bytes::Bytes;
use dual_http::{DualHttp, ResponseBody};
use http::{Request, Response, header};
use http_body_util::{BodyExt, Empty};
use serde_json::Value;

/// Sends `request` with an empty body.
pub async fn send(handler: &DualHttp, request: http::request::Builder) -> Response<ResponseBody> {
    handler
        .handle(request.body(Empty::<Bytes>::new()).expect("request"))
        .await
}

/// `GET uri` with `headers`.
pub async fn get(
    handler: &DualHttp,
    uri: &str,
    headers: &[(header::HeaderName, &str)],
) -> Response<ResponseBody> {
    let mut request = Request::get(uri);
    for (name, value) in headers {
        request = request.header(name, *value);
    }
    send(handler, request).await
}

/// The `Content-Type` (`""` when absent or not text).
pub fn content_type(response: &Response<ResponseBody>) -> &str {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// The whole body.
pub async fn bytes(response: Response<ResponseBody>) -> Bytes {
    response
        .into_body()
        .collect()
        .await
        .expect("complete body")
        .to_bytes()
}

/// The whole body, as JSON.
pub async fn body_json(response: Response<ResponseBody>) -> Value {
    serde_json::from_slice(&bytes(response).await).expect("JSON")
}
