//! `download`: an export's bytes as the server writes them, in any format it produces (CSV, Arrow,
//! Parquet, …), for an application that stores or forwards the file rather than reading rows.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use dual_core::Sort;
use http::{Method, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use tokio::time::{Instant, timeout};
use tracing::Instrument;

use crate::error::ClientError;
use crate::parsed::ParsedDualResponse;
use crate::transport::{Call, error_from_response};
use crate::wait::DEFAULT_WAIT_TIMEOUT;

/// A representation of the `GET {url}/data` export, asked for by its media type (`Accept`).
///
/// ```
/// use dual_client::ExportFormat;
/// assert_eq!(ExportFormat::Parquet.media_type(), "application/vnd.apache.parquet");
/// assert_eq!(ExportFormat::Arrow.extension(), "arrows");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExportFormat {
    /// One JSON array of row objects (`application/json`).
    Json,
    /// One row object per line (`application/x-ndjson`).
    Ndjson,
    /// RFC 4180 CSV with a header row (`text/csv`).
    Csv,
    /// An Arrow IPC stream (`application/vnd.apache.arrow.stream`; servers built with dual-http's
    /// feature `arrow`).
    Arrow,
    /// A Parquet file (`application/vnd.apache.parquet`; servers built with dual-http's feature
    /// `parquet`).
    Parquet,
}

impl ExportFormat {
    /// The media type the download asks for.
    #[must_use]
    pub const fn media_type(self) -> &'static str {
        match self {
            Self::Json => "application/json",
            Self::Ndjson => "application/x-ndjson",
            Self::Csv => "text/csv",
            Self::Arrow => "application/vnd.apache.arrow.stream",
            Self::Parquet => "application/vnd.apache.parquet",
        }
    }

    /// The file name extension the server gives such a download (`{id}.{extension}`).
    #[must_use]
    pub const fn extension(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Ndjson => "ndjson",
            Self::Csv => "csv",
            Self::Arrow => "arrows",
            Self::Parquet => "parquet",
        }
    }
}

/// What [`ParsedDualResponse::download`] downloads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadOptions {
    /// The format.
    pub format: ExportFormat,
    /// Sorts the result by a column.
    pub sort: Option<Sort>,
    /// Only rows `offset..offset + limit` (`limit` `None`: to the end); `None` for every row.
    pub range: Option<(u64, Option<u64>)>,
    /// How long a pending resource's query is waited for (default 10 minutes).
    pub wait_timeout: Duration,
}

impl DownloadOptions {
    /// Every row in `format`, unsorted.
    #[must_use]
    pub fn new(format: ExportFormat) -> Self {
        Self {
            format,
            sort: None,
            range: None,
            wait_timeout: DEFAULT_WAIT_TIMEOUT,
        }
    }

    /// Sets the sort.
    #[must_use]
    pub fn sort(mut self, sort: Sort) -> Self {
        self.sort = Some(sort);
        self
    }

    /// Only the rows from `offset`, at most `limit` of them (`None`: to the end).
    #[must_use]
    pub fn range(mut self, offset: u64, limit: Option<u64>) -> Self {
        self.range = Some((offset, limit));
        self
    }

    /// Sets the wait timeout for a pending resource.
    #[must_use]
    pub fn wait_timeout(mut self, timeout: Duration) -> Self {
        self.wait_timeout = timeout;
        self
    }
}

/// An export being downloaded: its bytes chunk by chunk, as they arrive, with nothing read ahead.
pub struct Download {
    body: Incoming,
    content_type: String,
    idle: Duration,
    ended: bool,
}

