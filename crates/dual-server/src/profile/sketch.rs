//! Bounded summaries of values past the exact bound: a quantile sketch of numbers (log-linear
//! buckets, about 0.8% relative error) and a HyperLogLog of distinct values (about 1.6% standard
//! error). Both take constant memory per column, whatever the rows.

/// Sub-buckets per power of two: the top mantissa bits a bucket keeps.
const SUB_BITS: u32 = 6;

/// Buckets a sign keeps, at most; past it the smallest magnitudes merge into one bucket.
const MAX_BUCKETS: usize = 4_096;

/// A quantile sketch of finite numbers: each magnitude falls into the bucket of its exponent and top
/// [`SUB_BITS`] mantissa bits, so a bucket's bounds are within 1/64 of each other.
#[derive(Debug, Clone, Default)]
pub(super) struct Sketch {
    positive: Buckets,
    negative: Buckets,
    zeros: u64,
}

/// Counts of consecutive bucket indices.
#[derive(Debug, Clone, Default)]
struct Buckets {
    /// The index of `counts[0]`.
    first: u32,
    counts: std::collections::VecDeque<u64>,
}

impl Buckets {
    fn add(&mut self, index: u32, count: u64) {
        if self.counts.is_empty() {
            self.first = index;
            self.counts.push_back(count);
            return;
        }
        if index < self.first {
            let grow = (self.first - index) as usize;
            if self.counts.len() + grow > MAX_BUCKETS {
                // Below the kept range: the smallest magnitude kept stands for it.
                self.counts[0] += count;
                return;
            }
            for _ in 0..grow {
                self.counts.push_front(0);
            }
            self.first = index;
            self.counts[0] += count;
            return;
        }
        let offset = (index - self.first) as usize;
        if offset >= self.counts.len() {
            self.counts.resize(offset + 1, 0);
            while self.counts.len() > MAX_BUCKETS {
                // Keep the largest magnitudes: the smallest bucket merges into the next.
                let merged = self.counts.pop_front().unwrap_or(0);
                self.first += 1;
                if let Some(next) = self.counts.front_mut() {
                    *next += merged;
                }
            }
        }
        let offset = (index - self.first) as usize;
        self.counts[offset] += count;
    }

    /// `(value, count)` of every non-empty bucket, smallest magnitude first.
    fn iter(&self) -> impl DoubleEndedIterator<Item = (f64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, count)| **count > 0)
            .map(|(i, count)| (middle(self.first + i as u32), *count))
    }
}

/// The bucket of the magnitude `x` (positive, finite).
fn index(x: f64) -> u32 {
    // Exponent and top mantissa bits: monotone in `x`, and fits 11 + SUB_BITS bits.
    (x.to_bits() >> (52 - SUB_BITS)) as u32
}

/// The middle of bucket `index`.
fn middle(index: u32) -> f64 {
    let low = f64::from_bits(u64::from(index) << (52 - SUB_BITS));
    let high = f64::from_bits(u64::from(index + 1) << (52 - SUB_BITS));
    if high.is_finite() {
        low + (high - low) / 2.0
    } else {
        low
    }
}

impl Sketch {
    /// Adds `count` occurrences of the finite `x`.
    pub(super) fn add(&mut self, x: f64, count: u64) {
        if x > 0.0 {
            self.positive.add(index(x), count);
        } else if x < 0.0 {
            self.negative.add(index(-x), count);
        } else {
            self.zeros += count;
        }
    }

    /// Every bucket as `(value, count)`, smallest value first.
    pub(super) fn values(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        let negative = self.negative.iter().rev().map(|(x, n)| (-x, n));
        let zeros = (self.zeros > 0).then_some((0.0, self.zeros));
        negative.chain(zeros).chain(self.positive.iter())
    }
}

/// Registers of the HyperLogLog: 2^12 (4 KiB a column).
const HLL_BITS: u32 = 12;

/// A HyperLogLog of 64-bit hashes.
#[derive(Debug, Clone)]
pub(super) struct Hll {
    registers: Box<[u8]>,
}

impl Hll {
    pub(super) fn new() -> Self {
        Self {
            registers: vec![0; 1 << HLL_BITS].into_boxed_slice(),
        }
    }

    pub(super) fn add(&mut self, hash: u64) {
        let register = (hash >> (64 - HLL_BITS)) as usize;
        // Leading zeros of the rest, plus one; the marker bit bounds it when the rest is zero.
        let rank = ((hash << HLL_BITS) | (1 << (HLL_BITS - 1))).leading_zeros() as u8 + 1;
        if let Some(slot) = self.registers.get_mut(register)
            && *slot < rank
        {
            *slot = rank;
        }
    }

    /// The estimated count of distinct hashes added (with the small-range correction).
    pub(super) fn estimate(&self) -> u64 {
        let m = self.registers.len() as f64;
        let sum: f64 = self.registers.iter().map(|r| 2f64.powi(-i32::from(*r))).sum();
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let raw = alpha * m * m / sum;
        let zeros = self.registers.iter().filter(|r| **r == 0).count();
        let estimate = if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        };
        estimate.round() as u64
    }
}

/// A 64-bit hash of `bytes` under `seed`, well mixed in every bit (for the HyperLogLog and the
/// exact distinct set). Not for adversarial keys: a collision only makes a count inexact.
pub(super) fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = seed ^ (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    mix(h)
}

/// A 64-bit hash of `word` under `seed` (MurmurHash3's finalizer).
pub(super) fn mix(word: u64) -> u64 {
    let mut h = word;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_within_their_relative_error() {
        for x in [1e-300, 0.001, 0.5, 1.0, 3.0, 1234.5678, 9.9e12, f64::MAX / 2.0] {
            let m = middle(index(x));
            assert!(((m - x) / x).abs() <= 1.0 / 64.0, "{x}: {m}");
        }
        let mut last = 0;
        for x in [1.0, 1.01, 1.1, 2.0, 1e9] {
            assert!(index(x) >= last, "monotone");
            last = index(x);
        }
    }

    #[test]
    fn values_come_out_in_order_with_their_counts() {
        let mut sketch = Sketch::default();
        for x in [5.0, -3.0, 0.0, 0.0, 100.0, -0.5] {
            sketch.add(x, 1);
        }
        let values: Vec<_> = sketch.values().collect();
        let order: Vec<f64> = values.iter().map(|(x, _)| *x).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
        assert_eq!(values.iter().map(|(_, n)| n).sum::<u64>(), 6);
        assert_eq!(values[2], (0.0, 2));
    }

    #[test]
    fn a_wide_range_keeps_its_memory_bound_and_its_count() {
        let mut sketch = Sketch::default();
        let mut x = 1e-300;
        let mut n = 0;
        while x < 1e300 {
            sketch.add(x, 1);
            x *= 1.001;
            n += 1;
        }
        assert!(sketch.positive.counts.len() <= MAX_BUCKETS);
        assert_eq!(sketch.values().map(|(_, c)| c).sum::<u64>(), n);
    }

    #[test]
    fn the_distinct_estimate_is_near_the_truth() {
        for truth in [10u64, 1_000, 100_000, 1_000_000] {
            let mut hll = Hll::new();
            for i in 0..truth {
                hll.add(hash_bytes(format!("value {i}").as_bytes(), 7));
                hll.add(mix(i ^ 0xdead_beef));
            }
            let estimate = hll.estimate() as f64;
            let error = (estimate - 2.0 * truth as f64).abs() / (2.0 * truth as f64);
            assert!(error < 0.05, "{truth}: {estimate}");
        }
    }
}
