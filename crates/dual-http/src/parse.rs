//! Parse: from an HTTP request to the API operation it asks for.

use bytes::Bytes;
use dual_core::{PageRequest, ResourceId, Sort, escape::log_safe, range::RowRange};
use http::Method;
use http::header::CONTENT_LENGTH;
use http::request::Parts;
use http_body::Body;
use http_body_util::{BodyExt, LengthLimitError, Limited};

use crate::query::{ExportParams, LinkParams};
use crate::rejection::Rejection;
use crate::route::{Route, route};
use crate::{BoxError, ContentCoding, ExportFormat, HttpConfig, media, query};
use dual_server::LinkFormat;

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
    Export(ExportRequest),
    /// `HEAD /{id}/data`: the export's headers, from the checks alone (no export runs).
    ExportHead(ExportRequest),
    /// `GET` (or `HEAD`) `/{id}/view`: the result view's page.
    View {
        /// The resource.
        id: ResourceId,
    },
    /// `GET` (or `HEAD`) `/{id}/profile`: the column profile.
    Profile {
        /// The resource.
        id: ResourceId,
    },
    /// `POST /{id}/query`: SQL over the stored result.
    Refine {
        /// The result refined.
        id: ResourceId,
        /// The SQL, reading the table `result`.
        sql: String,
    },
    /// `OPTIONS` on any path, with CORS configured (a preflight when the request is one).
    Options {
        /// The path's `Allow` header.
        allow: &'static str,
    },
}

impl ApiRequest {
    /// The resource the operation is on (`None` for `OPTIONS`).
    pub(crate) const fn id(&self) -> Option<ResourceId> {
        match self {
            Self::Metadata { id }
            | Self::Page { id, .. }
            | Self::Pin { id }
            | Self::Delete { id }
            | Self::Export(ExportRequest { id, .. })
            | Self::ExportHead(ExportRequest { id, .. })
            | Self::View { id }
            | Self::Profile { id }
            | Self::Refine { id, .. } => Some(*id),
            Self::Options { .. } => None,
        }
    }
}

/// What an export (`GET` or `HEAD` `/{id}/data`) asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExportRequest {
    /// The resource.
    pub(crate) id: ResourceId,
    /// From `?sort=field:asc|desc`.
    pub(crate) sort: Option<Sort>,
    /// From `?offset=N&limit=M` ([`RowRange::ALL`] without them).
    pub(crate) range: RowRange,
    /// From `format=`, or else `Accept`.
    pub(crate) format: ExportFormat,
    /// The `format=` parameter, when given: the response is an attachment, and a data link
    /// signs it.
    pub(crate) named: Option<LinkFormat>,
    /// From `Accept-Encoding`.
    pub(crate) encoding: ContentCoding,
}

impl ExportRequest {
    /// The attachment's name, `{id}.{ext}`, when `format=` named the format.
    pub(crate) fn attachment(&self) -> Option<String> {
        self.named
            .map(|format| format!("{}.{}", self.id, format.extension()))
    }
}

/// A parsed request: the operation, and the capability link it carries, if any.
#[derive(Debug)]
pub(crate) struct Parsed {
    /// The operation.
    pub(crate) request: ApiRequest,
    /// `expires` and `token` when given on a route a link can authorize (never on `PUT` or
    /// `DELETE`, where they are ignored and the authorization hook decides).
    pub(crate) link: Option<LinkParams>,
}

/// Parses a request into the operation it asks for; [`DualHttp::handle`](crate::DualHttp::handle) then
/// calls [`execute`](crate::execute::execute) and [`render`](crate::render::render).
///
/// Checks, in order: the path (below `config`'s prefix: 404), the method (405), the id (404), the
/// query string (400; a link's `expires` and `token` are taken out of it), for an export `format=`
/// (400 for an unknown one, 406 for one this build cannot produce) or else `Accept` (406 when
/// nothing the server can produce is acceptable), then for `POST` the body: `Content-Length` over the limit (413), a non-JSON
/// `Content-Type` on a non-empty body (415), the body read through [`Limited`] (413), and the page
/// request itself (400 naming the field). Only `POST` bodies are read; other methods ignore theirs.
///
/// # Errors
/// The [`Rejection`] to render.
pub(crate) async fn parse_request<B>(config: &HttpConfig, parts: &Parts, body: B) -> Result<Parsed, Rejection>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let route = route(&config.prefix, parts.uri.path()).ok_or(Rejection::NotFound)?;
    let allow = route.allow(config.cors.is_some());
    let id_text = match (route, &parts.method) {
        (_, &Method::OPTIONS) if config.cors.is_some() => {
            let request = ApiRequest::Options { allow };
            return Ok(Parsed { request, link: None });
        }
        (Route::Item(id), &Method::GET | &Method::HEAD | &Method::POST | &Method::PUT | &Method::DELETE)
        | (Route::Data(id) | Route::View(id) | Route::Profile(id), &Method::GET | &Method::HEAD)
        | (Route::Query(id), &Method::POST) => id,
        _ => return Err(Rejection::MethodNotAllowed { allow }),
    };
    let id: ResourceId = id_text.parse().map_err(|_| Rejection::NotFound)?;
    let query = query::parse(parts.uri.query())?;
    let request = match (route, &parts.method) {
        (Route::Data(_), method) => {
            let ExportParams { sort, range, format } = query.export()?;
            let named = format;
            let format = match named {
                Some(format) => ExportFormat::from_link(format).ok_or(Rejection::FormatUnavailable {
                    format: format.as_str(),
                })?,
                None => ExportFormat::negotiate(&parts.headers).ok_or(Rejection::NotAcceptable)?,
            };
            let export = ExportRequest {
                id,
                sort,
                range,
                format,
                named,
                // Parquet's pages are compressed already: sent as they are, whatever `Accept-Encoding` says.
                encoding: if format.is_compressed() {
                    ContentCoding::Identity
                } else {
                    ContentCoding::negotiate(&parts.headers)
                },
            };
            if method == Method::HEAD {
                ApiRequest::ExportHead(export)
            } else {
                ApiRequest::Export(export)
            }
        }
        (Route::View(_), _) => {
            query.expect_none()?;
            ApiRequest::View { id }
        }
        (Route::Profile(_), _) => {
            query.expect_none()?;
            ApiRequest::Profile { id }
        }
        (Route::Query(_), _) => {
            query.expect_none()?;
            let bytes = read_body(config, parts, body).await?;
            let sql = crate::refine::sql_of(&bytes)?;
            // A link reads one result and makes none: its parameters do not authorize this.
            return Ok(Parsed {
                request: ApiRequest::Refine { id, sql },
                link: None,
            });
        }
        (_, &Method::POST) => {
            query.expect_none()?;
            let bytes = read_body(config, parts, body).await?;
            let request = PageRequest::from_json(&bytes)?;
            ApiRequest::Page { id, request }
        }
        (_, &Method::PUT | &Method::DELETE) => {
            query.expect_none()?;
            // A link never authorizes a change: its parameters are ignored here.
            let request = if parts.method == Method::PUT {
                ApiRequest::Pin { id }
            } else {
                ApiRequest::Delete { id }
            };
            return Ok(Parsed { request, link: None });
        }
        _ => {
            query.expect_none()?;
            ApiRequest::Metadata { id }
        }
    };
    Ok(Parsed {
        request,
        link: query.link,
    })
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
