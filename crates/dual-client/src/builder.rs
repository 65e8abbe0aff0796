//! `DualResponseClientBuilder`: base URL, default headers, timeout, retries, TLS roots, and the
//! connection pool they make. `build`, which wraps that pool in a client, is in `client.rs`.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue, Uri, header};
use hyper_rustls::HttpsConnectorBuilder;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rustls::pki_types::CertificateDer;

use crate::error::ClientBuildError;
use crate::retry::RetryPolicy;
use crate::shared::{HeaderNames, Shared};

/// The default timeout of one request (connect, response head and body).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default limit on a single (non-streamed) response body: 256 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// Configures a [`DualResponseClient`](crate::DualResponseClient). Start with
/// [`DualResponseClient::builder`](crate::DualResponseClient::builder).
///
/// ```
/// use std::time::Duration;
/// use dual_client::DualResponseClient;
/// use http::{HeaderValue, header::AUTHORIZATION};
///
/// let client = DualResponseClient::builder()
///     .base_url("https://api.example.com/resources")
///     .header(AUTHORIZATION, HeaderValue::from_static("Bearer secret"))
///     .timeout(Duration::from_secs(10))
///     .max_retries(5)
///     .build()?;
/// assert_eq!(client.base_url(), Some("https://api.example.com/resources"));
/// # Ok::<(), dual_client::ClientBuildError>(())
/// ```
#[must_use]
pub struct DualResponseClientBuilder {
    base_url: Option<String>,
    headers: HeaderMap,
    timeout: Duration,
    retry: RetryPolicy,
    max_body_bytes: usize,
    pool_idle_timeout: Duration,
    extra_roots: Vec<Vec<u8>>,
}

impl Default for DualResponseClientBuilder {
    fn default() -> Self {
        Self {
            base_url: None,
            headers: HeaderMap::new(),
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            pool_idle_timeout: Duration::from_secs(90),
            extra_roots: Vec::new(),
        }
    }
}

impl fmt::Debug for DualResponseClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DualResponseClientBuilder")
            .field("base_url", &self.base_url)
            .field("headers", &HeaderNames(&self.headers))
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("extra_roots", &self.extra_roots.len())
            .finish_non_exhaustive()
    }
}

impl DualResponseClientBuilder {
    /// The base URL of the REST API, e.g. `https://api.example.com/resources`.
    ///
    /// When set, every request goes to `{base_url}/{id}`, whatever URL the tool result names (the id
    /// is taken from the resource URI, or else from the URL's last path segment), and a lone
    /// `resource_link` can be resolved. Set it whenever the default headers carry credentials: the URL
    /// in a tool result is data the model's tool produced, and without a base URL the client sends its
    /// headers wherever that URL points.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// A header sent on every request (e.g. `Authorization`). `Authorization`, `Cookie` and
    /// `Proxy-Authorization` values are marked sensitive. A later call with the same name replaces it.
    pub fn header(mut self, name: HeaderName, mut value: HeaderValue) -> Self {
        if matches!(
            name,
            header::AUTHORIZATION | header::COOKIE | header::PROXY_AUTHORIZATION
        ) {
            value.set_sensitive(true);
        }
        self.headers.insert(name, value);
        self
    }

    /// Adds every header of `headers` (see [`header`](Self::header)).
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        let mut last = None;
        for (name, value) in headers {
            // `HeaderMap::into_iter` yields the name only on the first of repeated values.
            if let Some(name) = name {
                last = Some(name);
            }
            if let Some(name) = &last {
                self = self.header(name.clone(), value);
            }
        }
        self
    }

    /// The timeout of one request attempt, covering connect, response head and body (default 30 s).
    ///
    /// For the streamed export used by `fetch_all` and `fetch_stream`, whose length grows with the
    /// result, it bounds the connect and response head and then every wait for the next chunk of body.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many times a failed request is retried (default 3; 0 disables retries). Only connect
    /// errors, 429 and 503 are retried; every other error status, and a timeout, is returned at once.
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.retry.max_retries = retries;
        self
    }

    /// The exponential backoff: `initial` before the first retry, doubling up to `max`, each wait
    /// jittered to between half and all of it (default 100 ms and 5 s).
    pub fn retry_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.retry.initial_backoff = initial;
        self.retry.max_backoff = max.max(initial);
        self
    }

    /// The longest `Retry-After` the client honours by waiting (default 60 s). When a 429 or 503 asks
    /// for longer, the client does not retry and returns the error.
    pub fn max_retry_after(mut self, max: Duration) -> Self {
        self.retry.max_retry_after = max;
        self
    }

    /// The largest response body read into memory at once: a page, metadata, an error (default
    /// 256 MiB). Streamed exports are not bounded by it; they hold one batch at a time.
    pub fn max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }

    /// How long an idle pooled connection is kept (default 90 s).
    pub fn pool_idle_timeout(mut self, idle: Duration) -> Self {
        self.pool_idle_timeout = idle;
        self
    }

    /// Trusts a further root certificate (DER-encoded) besides the Mozilla roots, e.g. a private CA.
    pub fn add_root_certificate(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.extra_roots.push(der.into());
        self
    }

    /// The connection pool and settings of the client [`build`](Self::build) makes.
    pub(crate) fn into_shared(self) -> Result<Shared, ClientBuildError> {
        let base_url = self.base_url.map(|url| validate_base_url(&url)).transpose()?;
        let tls = tls_config(&self.extra_roots)?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        let connector = HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(self.pool_idle_timeout)
            .build(connector);
        let mut headers = self.headers;
        if !headers.contains_key(header::USER_AGENT) {
            headers.insert(
                header::USER_AGENT,
                HeaderValue::from_static(concat!("dual-client/", env!("CARGO_PKG_VERSION"))),
            );
        }
        Ok(Shared {
            http: client,
            base_url,
            headers,
            timeout: self.timeout,
            retry: self.retry,
            max_body_bytes: self.max_body_bytes,
        })
    }
}