impl fmt::Debug for Download {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Download")
            .field("content_type", &self.content_type)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Download {
    /// The response's `Content-Type`.
    #[must_use]
    pub fn content_type(&self) -> &str {
        &self.content_type
    }

    /// The next chunk of bytes; `None` once the export has ended cleanly.
    ///
    /// # Errors
    /// `TIMEOUT` when the server sends nothing for the client's timeout; `FETCH_ERROR` when the
    /// transfer breaks (a server that fails midway never ends an export cleanly, so a download that
    /// ends with `None` is complete).
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, ClientError> {
        while !self.ended {
            match timeout(self.idle, self.body.frame()).await {
                Err(_) => {
                    return Err(ClientError::timeout(format!(
                        "the export sent nothing for {:?}",
                        self.idle
                    )));
                }
                Ok(None) => self.ended = true,
                Ok(Some(Err(error))) => {
                    self.ended = true;
                    return Err(ClientError::fetch("the export body was cut off or unreadable")
                        .with_status(StatusCode::OK)
                        .with_source(error));
                }
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data()
                        && !data.is_empty()
                    {
                        return Ok(Some(data));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Every remaining byte, in memory.
    ///
    /// # Errors
    /// As [`chunk`](Self::chunk).
    pub async fn bytes(mut self) -> Result<Bytes, ClientError> {
        let mut out = Vec::new();
        while let Some(chunk) = self.chunk().await? {
            out.extend_from_slice(&chunk);
        }
        Ok(Bytes::from(out))
    }
}

impl ParsedDualResponse {
    /// Starts downloading the export (`GET {url}/data`, `Accept` the format's media type) and
    /// returns once the response head has arrived; read its bytes with [`Download::chunk`] or
    /// [`Download::bytes`]. This crate decodes no binary format: the bytes are the server's (a Parquet
    /// file, an Arrow stream, …), for the application to store or hand to a reader.
    ///
    /// A resource whose query is still running is waited for (the server's `not_ready` answers are
    /// asked again after their `Retry-After`) for at most [`DownloadOptions::wait_timeout`].
    ///
    /// ```no_run
    /// use dual_client::{DownloadOptions, DualResponseClient, ExportFormat};
    ///
    /// # async fn run(tool_result: serde_json::Value) -> Result<(), Box<dyn std::error::Error>> {
    /// let parsed = DualResponseClient::new().parse_strict(&tool_result)?;
    /// let mut download = parsed.download(DownloadOptions::new(ExportFormat::Parquet)).await?;
    /// let mut file = Vec::new();
    /// while let Some(chunk) = download.chunk().await? {
    ///     file.extend_from_slice(&chunk); // or write it to disk as it comes
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// `RESOURCE_NOT_FOUND`, `RESOURCE_EXPIRED`, `QUERY_FAILED`, `TIMEOUT`, or `FETCH_ERROR` for any
    /// other failure, among them a 406 from a server that cannot produce the format (the error's
    /// [`status`](ClientError::status) says so) and an answer in another media type.
    pub async fn download(&self, options: DownloadOptions) -> Result<Download, ClientError> {
        let span = tracing::debug_span!("dual_client.download", url = %self.url,
            format = options.format.extension(), sort = options.sort.as_ref().map(tracing::field::display));
        async {
            let url = match options.range {
                None => crate::url::export_url(&self.url, options.sort.as_ref()),
                Some((offset, limit)) => crate::url::range_url(
                    &self.url,
                    offset,
                    limit.unwrap_or(u64::MAX),
                    options.sort.as_ref(),
                ),
            };
            let call = Call {
                accept: options.format.media_type(),
                ready_by: Some(Instant::now() + options.wait_timeout),
                ..Call::new(Method::GET, &url)
            };
            let client = self.client();
            let sent = client.send(&call).await?;
            let status = sent.response.status();
            if status != StatusCode::OK {
                let error = error_from_response(sent).await;
                return Err(crate::parsed::explain_failure(client, &self.url, error).await);
            }
            let content_type = sent
                .response
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            let essence = content_type.split(';').next().unwrap_or_default().trim();
            if !essence.eq_ignore_ascii_case(options.format.media_type()) {
                return Err(ClientError::fetch(format!(
                    "asked for {}, the server answered `{content_type}`",
                    options.format.media_type()
                ))
                .with_status(status));
            }
            if sent
                .response
                .headers()
                .get(header::CONTENT_ENCODING)
                .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"))
            {
                return Err(ClientError::fetch(
                    "the export is content-encoded although the client asked for no encoding",
                )
                .with_status(status));
            }
            Ok(Download {
                body: sent.response.into_body(),
                content_type,
                idle: client.timeout(),
                ended: false,
            })
        }
        .instrument(span)
        .await
    }
}
