//! Execute: run a parsed operation against the server, authorising it first.

use dual_core::{PageResponse, PinResponse, ResourceId, ResourceMetadata};
use dual_server::{Caller, DualResponseServer, ServerError};
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

/// Runs `request` against `server` as the caller `config`'s authentication hook maps the request
/// to. The server authorizes every operation (a resource the caller may not see is the 404 an unknown
/// id gets) and validates page requests and export sorts before counting an access.
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
    if let ApiRequest::Options { allow } = request {
        return Ok(ApiResponse::Options { allow });
    }
    let caller = config.authorize.caller(parts);
    Ok(match request {
        ApiRequest::Metadata { id } => ApiResponse::Metadata(server.metadata(id, &caller).await?),
        ApiRequest::Page { id, request } => {
            ApiResponse::Page(server.fetch_page(id, &caller, &request).await?)
        }
        ApiRequest::Pin { id } => {
            server.pin_resource(id, &caller).await?;
            ApiResponse::Pinned(PinResponse::pinned())
        }
        ApiRequest::Delete { id } => {
            server.delete_resource(id, &caller).await?;
            ApiResponse::Deleted
        }
        ApiRequest::Export { id, sort, format } => {
            ApiResponse::Export(start_export(server, id, &caller, sort, format).await?)
        }
        ApiRequest::Options { allow } => ApiResponse::Options { allow },
    })
}

async fn start_export(
    server: &DualResponseServer,
    id: ResourceId,
    caller: &Caller,
    sort: Option<dual_core::Sort>,
    format: ExportFormat,
) -> Result<Export, Rejection> {
    let (record, mut stream) = server.stream_rows(id, caller, sort).await?;
    let (first, rest) = match stream.next().await {
        Some(Ok(batch)) => (batch, Some(stream)),
        Some(Err(error)) => return Err(Rejection::from(ServerError::query_failed(error))),
        None => (Vec::new(), None),
    };
    let encoder = Encoder::new(format, record.columns);
    Ok(Export {
        format,
        body: ExportBody::new(id, encoder, first, rest),
    })
}
