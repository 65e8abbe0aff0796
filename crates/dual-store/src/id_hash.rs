//! [`IdHashing`]: the hasher for maps keyed by the ids the server makes ([`ResourceId`], alone or
//! with a segment number). Every page looks up its resource in the store's and the spool's maps, and
//! std's SipHash costs more for a 16-byte key than the rest of such a lookup.
//!
//! The keys are ULIDs the server drew (80 random bits each), never chosen by a client, who can only
//! look up ids, not insert them; so a fast hasher that is not built to resist chosen keys is enough
//! here. Each map still gets its own random seed, so two maps (and two processes) do not share a
//! bucket order.
//!
//! ```
//! use std::collections::HashMap;
//! use dual_core::ResourceId;
//! use dual_store::id_hash::IdHashing;
//!
//! let mut rows: HashMap<ResourceId, u64, IdHashing> = HashMap::default();
//! let id = ResourceId::new();
//! rows.insert(id, 269_000);
//! assert_eq!(rows.get(&id), Some(&269_000));
//! ```
//!
//! [`ResourceId`]: dual_core::ResourceId

use std::hash::{BuildHasher, Hasher, RandomState};

/// Multiplier of FxHash's step (rustc's own map hasher): odd, with its bits spread.
const MULTIPLIER: u64 = 0x517c_c1b7_2722_0a95;

/// Builds [`IdHasher`]s from a seed drawn from std's [`RandomState`] when the map is made.
#[derive(Debug, Clone)]
pub struct IdHashing {
    seed: u64,
}

impl Default for IdHashing {
    fn default() -> Self {
        Self {
            seed: RandomState::new().hash_one(MULTIPLIER),
        }
    }
}

impl BuildHasher for IdHashing {
    type Hasher = IdHasher;

    fn build_hasher(&self) -> IdHasher {
        IdHasher(self.seed)
    }
}

/// Folds each 64-bit word in with FxHash's step (rotate, xor, multiply) and, when finished, the
/// high half into the low one, whose bits a multiply alone mixes least (a map picks its bucket by
/// the low bits).
#[derive(Debug, Clone)]
pub struct IdHasher(u64);

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(MULTIPLIER);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            for (to, from) in word.iter_mut().zip(chunk) {
                *to = *from;
            }
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_u128(&mut self, n: u128) {
        let [low, high] = [n as u64, (n >> 64) as u64];
        self.add(low);
        self.add(high);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    use dual_core::ResourceId;

    use super::*;

    #[test]
    fn equal_keys_hash_alike_and_seeds_differ() {
        let hashing = IdHashing::default();
        let id = ResourceId::new();
        assert_eq!(hashing.hash_one(id), hashing.hash_one(id));
        assert_eq!(hashing.hash_one((id, 3u32)), hashing.hash_one((id, 3u32)));
        assert_ne!(hashing.hash_one((id, 3u32)), hashing.hash_one((id, 4u32)));
        let seeds: HashSet<u64> = (0..8).map(|_| IdHashing::default().hash_one(id)).collect();
        assert!(seeds.len() > 1, "every map draws its own seed");
    }

    #[test]
    fn ids_made_in_one_millisecond_spread_over_the_low_bits() {
        // Ids made together share their 48-bit time; a map of 1,024 buckets must still spread them.
        let hashing = IdHashing::default();
        let buckets: HashSet<u64> = (0..4_096)
            .map(|_| hashing.hash_one(ResourceId::new()) & 1_023)
            .collect();
        assert!(buckets.len() > 950, "{} of 1,024 buckets used", buckets.len());
        // And a segment number alone moves the bucket.
        let id = ResourceId::new();
        let segments: HashSet<u64> = (0..1_024u32).map(|i| hashing.hash_one((id, i)) & 1_023).collect();
        assert!(segments.len() > 550, "{} of 1,024 buckets used", segments.len());
    }

    #[test]
    fn bytes_hash_by_their_words() {
        let hashing = IdHashing::default();
        let hash = |bytes: &[u8]| hashing.hash_one(bytes);
        assert_ne!(hash(b"abcdefghi"), hash(b"abcdefghj"));
        assert_eq!(hash(b"abcdefghi"), hash(b"abcdefghi"));
    }
}
