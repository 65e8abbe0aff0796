//! Render: from an operation's outcome to the HTTP response, headers and all.

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::request::Parts;
use http::{Method, Response, StatusCode};
use serde::Serialize;

use crate::execute::ApiResponse;
use crate::rejection::Rejection;
use crate::{ContentCoding, Cors, ExportFormat, HttpConfig, ResponseBody};

const JSON: HeaderValue = HeaderValue::from_static("application/json");
const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");
const NOSNIFF: HeaderValue = HeaderValue::from_static("nosniff");
const NO_REFERRER: HeaderValue = HeaderValue::from_static("no-referrer");

/// Renders `response` for the request whose head is `parts`.
///
/// Every response gets `Cache-Control: no-store` (resources are per-caller and change with every
/// access) and `X-Content-Type-Options: nosniff`; JSON answers get `Content-Type: application/json`
/// and `Content-Length`; exports `Vary: Accept` (and, with feature `compression`, `Vary:
/// Accept-Encoding` and `Content-Encoding` when compressed); 405 `Allow`; 503 `Retry-After` (1 s for `storage_error`, the executor's hint for `overloaded`); with CORS
/// configured, `Vary: Origin` and the `Access-Control-*` headers for an allowed `Origin`; a request
/// with a capability link's `token` or `expires`, `Referrer-Policy: no-referrer`. A `HEAD`
/// request gets the headers of the `GET` and no body. A rejection is logged here, once.
#[must_use]
pub(crate) fn render(config: &HttpConfig, parts: &Parts, response: ApiResponse) -> Response<ResponseBody> {
    let mut preflight_allow = None;
    let mut out = match response {
        ApiResponse::Metadata(metadata) => json(StatusCode::OK, &metadata),
        ApiResponse::Page(page) => json_parts(page.into_json_parts()),
        ApiResponse::Pinned(pin) => json(StatusCode::OK, &pin),
        ApiResponse::Deleted => status_only(StatusCode::NO_CONTENT),
        ApiResponse::Export(export) => export_response(
            ResponseBody::export(export.body),
            export.format,
            export.attachment.as_deref(),
            export.encoding,
        ),
        ApiResponse::ExportHead {
            format,
            attachment,
            encoding,
        } => export_response(ResponseBody::empty(), format, attachment.as_deref(), encoding),
        ApiResponse::View => crate::view::page(),
        ApiResponse::Profile(profile) => json(StatusCode::OK, profile.as_ref()),
        ApiResponse::Refined(refined) => created(&refined),
        ApiResponse::Options { allow } => {
            preflight_allow = Some(allow);
            let mut out = status_only(StatusCode::NO_CONTENT);
            out.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static(allow));
            out
        }
        ApiResponse::Error(rejection) => render_rejection(&rejection),
    };
    let headers = out.headers_mut();
    headers.insert(header::CACHE_CONTROL, NO_STORE);
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, NOSNIFF);
    if crate::query::mentions_link(parts.uri.query()) {
        // The URL holds a bearer secret: no page it leads to may learn it from `Referer`.
        headers.insert(header::REFERRER_POLICY, NO_REFERRER);
    }
    if let Some(cors) = &config.cors {
        apply_cors(cors, parts, preflight_allow, headers);
    }
    if parts.method == Method::HEAD {
        *out.body_mut() = ResponseBody::empty();
    }
    out
}

/// The response for a rejection (logging it): the JSON error body, plus `Allow` or `Retry-After`.
/// [`render`] calls it and then adds the headers every response gets (`Cache-Control`, CORS) and
/// drops the body of a `HEAD`; use this directly only where no request head is at hand.
#[must_use]
pub(crate) fn render_rejection(rejection: &Rejection) -> Response<ResponseBody> {
    rejection.log();
    crate::metrics::rejected(rejection);
    let mut out = json(rejection.status(), &rejection.body());
    match rejection {
        Rejection::MethodNotAllowed { allow } => {
            out.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static(allow));
        }
        Rejection::Storage { .. } => {
            out.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        Rejection::Overloaded { retry_after_secs, .. }
        | Rejection::NotReady { retry_after_secs }
        | Rejection::QuotaExceeded { retry_after_secs, .. } => {
            out.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
        }
        _ => {}
    }
    out
}

