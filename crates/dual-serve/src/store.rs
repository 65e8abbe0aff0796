//! `--store`: which [`ResourceStore`] the server uses — memory, Redis or PostgreSQL — and how it is
//! connected.

use std::sync::Arc;
use std::time::Duration;

use dual_store::{MemoryStore, ResourceStore, redact_secrets};
use dual_store_postgres::PostgresStore;
use dual_store_redis::RedisStore;

/// The default time limit of one store operation (and of opening a store connection).
pub const DEFAULT_STORE_TIMEOUT: Duration = Duration::from_secs(2);

/// How to reach the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// `memory`, `redis://HOST:PORT[/DB]` (`rediss://` for TLS) or `postgres://USER@HOST:PORT/DB`.
    pub spec: String,
    /// Redis key prefix (default `dual:`) or PostgreSQL schema (default: the `search_path`'s first);
    /// each deployment, and each test run, takes its own.
    pub prefix: Option<String>,
    /// Time limit of one store operation, and of opening one connection.
    pub timeout: Duration,
}

impl StoreOptions {
    /// `spec` with no prefix and [`DEFAULT_STORE_TIMEOUT`].
    #[must_use]
    pub fn new(spec: impl Into<String>) -> Self {
        Self {
            spec: spec.into(),
            prefix: None,
            timeout: DEFAULT_STORE_TIMEOUT,
        }
    }
}

/// A connected store and what the server needs to know about it.
#[derive(Debug)]
pub struct OpenedStore {
    /// The store.
    pub store: Arc<dyn ResourceStore>,
    /// Whether the backend drops expired resources itself (Redis TTLs), so no sweeper is needed.
    pub native_expiry: bool,
    /// The spec with any password replaced by `***`, for logs.
    pub redacted: String,
}

/// Why a store could not be opened; messages never carry a password.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreSpecError {
    /// The spec names no known backend.
    #[error("unknown store `{0}`: use `memory`, `redis://HOST:PORT[/DB]` or `postgres://USER@HOST:PORT/DB`")]
    Unknown(String),
    /// `--store-prefix` with the memory store, which has nothing to prefix.
    #[error("--store-prefix applies to redis:// and postgres:// stores only")]
    PrefixWithoutSharedStore,
    /// Redis refused the configuration or could not be reached.
    #[error("cannot open the redis store {url}: {source}")]
    Redis {
        /// The URL, redacted.
        url: String,
        /// The store's error.
        source: dual_store_redis::ConnectError,
    },
    /// PostgreSQL refused the configuration or could not be reached.
    #[error("cannot open the postgres store {url}: {source}")]
    Postgres {
        /// The URL, redacted.
        url: String,
        /// The store's error.
        source: dual_store_postgres::ConnectError,
    },
}

/// Connects the store `options.spec` names. Redis and PostgreSQL are reached at start-up, so a
/// wrong URL fails here rather than on the first tool call; PostgreSQL's table is created when missing.
///
/// # Errors
/// [`StoreSpecError`] for an unknown spec, a bad option or an unreachable store.
pub async fn open(options: &StoreOptions) -> Result<OpenedStore, StoreSpecError> {
    let spec = options.spec.trim();
    let scheme = spec.split_once("://").map_or(spec, |(scheme, _)| scheme);
    let redacted = redact_secrets(spec);
    let (store, native_expiry): (Arc<dyn ResourceStore>, bool) = match scheme.to_ascii_lowercase().as_str() {
        "memory" => {
            if options.prefix.is_some() {
                return Err(StoreSpecError::PrefixWithoutSharedStore);
            }
            (Arc::new(MemoryStore::new()), false)
        }
        "redis" | "rediss" => {
            let mut builder = RedisStore::builder(spec)
                .operation_timeout(options.timeout)
                .connect_timeout(options.timeout);
            if let Some(prefix) = &options.prefix {
                builder = builder.key_prefix(prefix.clone());
            }
            let store = builder.connect().await.map_err(|source| StoreSpecError::Redis {
                url: redacted.clone(),
                source,
            })?;
            (Arc::new(store), true)
        }
        "postgres" | "postgresql" => {
            let mut builder = PostgresStore::builder(spec)
                .operation_timeout(options.timeout)
                .connect_timeout(options.timeout);
            if let Some(schema) = &options.prefix {
                builder = builder.schema(schema.clone());
            }
            let store = builder
                .connect()
                .await
                .map_err(|source| StoreSpecError::Postgres {
                    url: redacted.clone(),
                    source,
                })?;
            (Arc::new(store), false)
        }
        _ => return Err(StoreSpecError::Unknown(redacted)),
    };
    Ok(OpenedStore {
        store,
        native_expiry,
        redacted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dual_testkit::wait::done_within;

    #[tokio::test]
    async fn unknown_specs_and_stray_prefixes_are_refused() {
        let error = open(&StoreOptions::new("mongodb://u:pw@h/db"))
            .await
            .expect_err("unknown");
        assert!(matches!(error, StoreSpecError::Unknown(_)), "{error}");
        assert!(!error.to_string().contains("pw"), "{error}");
        let mut options = StoreOptions::new("memory");
        options.prefix = Some("x".to_owned());
        let error = open(&options).await.expect_err("prefix");
        assert!(matches!(error, StoreSpecError::PrefixWithoutSharedStore));
        options.prefix = None;
        assert!(!open(&options).await.expect("memory").native_expiry);
    }

    #[tokio::test]
    async fn unreachable_stores_fail_in_bounded_time_without_the_password() {
        for (spec, shown) in [
            ("redis://:topsecret@127.0.0.1:1/0", "redis://:***@127.0.0.1:1/0"),
            (
                "postgres://u:topsecret@127.0.0.1:1/db",
                "postgres://u:***@127.0.0.1:1/db",
            ),
        ] {
            let mut options = StoreOptions::new(spec);
            options.timeout = Duration::from_millis(300);
            let started = std::time::Instant::now();
            let error = open(&options).await.expect_err("nothing listens on port 1");
            done_within(
                "the failure of an unreachable store",
                started,
                Duration::from_secs(10),
            );
            assert!(!error.to_string().contains("topsecret"), "{error}");
            assert!(error.to_string().contains(shown), "{error}");
        }
    }
}
