//! Execute: run a parsed operation against the server, authorising it first.

use dual_core::{PageResponse, PinResponse, ResourceId, ResourceMetadata, validate_sort};
use dual_server::DualResponseServer;
use futures_util::StreamExt;
use http::request::Parts;

use crate::encode::Encoder;
use crate::export::ExportBody;
use crate::{ApiRequest, ExportFormat, HttpConfig, Rejection};

/// The outcome of an operation, ready for [`render`](crate::render).
#[derive(Debug)]
#[non_exhaustive]
pub enum ApiResponse {
    /// 200, the metadata.
    Metadata(ResourceMetadata),
    /// 200, one page.
    Page(PageResponse),
    /// 200, `{"status":"pinned","expires_at":null}`.
    Pinned(PinResponse),
    /// 204, the resource was deleted.
    Deleted,
    /// 200, a streamed export.
    Export(Export),
    /// 204, the answer to `OPTIONS` (a CORS preflight when the request is one).
    Options {
        /// The path's `Allow` header.
        allow: &'static str,
    },
    /// An error.
    Error(Rejection),
}

/// A streamed export, started: the executor has produced its first batch (or ended), so a query that
/// fails outright is a 500, while one that fails later aborts the body.
#[derive(Debug)]
pub struct Export {
    pub(crate) format: ExportFormat,
    pub(crate) body: ExportBody,
}

impl Export {
    /// The representation being sent.
    #[must_use]
    pub fn format(&self) -> ExportFormat {
        self.format
    }
}

impl From<Rejection> for ApiResponse {
    fn from(rejection: Rejection) -> Self {
        Self::Error(rejection)
    }
}

/// Runs `request` against `server`.
///
/// Looks the resource up without counting an access, asks `config`'s authorization hook (a denied
/// request gets the 404 an unknown id gets), then performs the operation, which counts the access.
/// Page requests and export sorts are validated before that, so an invalid request is not counted.
pub async fn execute(
    server: &DualResponseServer,
    config: &HttpConfig,
    parts: &Parts,
    request: ApiRequest,
) -> ApiResponse {
    run(server, config, parts, request)
        .await
        .unwrap_or_else(ApiResponse::Error)
}

async fn run(
    server: &DualResponseServer,
    config: &HttpConfig,
    parts: &Parts,
    request: ApiRequest,
) -> Result<ApiResponse, Rejection> {
    let id = match &request {
        ApiRequest::Options { allow } => return Ok(ApiResponse::Options { allow }),
        ApiRequest::Metadata { id }
        | ApiRequest::Page { id, .. }
        | ApiRequest::Pin { id }
        | ApiRequest::Delete { id }
        | ApiRequest::Export { id, .. } => *id,
    };
    let record = server.get_resource(id).await?;
    if !config.authorize.allow(parts, &record) {
        tracing::debug!(%id, "dual-http authorization hook denied access");
        return Err(Rejection::NotFound);
    }
    Ok(match request {
        ApiRequest::Metadata { .. } => ApiResponse::Metadata(server.metadata(id).await?),
        ApiRequest::Page { request, .. } => {
            request.validate(server.config().page_limits, &record.columns)?;
            ApiResponse::Page(server.fetch_page(id, &request).await?)
        }
        ApiRequest::Pin { .. } => {
            server.pin_resource(id).await?;
            ApiResponse::Pinned(PinResponse::pinned())
        }
        ApiRequest::Delete { .. } => {
            server.delete_resource(id).await?;
            ApiResponse::Deleted
        }
        ApiRequest::Export { sort, format, .. } => {
            if let Some(sort) = &sort {
                validate_sort(sort, &record.columns)?;
            }
            ApiResponse::Export(start_export(server, id, sort, format).await?)
        }
        ApiRequest::Options { allow } => ApiResponse::Options { allow },
    })
}

async fn start_export(
    server: &DualResponseServer,
    id: ResourceId,
    sort: Option<dual_core::Sort>,
    format: ExportFormat,
) -> Result<Export, Rejection> {
    let (record, mut stream) = server.stream_rows(id, sort).await?;
    let (first, rest) = match stream.next().await {
        Some(Ok(batch)) => (batch, Some(stream)),
        Some(Err(error)) => {
            return Err(Rejection::QueryFailed {
                detail: error.message().to_owned(),
            });
        }
        None => (Vec::new(), None),
    };
    let encoder = Encoder::new(format, record.columns);
    Ok(Export {
        format,
        body: ExportBody::new(id, encoder, first, rest),
    })
}
