//! Execute: run a parsed operation against the server, authorising it first.

use dual_core::{
    ResourceRecord,
    metadata::{PinResponse, ResourceMetadata},
};
use dual_server::{DualResponseServer, EncodedPage, RowStream};
use http::request::Parts;

use crate::encode::Encoder;
use crate::export::ExportBody;
use crate::parse::{ApiRequest, ExportRequest, Parsed};
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
    /// 200, the headers of an export and no body (`HEAD /{id}/data`).
    ExportHead {
        /// The format `format=` or `Accept` chose.
        format: ExportFormat,
        /// The attachment's name, `{id}.{ext}`, when `format=` named the format.
        attachment: Option<String>,
        /// The coding `Accept-Encoding` chose.
        encoding: ContentCoding,
    },
    /// 200, the result view's page (`/{id}/view`).
    View,
    /// 200, the column profile (`/{id}/profile`).
    Profile(std::sync::Arc<dual_core::profile::Profile>),
    /// 201, the refined result (`POST /{id}/query`): its `structuredContent`, and its URL as `Location`.
    Refined(Box<dual_core::DualResponse>),
    /// 204, the answer to `OPTIONS` (a CORS preflight when the request is one).
    Options {
        /// The path's `Allow` header.
        allow: &'static str,
    },
    /// An error.
    Error(Rejection),
}

/// A streamed export, started: its first frames carry rows (or the export has ended), so a query
/// that fails before its first row is an error response, while one that fails later aborts the body.
#[derive(Debug)]
pub(crate) struct Export {
    pub(crate) format: ExportFormat,
    /// The attachment's name, `{id}.{ext}`, when `format=` named the format.
    pub(crate) attachment: Option<String>,
    pub(crate) encoding: ContentCoding,
    pub(crate) body: ExportBody,
}

impl From<Rejection> for ApiResponse {
    fn from(rejection: Rejection) -> Self {
        Self::Error(rejection)
    }
}

/// Runs `request` against `server` as the caller `config`'s authentication hook maps the request
/// to, or, when the request carries a capability link, as the link's grant (verified first, without
/// touching the store; the hook is not consulted). The server authorizes every operation (a resource the caller may not see is the 404 an unknown
/// id gets) and validates page requests and export sorts before counting an access. `HEAD` of an
/// export runs the same checks and nothing else: no access is counted and no export starts.
pub(crate) async fn execute(
    server: &DualResponseServer,
    config: &HttpConfig,
    parts: &Parts,
    request: Parsed,
) -> ApiResponse {
    run(server, config, parts, request)
        .await
        .unwrap_or_else(ApiResponse::Error)
}

async fn run(
    server: &DualResponseServer,
    config: &HttpConfig,
    parts: &Parts,
    Parsed { request, link }: Parsed,
) -> Result<ApiResponse, Rejection> {
    if let ApiRequest::Options { allow } = request {
        return Ok(ApiResponse::Options { allow });
    }
    let caller = match &link {
        Some(link) => crate::link::grant(server, link, &request)?,
        None => config.authorize.caller(parts),
    };
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
        ApiRequest::Export(request) => {
            let stream = server
                .export_range(request.id, &caller, request.sort.clone(), request.range)
                .await?;
            let mut export = start_export(stream, &request, config).await?;
            export.attachment = request.attachment();
            ApiResponse::Export(export)
        }
        ApiRequest::ExportHead(request) => {
            server
                .check_export(request.id, &caller, request.sort.as_ref(), request.range)
                .await?;
            ApiResponse::ExportHead {
                format: request.format,
                attachment: request.attachment(),
                encoding: request.encoding,
            }
        }
        ApiRequest::View { id } => {
            // Authorized like `GET /{id}`, counting no access: the page's own reads count.
            server.get_resource(id, &caller).await?;
            ApiResponse::View
        }
        ApiRequest::Profile { id } => ApiResponse::Profile(server.profile(id, &caller).await?),
        ApiRequest::Refine { id, sql } => ApiResponse::Refined(Box::new(
            server
                .refine(id, &sql, &caller)
                .await
                .map_err(crate::refine::rejection)?,
        )),
        ApiRequest::Options { allow } => ApiResponse::Options { allow },
    })
}

/// Starts the export and produces its first frames ([`ExportBody::prime`]) before the response head
/// goes out, so that a failure before the first row is rendered like any other rejection.
async fn start_export(
    (record, stream): (ResourceRecord, RowStream),
    request: &ExportRequest,
    config: &HttpConfig,
) -> Result<Export, Rejection> {
    let encoder = Encoder::new(request.format, record.columns, config.encode_options());
    let (mut body, encoding) = ExportBody::new(request.id, encoder, stream, request.encoding);
    body.prime().await?;
    Ok(Export {
        format: request.format,
        attachment: None,
        encoding,
        body,
    })
}
