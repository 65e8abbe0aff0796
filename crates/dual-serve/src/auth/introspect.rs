//! RFC 7662 introspection of opaque access tokens (tokens that are not a JWS), with a cache keyed by
//! the token's SHA-256, bounded in entries and in time.
//!
//! The server authenticates to the introspection endpoint as a client (`client_secret_basic`). An
//! answer is cached until the earlier of its `exp` and the cache's time to live; an `active: false`
//! answer is cached too, so that a token sent again and again costs the authorization server one
//! request per time to live. At the cap, the oldest entries go first.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::HeaderValue;
use serde_json::{Map, Value};

use super::cache::{TokenCache, digest};
use super::fetch::{FetchError, Http};

/// What the authorization server said of a token: its claims when active, `None` when not.
pub(crate) type Answer = Option<Arc<Map<String, Value>>>;

/// Introspection of one issuer's opaque tokens.
pub(crate) struct Introspection {
    endpoint: String,
    authorization: HeaderValue,
    ttl: Duration,
    max_entries: usize,
    cache: TokenCache<Answer>,
    /// When a request to the endpoint last failed (a std lock, never held across an `.await`).
    failed_at: Mutex<Option<Instant>>,
}

/// Least time between two requests to the endpoint after one failed: meanwhile opaque tokens not in
/// the cache get a retryable `503` at once, and the endpoint is not hammered while it is down.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(5);

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("ttl", &self.ttl)
            .field("max_entries", &self.max_entries)
            .finish_non_exhaustive()
    }
}

impl Introspection {
    /// Introspection at `endpoint` as the client `client_id` with `client_secret`, answers cached
    /// for at most `ttl`, at most `max_entries` of them.
    pub(crate) fn new(
        endpoint: String,
        client_id: &str,
        client_secret: &str,
        ttl: Duration,
        max_entries: usize,
    ) -> Option<Self> {
        // RFC 6749 §2.3.1: the id and the secret are form-encoded, then joined and base64-encoded.
        let credentials = format!(
            "{}:{}",
            form_encode(client_id.as_bytes()),
            form_encode(client_secret.as_bytes())
        );
        let mut authorization =
            HeaderValue::from_str(&format!("Basic {}", STANDARD.encode(credentials))).ok()?;
        authorization.set_sensitive(true);
        Some(Self {
            endpoint,
            authorization,
            ttl,
            max_entries,
            cache: TokenCache::new(max_entries),
            failed_at: Mutex::new(None),
        })
    }

    /// What the authorization server says of `token`: from the cache while it holds, else asked.
    /// When the endpoint cannot answer (logged), or failed less than [`RETRY_AFTER`] ago: `Err` with
    /// the time to wait.
    pub(crate) async fn introspect(&self, http: &Http, token: &[u8]) -> Result<Answer, Duration> {
        let digest = digest(token);
        if let Some(answer) = self.cache.get(&digest) {
            return Ok(answer);
        }
        let failed_at = *self
            .failed_at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(waited) = failed_at.map(|at| at.elapsed())
            && waited < RETRY_AFTER
        {
            return Err(RETRY_AFTER - waited);
        }
        match self.ask(http, token, digest).await {
            Ok(answer) => Ok(answer),
            Err(error) => {
                tracing::warn!(endpoint = %self.endpoint, %error, "cannot introspect a token");
                *self
                    .failed_at
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
                Err(RETRY_AFTER)
            }
        }
    }

    /// Asks the endpoint about `token` and caches the answer.
    async fn ask(
        &self,
        http: &Http,
        token: &[u8],
        digest: super::cache::Digest,
    ) -> Result<Answer, FetchError> {
        let body = format!("token={}&token_type_hint=access_token", form_encode(token));
        let fetched = http.post_form(&self.endpoint, &self.authorization, body).await?;
        let claims: Map<String, Value> =
            serde_json::from_slice(&fetched.body).map_err(|_| FetchError::Metadata {
                url: self.endpoint.clone(),
                reason: "the introspection answer is not a JSON object",
            })?;
        let active = claims.get("active") == Some(&Value::Bool(true));
        // Kept no longer than the token lives; a token already expired is kept as the refusal it
        // is now (the claim checks refuse it, beyond the leeway, at each use).
        let mut ttl = self.ttl;
        if let Some(exp) = claims.get("exp").and_then(Value::as_f64) {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64();
            if let Ok(left) = Duration::try_from_secs_f64(exp - now)
                && !left.is_zero()
            {
                ttl = ttl.min(left);
            }
        }
        let answer = active.then(|| Arc::new(claims));
        self.cache.insert(digest, answer.clone(), Instant::now() + ttl);
        Ok(answer)
    }
}

/// `application/x-www-form-urlencoded` of `bytes`: unreserved characters as they are, every other
/// byte `%XX`.
fn form_encode(bytes: &[u8]) -> String {
    let mut encoded = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    fn introspection(max_entries: usize) -> Introspection {
        Introspection::new(
            "https://idp.example.com/introspect".to_owned(),
            "mcp server",
            "s3cr:t",
            Duration::from_secs(60),
            max_entries,
        )
        .expect("valid credentials")
    }

    #[test]
    fn credentials_are_form_encoded_then_base64() {
        let introspection = introspection(4);
        let expected = format!("Basic {}", STANDARD.encode("mcp%20server:s3cr%3At"));
        assert_eq!(introspection.authorization.to_str().expect("ASCII"), expected);
        assert!(introspection.authorization.is_sensitive());
        assert!(!format!("{introspection:?}").contains("s3cr"));
        assert_eq!(form_encode(b"a+b/c=~"), "a%2Bb%2Fc%3D~");
    }
}
