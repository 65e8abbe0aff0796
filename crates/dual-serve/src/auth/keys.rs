//! One trusted issuer's signing keys, cached for their lifetime.
//!
//! - The key set is fetched on first use, from the configured JWKS URL or from the `jwks_uri` of the
//!   issuer's metadata (discovered once, then kept).
//! - It is kept for its `Cache-Control: max-age`, bounded by [`KeyPolicy`], and fetched again when
//!   that has passed.
//! - A token naming a `kid` the set does not have causes one refresh, at most one per
//!   [`KeyPolicy::unknown_kid_interval`]: a stream of made-up `kid`s costs the issuer one request
//!   per interval, not one per token.
//! - When the issuer cannot be reached, the keys fetched before keep working until their lifetime
//!   ends; then requests get [`KeysUnavailable`] (a retryable `503`) and a new fetch is tried at most
//!   once per [`KeyPolicy::retry_after`].
//!
//! One fetch runs at a time per issuer (the others wait for it and use its keys).

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, OnceCell};

use super::fetch::{FetchError, Http};
use super::jwks::{self, Key};

/// How keys are cached and refreshed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyPolicy {
    /// Lifetime of a key set whose response has no `max-age`.
    pub(crate) default_lifetime: Duration,
    /// Bounds of a key set's lifetime, whatever its `max-age` says.
    pub(crate) min_lifetime: Duration,
    pub(crate) max_lifetime: Duration,
    /// Least time between two refreshes for unknown `kid`s.
    pub(crate) unknown_kid_interval: Duration,
    /// Least time between two fetches after one failed without usable keys.
    pub(crate) retry_after: Duration,
}

/// The issuer's keys have expired and cannot be fetched now: retry after `retry_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeysUnavailable {
    pub(crate) retry_after: Duration,
}

/// Where the key set is.
#[derive(Debug)]
enum Source {
    /// A configured JWKS URL.
    Configured(String),
    /// The `jwks_uri` of the issuer's metadata, once discovered.
    Discovered(OnceCell<String>),
}

/// A fetched key set and when it expires.
#[derive(Debug, Clone)]
pub(crate) struct KeySet {
    pub(crate) keys: Arc<[Key]>,
    pub(crate) expires: Instant,
}

#[derive(Debug, Default)]
struct FetchState {
    last_unknown_kid_refresh: Option<Instant>,
    failed_at: Option<Instant>,
}

/// Whether `keys` has a key named `kid` (of whatever type).
fn knows(keys: &[Key], kid: &str) -> bool {
    keys.iter().any(|key| key.kid.as_deref() == Some(kid))
}

/// The keys of one issuer.
#[derive(Debug)]
pub(crate) struct IssuerKeys {
    issuer: String,
    source: Source,
    // A std lock, held only to read or replace the `Arc`, never across an `.await`.
    current: RwLock<Option<KeySet>>,
    // Held across the fetch, so one fetch runs at a time.
    fetch: Mutex<FetchState>,
}

impl IssuerKeys {
    /// The keys of `issuer`, at `jwks_uri` when given, else discovered from its metadata.
    pub(crate) fn new(issuer: String, jwks_uri: Option<String>) -> Self {
        let source = match jwks_uri {
            Some(uri) => Source::Configured(uri),
            None => Source::Discovered(OnceCell::new()),
        };
        Self {
            issuer,
            source,
            current: RwLock::new(None),
            fetch: Mutex::new(FetchState::default()),
        }
    }

    /// The issuer.
    pub(crate) fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The key set to verify a token with `kid` against: the cached one while it lives (refreshed
    /// once, rate-limited, when it has no key with that `kid` at all), else a fresh one.
    pub(crate) async fn keys_for(
        &self,
        http: &Http,
        policy: &KeyPolicy,
        kid: Option<&str>,
    ) -> Result<KeySet, KeysUnavailable> {
        if let Some(keys) = self.live() {
            if kid.is_none_or(|kid| knows(&keys.keys, kid)) {
                return Ok(keys);
            }
            let mut state = self.fetch.lock().await;
            // Another request may have refreshed while this one waited.
            let keys = match self.live() {
                Some(fresh) if kid.is_none_or(|kid| knows(&fresh.keys, kid)) => return Ok(fresh),
                Some(fresh) => fresh,
                None => keys,
            };
            let now = Instant::now();
            if state
                .last_unknown_kid_refresh
                .is_some_and(|at| now.duration_since(at) < policy.unknown_kid_interval)
            {
                return Ok(keys);
            }
            state.last_unknown_kid_refresh = Some(now);
            tracing::debug!(issuer = %self.issuer, "unknown kid: refreshing the issuer's keys");
            return Ok(self.refresh(http, policy, &mut state).await.unwrap_or(keys));
        }
        let mut state = self.fetch.lock().await;
        if let Some(keys) = self.live() {
            return Ok(keys);
        }
        if let Some(failed_at) = state.failed_at {
            let waited = failed_at.elapsed();
            if waited < policy.retry_after {
                return Err(KeysUnavailable {
                    retry_after: policy.retry_after - waited,
                });
            }
        }
        self.refresh(http, policy, &mut state)
            .await
            .ok_or(KeysUnavailable {
                retry_after: policy.retry_after,
            })
    }

    /// Whether `keys` is the key set cached now and alive (not replaced by a refresh since).
    pub(crate) fn is_current(&self, keys: &Arc<[Key]>) -> bool {
        // Read in place (no clone): this is on the path of every request with a cached token.
        self.with_live(|set| set.is_some_and(|set| Arc::ptr_eq(&set.keys, keys)))
    }

    /// The cached keys while they live.
    fn live(&self) -> Option<KeySet> {
        self.with_live(|set| set.cloned())
    }

    /// `read` of the cached keys while they live, under the read lock.
    fn with_live<T>(&self, read: impl FnOnce(Option<&KeySet>) -> T) -> T {
        let current = self
            .current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        read(current.as_ref().filter(|set| Instant::now() < set.expires))
    }

    /// Fetches the key set and caches it; `None` (logged) when that failed.
    async fn refresh(&self, http: &Http, policy: &KeyPolicy, state: &mut FetchState) -> Option<KeySet> {
        match self.fetch_keys(http).await {
            Ok((keys, max_age)) => {
                let lifetime = max_age
                    .unwrap_or(policy.default_lifetime)
                    .clamp(policy.min_lifetime, policy.max_lifetime);
                let keys: Arc<[Key]> = keys.into();
                tracing::info!(issuer = %self.issuer, keys = keys.len(), lifetime_secs = lifetime.as_secs(), "fetched the issuer's keys");
                let set = KeySet {
                    keys,
                    expires: Instant::now() + lifetime,
                };
                *self
                    .current
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(set.clone());
                state.failed_at = None;
                Some(set)
            }
            Err(error) => {
                tracing::warn!(issuer = %self.issuer, %error, "cannot fetch the issuer's keys");
                state.failed_at = Some(Instant::now());
                None
            }
        }
    }

    async fn fetch_keys(&self, http: &Http) -> Result<(Vec<Key>, Option<Duration>), FetchError> {
        let uri = match &self.source {
            Source::Configured(uri) => uri.as_str(),
            Source::Discovered(cell) => cell
                .get_or_try_init(|| http.discover_jwks_uri(&self.issuer))
                .await?
                .as_str(),
        };
        let fetched = http.get(uri).await?;
        let keys = jwks::parse_set(&fetched.body).map_err(|source| FetchError::Keys {
            url: uri.to_owned(),
            source,
        })?;
        Ok((keys, fetched.max_age))
    }
}