/// A 200 export with its headers: `Content-Type`, `Vary`, `Content-Encoding` when compressed,
/// `Content-Disposition: attachment` when `format=` named the format (the `GET` and the `HEAD` of an
/// export send the same).
fn export_response(
    body: ResponseBody,
    format: ExportFormat,
    attachment: Option<&str>,
    encoding: ContentCoding,
) -> Response<ResponseBody> {
    let mut out = Response::new(body);
    let headers = out.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    headers.append(header::VARY, HeaderValue::from_static("accept"));
    if cfg!(feature = "compression") {
        headers.append(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    if let Some(coding) = encoding.as_header() {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(coding));
    }
    // `{id}.{ext}`: a UUID and a fixed extension, nothing to quote or escape.
    if let Some(Ok(disposition)) =
        attachment.map(|name| HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")))
    {
        headers.insert(header::CONTENT_DISPOSITION, disposition);
    }
    out
}

fn json(status: StatusCode, value: &impl Serialize) -> Response<ResponseBody> {
    json_bytes(status, serde_json::to_vec(value))
}

fn json_bytes(status: StatusCode, bytes: Result<Vec<u8>, serde_json::Error>) -> Response<ResponseBody> {
    json_body(status, bytes.map(ResponseBody::full))
}

/// A `200` of JSON sent as `parts`, one after another (a page: see `EncodedPage::into_json_parts`).
fn json_parts(parts: Result<Vec<Bytes>, serde_json::Error>) -> Response<ResponseBody> {
    json_body(StatusCode::OK, parts.map(ResponseBody::parts))
}

fn json_body(status: StatusCode, body: Result<ResponseBody, serde_json::Error>) -> Response<ResponseBody> {
    match body {
        Ok(body) => {
            let len = http_body::Body::size_hint(&body).exact().unwrap_or_default();
            let mut out = Response::new(body);
            *out.status_mut() = status;
            let headers = out.headers_mut();
            headers.insert(header::CONTENT_TYPE, JSON);
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
            out
        }
        // The wire types always serialise; should one ever not, answer a bare 500 rather than panic.
        Err(err) => {
            tracing::error!(error = %dual_core::escape::log_safe(&err.to_string()), "dual-http could not serialise a response");
            status_only(StatusCode::INTERNAL_SERVER_ERROR)
        }
    }
}

fn status_only(status: StatusCode) -> Response<ResponseBody> {
    let mut out = Response::new(ResponseBody::empty());
    *out.status_mut() = status;
    out
}

fn apply_cors(cors: &Cors, parts: &Parts, preflight_allow: Option<&'static str>, headers: &mut HeaderMap) {
    headers.append(header::VARY, HeaderValue::from_static("origin"));
    let Some(allow_origin) = parts
        .headers
        .get(header::ORIGIN)
        .and_then(|origin| cors.allow_origin_value(origin))
    else {
        return;
    };
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, allow_origin);
    if cors.credentials() {
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
            HeaderValue::from_static("true"),
        );
    }
    let is_preflight = parts.headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    match preflight_allow {
        Some(allow) if is_preflight => {
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static(allow),
            );
            if let Some(value) = cors.allow_headers_value() {
                headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, value);
            }
            if let Some(value) = cors.max_age_value() {
                headers.insert(header::ACCESS_CONTROL_MAX_AGE, value);
            }
        }
        _ => {
            if let Some(value) = cors.expose_headers_value() {
                headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, value);
            }
        }
    }
}

/// `201 Created`: the refined result's `structuredContent`, its REST URL as `Location`.
fn created(refined: &dual_core::DualResponse) -> Response<ResponseBody> {
    let mut response = json(StatusCode::CREATED, &refined.structured_content());
    if let Ok(location) = HeaderValue::from_str(&refined.url) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}
