//! RFC 7662 introspection of opaque access tokens (tokens that are not a JWS), with a cache keyed by
//! the token's SHA-256, bounded in entries and in time.
//!
//! The server authenticates to the introspection endpoint as a client (`client_secret_basic`). An
//! answer is cached until the earlier of its `exp` and the cache's time to live; an `active: false`
//! answer is cached too, so that a token sent again and again costs the authorization server one
//! request per time to live. At the cap, the oldest entries go first.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::HeaderValue;
use serde_json::{Map, Value};

use super::fetch::{FetchError, Http};

/// Introspection answers by token hash.
type Digest = [u8; 32];

/// What the authorization server said of a token: its claims when active, `None` when not.
pub(crate) type Answer = Option<Arc<Map<String, Value>>>;

/// Introspection of one issuer's opaque tokens.
pub(crate) struct Introspection {
    endpoint: String,
    authorization: HeaderValue,
    ttl: Duration,
    max_entries: usize,
    // A std lock, held only to read or update the map, never across an `.await`.
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    entries: HashMap<Digest, (Answer, Instant)>,
    /// Insertion order, oldest first (a digest may be here after its entry went).
    order: VecDeque<Digest>,
}

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
            cache: Mutex::new(Cache::default()),
        })
    }

    /// What the authorization server says of `token`: from the cache while it holds, else asked.
    pub(crate) async fn introspect(&self, http: &Http, token: &[u8]) -> Result<Answer, FetchError> {
        let digest = digest(token);
        if let Some(answer) = self.cached(&digest) {
            return Ok(answer);
        }
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
        self.remember(digest, answer.clone(), ttl);
        Ok(answer)
    }

    fn cached(&self, digest: &Digest) -> Option<Answer> {
        let cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (answer, expires) = cache.entries.get(digest)?;
        (Instant::now() < *expires).then(|| answer.clone())
    }

    fn remember(&self, digest: Digest, answer: Answer, ttl: Duration) {
        if ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.entries.len() >= self.max_entries {
            cache.entries.retain(|_, (_, expires)| now < *expires);
        }
        while cache.entries.len() >= self.max_entries {
            let Some(oldest) = cache.order.pop_front() else {
                break;
            };
            cache.entries.remove(&oldest);
        }
        if cache.entries.insert(digest, (answer, now + ttl)).is_none() {
            cache.order.push_back(digest);
        }
        // Digests whose entries went stay in `order` until popped: keep it within twice the cap.
        if cache.order.len() > 2 * self.max_entries {
            let Cache { entries, order } = &mut *cache;
            order.retain(|digest| entries.contains_key(digest));
        }
    }

    /// How many answers are cached.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.cache.lock().map_or(0, |cache| cache.entries.len())
    }
}

fn digest(token: &[u8]) -> Digest {
    let mut digest = [0; 32];
    digest.copy_from_slice(ring::digest::digest(&ring::digest::SHA256, token).as_ref());
    digest
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

    #[test]
    fn the_cache_is_bounded_and_expires() {
        let introspection = introspection(2);
        let active = Some(Arc::new(Map::new()));
        for token in [&b"one"[..], b"two", b"three"] {
            introspection.remember(digest(token), active.clone(), Duration::from_secs(60));
        }
        assert_eq!(introspection.len(), 2);
        assert_eq!(
            introspection.cached(&digest(b"one")),
            None,
            "the oldest went first"
        );
        assert!(introspection.cached(&digest(b"three")).is_some());
        introspection.remember(digest(b"inactive"), None, Duration::from_secs(60));
        assert_eq!(introspection.cached(&digest(b"inactive")), Some(None));
        introspection.remember(digest(b"expired"), active, Duration::ZERO);
        assert_eq!(introspection.cached(&digest(b"expired")), None);
        for round in 0..10u8 {
            introspection.remember(digest(&[round]), None, Duration::from_secs(60));
        }
        assert_eq!(introspection.len(), 2);
        let order = introspection.cache.lock().expect("not poisoned").order.len();
        assert!(order <= 4, "{order}");
    }
}
