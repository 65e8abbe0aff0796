//! A cache keyed by a token's SHA-256 (the token itself is never kept), bounded in entries (the
//! oldest go first) and in time (each entry has its own expiry).

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::time::Instant;

/// A token's SHA-256.
pub(crate) type Digest = [u8; 32];

/// The SHA-256 of `token`.
pub(crate) fn digest(token: &[u8]) -> Digest {
    let mut digest = [0; 32];
    digest.copy_from_slice(ring::digest::digest(&ring::digest::SHA256, token).as_ref());
    digest
}

/// Hashes a [`Digest`] by its first eight bytes: a SHA-256 is uniform already, and no one picks
/// the tokens whose digests would collide in a bucket without breaking SHA-256 (a collision would
/// only make a lookup slower; the map still compares whole digests).
#[derive(Debug, Default)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // The digest's bytes (an array hashes its length first, through `write_usize`).
        let mut word = [0; 8];
        let n = bytes.len().min(8);
        word[..n].copy_from_slice(&bytes[..n]);
        self.0 ^= u64::from_le_bytes(word);
    }

    fn write_usize(&mut self, _length: usize) {}
}

/// Values by token digest.
#[derive(Debug)]
pub(crate) struct TokenCache<V> {
    max_entries: usize,
    // A std lock, held only to read or update the map, never across an `.await`.
    inner: Mutex<Inner<V>>,
}

#[derive(Debug)]
struct Inner<V> {
    entries: HashMap<Digest, (V, Instant), BuildHasherDefault<DigestHasher>>,
    /// Insertion order, oldest first (a digest may be here after its entry went).
    order: VecDeque<Digest>,
}

impl<V: Clone> TokenCache<V> {
    /// An empty cache of at most `max_entries` entries.
    pub(crate) fn new(max_entries: usize) -> Self {
        Self {
            max_entries: max_entries.max(1),
            inner: Mutex::new(Inner {
                entries: HashMap::default(),
                order: VecDeque::new(),
            }),
        }
    }

    /// The value of `digest` while it lives.
    pub(crate) fn get(&self, digest: &Digest) -> Option<V> {
        let inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (value, expires) = inner.entries.get(digest)?;
        (Instant::now() < *expires).then(|| value.clone())
    }

    /// Keeps `value` for `digest` until `expires` (nothing when that is past); at the cap, expired
    /// entries go, then the oldest.
    pub(crate) fn insert(&self, digest: Digest, value: V, expires: Instant) {
        let now = Instant::now();
        if expires <= now {
            return;
        }
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if inner.entries.len() >= self.max_entries && !inner.entries.contains_key(&digest) {
            inner.entries.retain(|_, (_, expires)| now < *expires);
            while inner.entries.len() >= self.max_entries {
                let Some(oldest) = inner.order.pop_front() else {
                    break;
                };
                inner.entries.remove(&oldest);
            }
        }
        if inner.entries.insert(digest, (value, expires)).is_none() {
            inner.order.push_back(digest);
        }
        // Digests whose entries went stay in `order` until popped: keep it within twice the cap.
        if inner.order.len() > 2 * self.max_entries {
            let Inner { entries, order } = &mut *inner;
            order.retain(|digest| entries.contains_key(digest));
        }
    }

    /// How many entries are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().map_or(0, |inner| inner.entries.len())
    }

    /// How many digests the insertion order holds.
    #[cfg(test)]
    fn order_len(&self) -> usize {
        self.inner.lock().map_or(0, |inner| inner.order.len())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_cache_is_bounded_and_expires() {
        let cache = TokenCache::new(2);
        let later = Instant::now() + Duration::from_secs(60);
        for token in [&b"one"[..], b"two", b"three"] {
            cache.insert(digest(token), token.len(), later);
        }
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(&digest(b"one")), None, "the oldest went first");
        assert_eq!(cache.get(&digest(b"three")), Some(5));
        cache.insert(digest(b"three"), 6, later);
        assert_eq!(cache.get(&digest(b"three")), Some(6), "replaced in place");
        assert_eq!(cache.get(&digest(b"two")), Some(3));
        cache.insert(digest(b"past"), 1, Instant::now());
        assert_eq!(cache.get(&digest(b"past")), None);
        for round in 0..10u8 {
            cache.insert(digest(&[round]), 0, later);
        }
        assert_eq!(cache.len(), 2);
        assert!(cache.order_len() <= 4, "{}", cache.order_len());
    }

    #[test]
    fn an_entry_ends_at_its_expiry() {
        let cache = TokenCache::new(4);
        cache.insert(digest(b"short"), 1, Instant::now() + Duration::from_millis(20));
        assert_eq!(cache.get(&digest(b"short")), Some(1));
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(cache.get(&digest(b"short")), None);
    }
}
