//! Options of a [`RedisStore`] and connecting it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use dual_store::Clock;
use redis::aio::ConnectionManagerConfig;

use crate::ConnectError;
use crate::connection::Connection;
use crate::shared::{Keys, Shared};
use crate::store::RedisStore;
use dual_store::redact_secrets;

/// The default key prefix.
pub(crate) const DEFAULT_PREFIX: &str = "dual:";

impl RedisStore {
    /// Options for a store at `url` (`redis://[user:password@]host[:port][/db]`).
    pub fn builder(url: impl Into<String>) -> RedisStoreBuilder {
        RedisStoreBuilder::new(url)
    }

    /// Connects to `url` with the default options.
    ///
    /// # Errors
    ///
    /// As [`RedisStoreBuilder::connect`].
    pub async fn connect(url: impl Into<String>) -> Result<Self, ConnectError> {
        Self::builder(url).connect().await
    }
}

/// Configures and connects a [`RedisStore`]; made by [`RedisStore::builder`].
#[derive(Clone)]
#[must_use]
pub struct RedisStoreBuilder {
    url: String,
    prefix: String,
    operation_timeout: Duration,
    connect_timeout: Duration,
    grace: Duration,
    purge_batch: usize,
    clock: Clock,
}

impl RedisStoreBuilder {
    pub(crate) fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            prefix: DEFAULT_PREFIX.to_owned(),
            operation_timeout: Duration::from_secs(3),
            connect_timeout: Duration::from_secs(3),
            grace: Duration::from_secs(60 * 60),
            purge_batch: 1_000,
            clock: Clock::system(),
        }
    }

    /// The prefix of every key the store writes (default `dual:`). Give each deployment (and each
    /// test run) its own; the store never touches keys outside it.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long one store operation may take, reconnecting included, before it fails with
    /// `StoreError::Unavailable` (default 3 s).
    pub fn operation_timeout(mut self, timeout: Duration) -> Self {
        self.operation_timeout = timeout;
        self
    }

    /// How long one attempt to open a connection may take (default 3 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long Redis keeps a record past its `expires_at` (default 1 h). Within the window the store
    /// answers `Lookup::Expired`; after it Redis has dropped the key and the store answers `Missing`.
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// How many records one purge script deletes before yielding the server to other clients
    /// (default 1,000; a Redis script blocks the server while it runs).
    pub fn purge_batch(mut self, batch: usize) -> Self {
        self.purge_batch = batch;
        self
    }

    /// Where a save reads "now" to turn `expires_at` into a TTL (default: the system clock).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Checks the options and connects.
    ///
    /// # Errors
    ///
    /// [`ConnectError::Config`] for a malformed URL, an empty prefix, a zero timeout or batch;
    /// [`ConnectError::Store`] when Redis cannot be reached within the operation timeout.
    pub async fn connect(self) -> Result<RedisStore, ConnectError> {
        if self.prefix.is_empty() {
            return Err(ConnectError::config("redis: the key prefix must not be empty"));
        }
        if self.operation_timeout.is_zero() || self.connect_timeout.is_zero() {
            return Err(ConnectError::config("redis: timeouts must be positive"));
        }
        if self.purge_batch == 0 {
            return Err(ConnectError::config("redis: the purge batch must be positive"));
        }
        let redacted = redact_secrets(&self.url);
        // Only the kind of the driver's error, not the error as the cause: its text may quote the URL,
        // password included.
        let client = redis::Client::open(self.url.as_str())
            .map_err(|e| ConnectError::config(format!("redis: cannot use {redacted}: {:?}", e.kind())))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.connect_timeout))
            .set_response_timeout(Some(self.operation_timeout))
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_secs(1))
            .set_number_of_retries(3);
        let connection = Connection::open(client, config, self.operation_timeout).await?;
        tracing::debug!(url = %redacted, prefix = %self.prefix, "redis store connected");
        Ok(RedisStore::from_shared(Arc::new(Shared {
            connection,
            keys: Keys::new(self.prefix),
            url: redacted,
            grace: self.grace,
            purge_batch: self.purge_batch.min(i32::MAX as usize),
            clock: self.clock,
        })))
    }
}

impl fmt::Debug for RedisStoreBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStoreBuilder")
            .field("url", &redact_secrets(&self.url))
            .field("prefix", &self.prefix)
            .field("operation_timeout", &self.operation_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("grace", &self.grace)
            .field("purge_batch", &self.purge_batch)
            .finish_non_exhaustive()
    }
}
