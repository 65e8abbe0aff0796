//! Parse: from an HTTP request to the API operation it asks for.

use bytes::Bytes;
use dual_core::{PageRequest, ResourceId, Sort, escape::log_safe, range::RowRange};
use http::Method;
use http::header::CONTENT_LENGTH;
use http::request::Parts;
use http_body::Body;
use http_body_util::{BodyExt, LengthLimitError, Limited};

use crate::rejection::Rejection;
use crate::route::{Route, route};
use crate::{BoxError, ContentCoding, ExportFormat, HttpConfig, media, query};

/// The API operation a request asks for, as [`parse_request`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum ApiRequest {
    /// `GET` (or `HEAD`) `/{id}`: the metadata.
    Metadata {
        /// The resource.
        id: ResourceId,
    },
    /// `POST /{id}`: one page.
    Page {
        /// The resource.
        id: ResourceId,
        /// The request body (defaults when the body was empty).
        request: PageRequest,
    },
    /// `PUT /{id}`: pin.
    Pin {
        /// The resource.
        id: ResourceId,
    },
    /// `DELETE /{id}`.
    Delete {
        /// The resource.
        id: ResourceId,
    },
    /// `GET /{id}/data`: the streamed export.
    Export {
        /// The resource.
        id: ResourceId,
        /// From `?sort=field:asc|desc`.
        sort: Option<Sort>,
        /// From `?offset=N&limit=M` ([`RowRange::ALL`] without them).
        range: RowRange,
        /// From `Accept`.
        format: ExportFormat,
        /// From `Accept-Encoding`.
        encoding: ContentCoding,
    },
    /// `HEAD /{id}/data`: the export's headers, from the checks alone (no export runs).
    ExportHead {
        /// The resource.
        id: ResourceId,
        /// From `?sort=field:asc|desc`.
        sort: Option<Sort>,
        /// From `?offset=N&limit=M` ([`RowRange::ALL`] without them).
        range: RowRange,
        /// From `Accept`.
        format: ExportFormat,
        /// From `Accept-Encoding`.
        encoding: ContentCoding,
    },
    /// `OPTIONS` on either path, with CORS configured (a preflight when the request is one).
    Options {
        /// The path's `Allow` header.
        allow: &'static str,
    },
}

/// Parses a request into the operation it asks for; [`DualHttp::handle`](crate::DualHttp::handle) then
/// calls [`execute`](crate::execute::execute) and [`render`](crate::render::render).
///
/// Checks, in order: the path (below `config`'s prefix: 404), the method (405), the id (404), the
/// query string (400), for an export `Accept` (406 when nothing the server can produce is
/// acceptable), then for `POST` the body: `Content-Length` over the limit (413), a non-JSON
/// `Content-Type` on a non-empty body (415), the body read through [`Limited`] (413), and the page
/// request itself (400 naming the field). Only `POST` bodies are read; other methods ignore theirs.
///
/// # Errors
/// The [`Rejection`] to render.
pub(crate) async fn parse_request<B>(
    config: &HttpConfig,
    parts: &Parts,
    body: B,
) -> Result<ApiRequest, Rejection>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let route = route(&config.prefix, parts.uri.path()).ok_or(Rejection::NotFound)?;
    let allow = route.allow(config.cors.is_some());
    let id_text = match (route, &parts.method) {
        (_, &Method::OPTIONS) if config.cors.is_some() => return Ok(ApiRequest::Options { allow }),
        (Route::Item(id), &Method::GET | &Method::HEAD | &Method::POST | &Method::PUT | &Method::DELETE)
        | (Route::Data(id), &Method::GET | &Method::HEAD) => id,
        _ => return Err(Rejection::MethodNotAllowed { allow }),
    };
    let id: ResourceId = id_text.parse().map_err(|_| Rejection::NotFound)?;
    let query = parts.uri.query();
    match (route, &parts.method) {
        (Route::Data(_), method) => {
            let (sort, range) = query::export_params(query)?;
            let format = ExportFormat::negotiate(&parts.headers).ok_or(Rejection::NotAcceptable)?;
            let encoding = ContentCoding::negotiate(&parts.headers);
            Ok(if method == Method::HEAD {
                ApiRequest::ExportHead {
                    id,
                    sort,
                    range,
                    format,
                    encoding,
                }
            } else {
                ApiRequest::Export {
                    id,
                    sort,
                    range,
                    format,
                    encoding,
                }
            })
        }
        (_, &Method::POST) => {
            query::expect_none(query)?;
            let bytes = read_body(config, parts, body).await?;
            let request = PageRequest::from_json(&bytes)?;
            Ok(ApiRequest::Page { id, request })
        }
        (_, &Method::PUT) => query::expect_none(query).map(|()| ApiRequest::Pin { id }),
        (_, &Method::DELETE) => query::expect_none(query).map(|()| ApiRequest::Delete { id }),
        _ => query::expect_none(query).map(|()| ApiRequest::Metadata { id }),
    }
}

/// Reads a `POST` body of at most `config.body_limit` bytes, arriving within `config.body_timeout`,
/// that, when not empty, is declared JSON.
async fn read_body<B>(config: &HttpConfig, parts: &Parts, body: B) -> Result<Bytes, Rejection>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let limit = config.body_limit;
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(Rejection::PayloadTooLarge { limit });
    }
    let json = media::is_json(&parts.headers);
    if declared.is_some_and(|len| len > 0) && !json {
        return Err(Rejection::UnsupportedMediaType);
    }
    let collect = Limited::new(body, limit).collect();
    let collected = match config.body_timeout {
        Some(after) => tokio::time::timeout(after, collect)
            .await
            .map_err(|_| Rejection::RequestTimeout { after })?,
        None => collect.await,
    };
    let bytes = match collected {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<LengthLimitError>() => return Err(Rejection::PayloadTooLarge { limit }),
        Err(error) => {
            tracing::debug!(error = %log_safe(&error.to_string()), "dual-http could not read a request body");
            return Err(Rejection::InvalidRequest(
                "the request body could not be read".to_owned(),
            ));
        }
    };
    if !bytes.is_empty() && !json {
        return Err(Rejection::UnsupportedMediaType);
    }
    Ok(bytes)
}