fn validate_base_url(url: &str) -> Result<String, ClientBuildError> {
    let invalid = |reason| ClientBuildError::InvalidBaseUrl { reason, source: None };
    let trimmed = url.trim().trim_end_matches('/');
    let uri: Uri = trimmed.parse().map_err(|e| ClientBuildError::InvalidBaseUrl {
        reason: "not a URL",
        source: Some(Box::new(e)),
    })?;
    match uri.scheme_str() {
        Some("http" | "https") if uri.authority().is_some() => {}
        _ => return Err(invalid("expected an absolute http:// or https:// URL")),
    }
    if uri.query().is_some() {
        return Err(invalid("a base URL cannot have a query string"));
    }
    Ok(trimmed.to_owned())
}

fn tls_config(extra_roots: &[Vec<u8>]) -> Result<rustls::ClientConfig, ClientBuildError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for (index, der) in extra_roots.iter().enumerate() {
        roots
            .add(CertificateDer::from(der.clone()))
            .map_err(|e| ClientBuildError::InvalidCertificate {
                number: index + 1,
                source: e.into(),
            })?;
    }
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ClientBuildError::Tls(e.into()))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_validation() {
        assert_eq!(
            validate_base_url("http://h:8080/resources/").ok().as_deref(),
            Some("http://h:8080/resources")
        );
        for bad in ["", "/resources", "ftp://h/x", "http://h/x?a=1", "not a url"] {
            assert!(validate_base_url(bad).is_err(), "{bad}");
        }
        let error = validate_base_url("not a url").err();
        let source = error.as_ref().and_then(std::error::Error::source);
        assert!(
            source.is_some_and(|source| source.is::<http::uri::InvalidUri>()),
            "the URI parser's error is the source: {error:?}"
        );
        let (Some(error), Some(source)) = (&error, source) else {
            return;
        };
        assert!(matches!(
            error,
            ClientBuildError::InvalidBaseUrl {
                reason: "not a URL",
                ..
            }
        ));
        assert_eq!(error.to_string(), "invalid base URL: not a URL");
        assert!(
            !error.to_string().contains(&source.to_string()),
            "Display does not repeat the cause"
        );
    }

    #[test]
    fn credentials_are_sensitive_and_hidden() {
        let builder = DualResponseClientBuilder::default()
            .header(header::AUTHORIZATION, HeaderValue::from_static("Bearer hunter2"));
        assert!(
            builder
                .headers
                .get(header::AUTHORIZATION)
                .is_some_and(HeaderValue::is_sensitive)
        );
        let debug = format!("{builder:?}");
        assert!(
            debug.contains("authorization") && !debug.contains("hunter2"),
            "{debug}"
        );
    }

    #[test]
    fn bad_root_certificate_is_an_error() {
        let result = DualResponseClientBuilder::default()
            .add_root_certificate(b"not a certificate".to_vec())
            .build();
        let Err(error) = result else {
            panic!("a bad root certificate is an error");
        };
        assert!(
            matches!(error, ClientBuildError::InvalidCertificate { number: 1, .. }),
            "{error:?}"
        );
        let source = std::error::Error::source(&error).map(ToString::to_string);
        assert!(
            source.is_some_and(|s| !s.is_empty()),
            "rustls's error is the source"
        );
    }
}
