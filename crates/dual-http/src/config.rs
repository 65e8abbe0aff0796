//! The handler's options and their builder.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use dual_server::DualResponseServer;

use crate::{Anonymous, Authorize, Cors, CsvFormulas};

/// Default limit of a request body: 64 KiB.
pub const DEFAULT_BODY_LIMIT: usize = 64 * 1024;
/// Default time a request body has to arrive in full: 30 s.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The options a [`DualHttp`](crate::DualHttp) handler runs with.
#[derive(Clone)]
pub struct HttpConfig {
    pub(crate) prefix: String,
    pub(crate) body_limit: usize,
    pub(crate) body_timeout: Option<Duration>,
    pub(crate) cors: Option<Cors>,
    pub(crate) authorize: Arc<dyn Authorize>,
    pub(crate) csv_formulas: CsvFormulas,
    #[cfg(feature = "parquet")]
    pub(crate) parquet_row_group_rows: usize,
}

impl HttpConfig {
    /// The path prefix the handler strips (`""` when it serves `/{id}` directly).
    #[must_use]
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The largest request body accepted, in bytes.
    #[must_use]
    pub fn body_limit(&self) -> usize {
        self.body_limit
    }

    /// The time a request body has to arrive in full, if bounded.
    #[must_use]
    pub fn body_timeout(&self) -> Option<Duration> {
        self.body_timeout
    }

    /// The CORS configuration, if any.
    #[must_use]
    pub fn cors(&self) -> Option<&Cors> {
        self.cors.as_ref()
    }

    /// The authorization hook.
    #[must_use]
    pub fn authorize(&self) -> &dyn Authorize {
        &*self.authorize
    }

    /// Whether CSV exports neutralise cells a spreadsheet would run as formulas.
    #[must_use]
    pub fn csv_formulas(&self) -> CsvFormulas {
        self.csv_formulas
    }

    /// The rows of a Parquet export's row group.
    #[cfg(feature = "parquet")]
    #[must_use]
    pub fn parquet_row_group_rows(&self) -> usize {
        self.parquet_row_group_rows
    }

    /// What the export encoders take from these options.
    pub(crate) fn encode_options(&self) -> crate::encode::EncodeOptions {
        crate::encode::EncodeOptions {
            formulas: self.csv_formulas,
            #[cfg(feature = "parquet")]
            row_group_rows: self.parquet_row_group_rows,
        }
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            prefix: String::new(),
            body_limit: DEFAULT_BODY_LIMIT,
            body_timeout: Some(DEFAULT_BODY_TIMEOUT),
            cors: None,
            authorize: Arc::new(Anonymous),
            csv_formulas: CsvFormulas::default(),
            #[cfg(feature = "parquet")]
            parquet_row_group_rows: crate::DEFAULT_PARQUET_ROW_GROUP_ROWS,
        }
    }
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("prefix", &self.prefix)
            .field("body_limit", &self.body_limit)
            .field("body_timeout", &self.body_timeout)
            .field("cors", &self.cors)
            .field("csv_formulas", &self.csv_formulas)
            .finish_non_exhaustive()
    }
}

/// Builds a [`DualHttp`](crate::DualHttp) handler.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use dual_http::{Cors, DualHttp};
/// let server = dual_server::DualResponseServer::builder()
///     .base_url("https://api.example.com/resources")
///     .build()?;
/// let handler = DualHttp::builder(server)
///     .prefix("/resources")
///     .body_limit(16 * 1024)
///     .cors(Cors::any())
///     .build();
/// assert_eq!(handler.config().prefix(), "/resources");
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use]
pub struct DualHttpBuilder {
    pub(crate) server: DualResponseServer,
    pub(crate) config: HttpConfig,
}

impl DualHttpBuilder {
    pub(crate) fn new(server: DualResponseServer) -> Self {
        Self {
            server,
            config: HttpConfig::default(),
        }
    }

    /// The path prefix the handler is mounted under, e.g. `/resources`; it serves `{prefix}/{id}` and
    /// `{prefix}/{id}/data` and answers 404 for paths outside it. Leave it empty (the default) when
    /// the stack strips the prefix before calling the handler, as axum's `nest_service` does.
    /// A missing leading slash is added and trailing slashes are dropped.
    pub fn prefix(mut self, prefix: impl AsRef<str>) -> Self {
        let trimmed = prefix.as_ref().trim_end_matches('/');
        self.config.prefix = match trimmed {
            "" => String::new(),
            p if p.starts_with('/') => p.to_owned(),
            p => format!("/{p}"),
        };
        self
    }

    /// The largest request body accepted (default [`DEFAULT_BODY_LIMIT`], 64 KiB); larger bodies get
    /// 413 `payload_too_large` without being buffered.
    pub fn body_limit(mut self, limit: usize) -> Self {
        self.config.body_limit = limit;
        self
    }

    /// The time a request body has to arrive in full (default [`DEFAULT_BODY_TIMEOUT`], 30 s); a
    /// slower body gets 408 `request_timeout`. This bounds a half-sent body inside the handler; the
    /// time to send the request head and idle keep-alive connections are the server's to bound (see
    /// the crate's `hyper_server` example).
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.config.body_timeout = Some(timeout);
        self
    }

    /// No request-body timeout (when the stack in front already bounds bodies).
    pub fn without_body_timeout(mut self) -> Self {
        self.config.body_timeout = None;
        self
    }

    /// Enables CORS (off by default).
    pub fn cors(mut self, cors: Cors) -> Self {
        self.config.cors = Some(cors);
        self
    }

    /// The authorization hook (default [`Anonymous`]: only resources without an owner are visible).
    pub fn authorize(mut self, hook: impl Authorize) -> Self {
        self.config.authorize = Arc::new(hook);
        self
    }

    /// An authorization hook that is already shared.
    pub fn shared_authorize(mut self, hook: Arc<dyn Authorize>) -> Self {
        self.config.authorize = hook;
        self
    }

    /// What CSV exports do with a string cell or column name that a spreadsheet would run as a
    /// formula (one starting with `=`, `+`, `-`, `@`, tab or CR): by default
    /// ([`CsvFormulas::Neutralize`]) it gets a leading `'`, and a field holding `;` is quoted;
    /// [`CsvFormulas::Verbatim`] writes strings as they are. JSON numbers such as `-5` are never
    /// changed, and the other formats always carry values exactly.
    pub fn csv_formulas(mut self, formulas: CsvFormulas) -> Self {
        self.config.csv_formulas = formulas;
        self
    }

    /// The rows of a Parquet export's row group (default
    /// [`DEFAULT_PARQUET_ROW_GROUP_ROWS`](crate::DEFAULT_PARQUET_ROW_GROUP_ROWS), 65,536; 0 counts as
    /// 1). An export holds one row group in memory, also closed early once its encoded size reaches
    /// about 32 MiB, so this bounds the export's memory; larger row groups compress better.
    #[cfg(feature = "parquet")]
    pub fn parquet_row_group_rows(mut self, rows: usize) -> Self {
        self.config.parquet_row_group_rows = rows.max(1);
        self
    }
}
