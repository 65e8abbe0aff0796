//! `--spool s3://BUCKET[/PREFIX]`: an [`ObjectStoreSpool`] on S3 or an S3-compatible server.

use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::{BackoffConfig, ClientConfigKey, RetryConfig};

use super::ObjectStoreSpool;
use crate::SpoolError;

/// Default timeout of one request.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Default timeout of a connection attempt.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Builds an [`ObjectStoreSpool`] on S3 from `s3://BUCKET[/PREFIX]`.
///
/// The endpoint, region and credentials come from the standard `AWS_*` environment variables
/// (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`, …) unless set here. An `http://` endpoint is allowed (an S3-compatible
/// server on the local network); TLS uses rustls with the ring provider.
///
/// ```no_run
/// # async fn demo() -> Result<(), dual_spool::SpoolError> {
/// use dual_spool::{S3SpoolBuilder, Spool};
///
/// let backend = S3SpoolBuilder::from_url("s3://snapshots/instance-pool-a")?
///     .endpoint("http://127.0.0.1:9000")
///     .build()?;
/// let spool = Spool::new(backend);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct S3SpoolBuilder {
    s3: AmazonS3Builder,
    prefix: String,
    retry: RetryConfig,
}

impl S3SpoolBuilder {
    /// Parses `s3://BUCKET[/PREFIX]` and reads the `AWS_*` environment.
    ///
    /// # Errors
    ///
    /// [`SpoolError::Config`] when `url` is not of that form.
    pub fn from_url(url: &str) -> Result<Self, SpoolError> {
        let bad = || SpoolError::config(format!("{url:?} is not s3://BUCKET[/PREFIX]"), None);
        let rest = url.strip_prefix("s3://").ok_or_else(bad)?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad());
        }
        let mut s3 = AmazonS3Builder::from_env().with_bucket_name(bucket);
        let endpoint = s3.get_config_value(&AmazonS3ConfigKey::Endpoint);
        if endpoint.is_some_and(|e| e.starts_with("http://")) {
            s3 = s3.with_allow_http(true);
        }
        let this = Self {
            s3,
            prefix: prefix.trim_matches('/').to_owned(),
            retry: RetryConfig::default(),
        };
        Ok(this.timeout(TIMEOUT).connect_timeout(CONNECT_TIMEOUT))
    }

    /// The S3 endpoint, for S3-compatible servers (overrides `AWS_ENDPOINT_URL`); `http://` is
    /// allowed.
    #[must_use]
    pub fn endpoint(mut self, endpoint: &str) -> Self {
        self.s3 = self
            .s3
            .with_endpoint(endpoint)
            .with_allow_http(endpoint.starts_with("http://"));
        self
    }

    /// The region (overrides `AWS_REGION`).
    #[must_use]
    pub fn region(mut self, region: &str) -> Self {
        self.s3 = self.s3.with_region(region);
        self
    }

    /// Static credentials (override `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`).
    #[must_use]
    pub fn credentials(mut self, access_key_id: &str, secret_access_key: &str) -> Self {
        self.s3 = self
            .s3
            .with_access_key_id(access_key_id)
            .with_secret_access_key(secret_access_key);
        self
    }

    /// Timeout of one request (default 30 s).
    #[must_use]
    pub fn timeout(self, timeout: Duration) -> Self {
        self.client_timeout(ClientConfigKey::Timeout, timeout)
    }

    /// Timeout of a connection attempt (default 5 s).
    #[must_use]
    pub fn connect_timeout(self, timeout: Duration) -> Self {
        self.client_timeout(ClientConfigKey::ConnectTimeout, timeout)
    }

    /// Sets the HTTP client's timeout `key` to `timeout`.
    fn client_timeout(mut self, key: ClientConfigKey, timeout: Duration) -> Self {
        self.s3 = self.s3.with_config(
            AmazonS3ConfigKey::Client(key),
            format!("{}ms", timeout.as_millis()),
        );
        self
    }

    /// Retries of a failed request (object_store's default: 10 retries within 3 minutes); a call
    /// fails as [`SpoolError::Unavailable`] once they are used up.
    #[must_use]
    pub fn retries(mut self, max_retries: usize, retry_timeout: Duration) -> Self {
        self.retry = RetryConfig {
            backoff: BackoffConfig {
                init_backoff: Duration::from_millis(50),
                max_backoff: retry_timeout.min(Duration::from_secs(15)),
                base: 2.0,
            },
            max_retries,
            retry_timeout,
        };
        self
    }

    /// Any other `object_store` setting.
    #[must_use]
    pub fn configure(mut self, f: impl FnOnce(AmazonS3Builder) -> AmazonS3Builder) -> Self {
        self.s3 = f(self.s3);
        self
    }

    /// The spool backend.
    ///
    /// # Errors
    ///
    /// [`SpoolError::Config`] when `object_store` rejects the configuration.
    pub fn build(self) -> Result<ObjectStoreSpool, SpoolError> {
        // reqwest is built without a default crypto provider; use rustls' ring provider unless the
        // application installed one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let store = self
            .s3
            .with_retry(self.retry)
            .build()
            .map_err(|e| SpoolError::config("S3 spool", Some(e.into())))?;
        ObjectStoreSpool::new(Arc::new(store), &self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_a_bucket_and_an_optional_prefix() {
        let spool = S3SpoolBuilder::from_url("s3://bucket/a/b/")
            .expect("valid")
            .region("us-east-1")
            .build()
            .expect("builds");
        assert_eq!(spool.prefix().as_ref(), "a/b");
        assert!(S3SpoolBuilder::from_url("s3://bucket").is_ok());
        for bad in ["s3://", "s3:///x", "http://bucket/x", "bucket"] {
            assert!(
                matches!(S3SpoolBuilder::from_url(bad), Err(SpoolError::Config { .. })),
                "{bad}"
            );
        }
    }
}
