//! Execute: run a parsed operation against the server, authorising it first.

use dual_core::{
    ResourceId, ResourceRecord,
    metadata::{PinResponse, ResourceMetadata},
};
use dual_server::{BatchStream, DualResponseServer, EncodedPage, RowBatch, ServerError};
use futures_util::StreamExt;
use http::request::Parts;

use crate::encode::Encoder;
use crate::export::ExportBody;
use crate::parse::ApiRequest;
use crate::rejection::Rejection;
use crate::{ContentCoding, ExportFormat, HttpConfig};

/// The outcome of an operation, ready for [`render`](crate::render::render).
#[derive(Debug)]
#[non_exhaustive]
pub(crate) enum ApiResponse {
    /// 200, the metadata.
    Metadata(ResourceMetadata),
    /// 200, one page (a snapshot's rows still encoded).
    Page(EncodedPage),
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
pub(crate) struct Export {
    pub(crate) format: ExportFormat,
    pub(crate) encoding: ContentCoding,
    pub(crate) body: ExportBody,
}

impl From<Rejection> for ApiResponse {
    fn from(rejection: Rejection) -> Self {
        Self::Error(rejection)
    }
}

/// Runs `request` against `server` as the caller `config`'s authentication hook maps the request
/// to. The server authorizes every operation (a resource the caller may not see is the 404 an unknown
/// id gets) and validates page requests and export sorts before counting an access.
pub(crate) async fn execute(
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
            ApiResponse::Page(server.fetch_page_encoded(id, &caller, &request).await?)
        }
        ApiRequest::Pin { id } => {
            server.pin_resource(id, &caller).await?;
            ApiResponse::Pinned(PinResponse::pinned())
        }
        ApiRequest::Delete { id } => {
            server.delete_resource(id, &caller).await?;
            ApiResponse::Deleted
        }
        ApiRequest::Export {
            id,
            sort,
            range,
            format,
            encoding,
        } => {
            let stream = server.export_range(id, &caller, sort, range).await?;
            ApiResponse::Export(start_export(id, stream, format, encoding).await?)
        }
        ApiRequest::Options { allow } => ApiResponse::Options { allow },
    })
}

/// Waits for the executor's first batch (so a query failing outright is a 500), then wraps the rest.
async fn start_export(
    id: ResourceId,
    (record, mut stream): (ResourceRecord, BatchStream),
    format: ExportFormat,
    encoding: ContentCoding,
) -> Result<Export, Rejection> {
    let (first, rest) = match stream.next().await {
        Some(Ok(batch)) => (batch, Some(stream)),
        Some(Err(error)) => return Err(Rejection::from(ServerError::query_failed(error))),
        None => (RowBatch::Rows(Vec::new()), None),
    };
    let encoder = Encoder::new(format, record.columns);
    let (body, encoding) = ExportBody::new(id, encoder, first, rest, encoding);
    Ok(Export {
        format,
        encoding,
        body,
    })
}
