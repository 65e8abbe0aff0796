//! What the profile keeps of one column while the rows pass: counts per JSON type, the exact set of
//! distinct values up to a bound (then a HyperLogLog and a quantile sketch), the range and the sum.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use dual_core::profile::TEXT_CHARS;

use super::scan::Scalar;
use super::sketch::{Hll, Sketch, hash_bytes, mix};

mod report;

/// Distinct values a column counts exactly, at most.
pub(super) const EXACT_DISTINCT: usize = 1_024;

/// Bytes of text the exact set keeps for a column (its values as shown), at most.
const EXACT_TEXT_BYTES: usize = 64 * 1024;

/// JSON types, in the order of [`ColumnStats::kinds`].
const KINDS: [&str; 5] = ["boolean", "integer", "number", "string", "json"];
const BOOLEAN: usize = 0;
const INTEGER: usize = 1;
const NUMBER: usize = 2;
const STRING: usize = 3;
const JSON: usize = 4;

/// Seeds that keep the hashes of different JSON types apart.
const STRING_SEED: u64 = 0x5851_f42d_4c95_7f2d;
const JSON_SEED: u64 = 0x1405_7b7e_f767_814f;

/// A value as the exact set shows it.
#[derive(Debug, Clone)]
enum Shown {
    Bool(bool),
    Int(i64),
    Float(f64),
    /// Text cut to [`TEXT_CHARS`] characters (`true`: it was cut).
    Text(Box<str>, bool),
    Nested,
}

#[derive(Debug)]
struct Entry {
    count: u64,
    shown: Shown,
}

impl Entry {
    /// The value, when it is a number.
    fn number(&self) -> Option<f64> {
        match self.shown {
            Shown::Int(n) => Some(n as f64),
            Shown::Float(x) => Some(x),
            _ => None,
        }
    }
}

/// Whether a value was in the exact set already, is new to it, or was counted past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Again,
    New,
    Past,
}

/// A sum of floats, Neumaier-compensated: a long column of small values does not lose them.
#[derive(Debug, Clone, Copy, Default)]
struct Sum {
    sum: f64,
    compensation: f64,
}

impl Sum {
    fn add(&mut self, x: f64) {
        let sum = self.sum + x;
        self.compensation += if self.sum.abs() >= x.abs() {
            (self.sum - sum) + x
        } else {
            (x - sum) + self.sum
        };
        self.sum = sum;
    }

    fn merge(&mut self, other: Sum) {
        self.add(other.sum);
        self.add(other.compensation);
    }

    fn value(self) -> f64 {
        self.sum + self.compensation
    }
}

/// Keys that are already hashes.
#[derive(Debug, Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The exact distinct values of a column, while within their bounds.
#[derive(Debug, Default)]
struct Exact {
    entries: HashMap<u64, Entry, BuildHasherDefault<Identity>>,
    text_bytes: usize,
}

impl Exact {
    /// How many numbers the set counted, and their sum (each value times its count).
    fn sum(&self) -> (u64, Sum) {
        let mut sum = Sum::default();
        let mut finite = 0;
        for entry in self.entries.values() {
            if let Some(x) = entry.number() {
                finite += entry.count;
                sum.add(x * entry.count as f64);
            }
        }
        (finite, sum)
    }
}

/// A text bound (`min` or `max`): the value cut to [`TEXT_CHARS`] characters.
#[derive(Debug, Clone)]
struct TextBound {
    text: Box<str>,
    cut: bool,
}

/// A number bound: its value and how to show it.
#[derive(Debug, Clone, Copy)]
struct NumberBound {
    value: f64,
    int: Option<i64>,
}

/// One column's running statistics.
#[derive(Debug, Default)]
pub(super) struct ColumnStats {
    /// Values that are not null.
    count: u64,
    /// Non-null values per JSON type ([`KINDS`]); NaN and infinities are not among them.
    kinds: [u64; 5],
    /// `"NaN"` strings, and `"Infinity"` / `"-Infinity"` ones (any case).
    nan: u64,
    infinities: u64,
    /// The spellings of NaN and the infinities seen (at most 16): distinct texts of a text column.
    spellings: Vec<Box<[u8]>>,
    exact: Option<Exact>,
    /// Past the exact bound: the distinct estimate and the quantile sketch, which then hold every
    /// value seen so far.
    hll: Option<Box<Hll>>,
    sketch: Option<Box<Sketch>>,
    /// Distinct values the exact set held when it overflowed: the least the estimate may say.
    exact_at_overflow: u64,
    /// Finite numbers counted past the exact set (the set's own are summed from it): how many and
    /// their sum. The range covers every finite number.
    finite: u64,
    sum: Sum,
    min_number: Option<NumberBound>,
    max_number: Option<NumberBound>,
    min_text: Option<TextBound>,
    max_text: Option<TextBound>,
}

impl ColumnStats {
    pub(super) fn new() -> Self {
        Self {
            exact: Some(Exact::default()),
            ..Self::default()
        }
    }

    /// Adds one value (a null counts nowhere: nulls are the rows less the values).
    pub(super) fn add(&mut self, value: Scalar<'_>) {
        match value {
            Scalar::Null => {}
            Scalar::Bool(b) => self.add_bool(b),
            Scalar::Int(n) => self.add_int(n),
            Scalar::Float(x, _) => self.add_float(x),
            Scalar::Str { raw, escaped } => {
                if escaped {
                    let quoted = [b"\"", raw, b"\""].concat();
                    match serde_json::from_slice::<String>(&quoted) {
                        Ok(text) => self.add_text(text.as_bytes()),
                        Err(_) => self.add_text(raw),
                    }
                } else {
                    self.add_text(raw);
                }
            }
            Scalar::Nested(raw) => self.add_nested(raw),
        }
    }

    // The adders of one kind of value: what a decoded row's values call straight (one call a
    // value, no `Scalar` to match: the profile's cost is a few dozen instructions a value).

    pub(super) fn add_bool(&mut self, b: bool) {
        self.count += 1;
        self.kinds[BOOLEAN] += 1;
        self.distinct(mix(u64::from(b) ^ 0xb001), || Shown::Bool(b));
    }

    /// A number that fits `i64`, written without a fraction or exponent.
    #[inline(always)]
    pub(super) fn add_int(&mut self, n: i64) {
        self.count += 1;
        self.kinds[INTEGER] += 1;
        self.number(n as f64, Some(n));
    }

    /// Any other (finite) number.
    #[inline(always)]
    pub(super) fn add_float(&mut self, x: f64) {
        self.count += 1;
        self.kinds[NUMBER] += 1;
        self.number(x, None);
    }

    /// A string's text, unescaped.
    #[inline(always)]
    pub(super) fn add_text(&mut self, text: &[u8]) {
        self.count += 1;
        self.text(text);
    }

    /// An array or an object: its JSON text.
    pub(super) fn add_nested(&mut self, raw: &[u8]) {
        self.count += 1;
        self.kinds[JSON] += 1;
        self.distinct(hash_bytes(raw, JSON_SEED), || Shown::Nested);
    }

    fn number(&mut self, x: f64, int: Option<i64>) {
        let key = match int {
            Some(n) => n as u64,
            // -0.0 and 0.0 are one value.
            None => (x + 0.0).to_bits() ^ 0xf10a7,
        };
        match self.distinct(mix(key), || int.map_or(Shown::Float(x), Shown::Int)) {
            // Already in the exact set: its count went up, and the set gives its sum and range.
            Seen::Again => return,
            Seen::New => {}
            Seen::Past => {
                // Past the exact bound (perhaps from this value on), the sketch and the running
                // sum hold every number.
                if let Some(sketch) = &mut self.sketch {
                    sketch.add(x, 1);
                }
                self.finite += 1;
                self.sum.add(x);
            }
        }
        let bound = NumberBound { value: x, int };
        if self.min_number.is_none_or(|m| x < m.value) {
            self.min_number = Some(bound);
        }
        if self.max_number.is_none_or(|m| x > m.value) {
            self.max_number = Some(bound);
        }
    }

    fn text(&mut self, bytes: &[u8]) {
        if let Some(nonfinite) = non_finite(bytes) {
            match nonfinite {
                NonFinite::Nan => self.nan += 1,
                NonFinite::Infinity => self.infinities += 1,
            }
            if self.spellings.len() < 16 && !self.spellings.iter().any(|s| **s == *bytes) {
                self.spellings.push(bytes.into());
            }
            return;
        }
        self.kinds[STRING] += 1;
        let hash = hash_bytes(bytes, STRING_SEED);
        let seen = self.distinct(hash, || {
            let (text, cut) = cut(bytes);
            Shown::Text(text, cut)
        });
        if seen == Seen::Again {
            // Compared with the range when it was first seen.
            return;
        }
        if self.min_text.as_ref().is_none_or(|m| bytes < m.text.as_bytes()) {
            let (text, cut) = cut(bytes);
            self.min_text = Some(TextBound { text, cut });
        }
        if self.max_text.as_ref().is_none_or(|m| {
            // A cut bound stands for values that start with it: only a greater prefix passes it.
            let prefix = &bytes[..bytes.len().min(m.text.len())];
            if m.cut {
                prefix > m.text.as_bytes()
            } else {
                bytes > m.text.as_bytes()
            }
        }) {
            let (text, cut) = cut(bytes);
            self.max_text = Some(TextBound { text, cut });
        }
    }

    /// Counts the value of `hash` in the exact set while it holds, else in the HyperLogLog, and says
    /// which.
    fn distinct(&mut self, hash: u64, shown: impl FnOnce() -> Shown) -> Seen {
        if let Some(exact) = &mut self.exact {
            if let Some(entry) = exact.entries.get_mut(&hash) {
                entry.count += 1;
                return Seen::Again;
            }
            return self.first_seen(hash, shown());
        }
        if let Some(hll) = &mut self.hll {
            hll.add(hash);
        }
        Seen::Past
    }

    /// A value new to the exact set: kept while the set is within its bounds, else the set
    /// overflows and the value is counted past it. Out of line: it happens once a distinct value,
    /// and keeps the path of every other value short.
    #[cold]
    #[inline(never)]
    fn first_seen(&mut self, hash: u64, shown: Shown) -> Seen {
        if let Some(exact) = &mut self.exact {
            let bytes = match &shown {
                Shown::Text(text, _) => text.len(),
                _ => 0,
            };
            if exact.entries.len() < EXACT_DISTINCT && exact.text_bytes + bytes <= EXACT_TEXT_BYTES {
                exact.text_bytes += bytes;
                exact.entries.insert(hash, Entry { count: 1, shown });
                return Seen::New;
            }
            self.overflow();
        }
        if let Some(hll) = &mut self.hll {
            hll.add(hash);
        }
        Seen::Past
    }

    /// Past the exact bound: the set's values move to the HyperLogLog and the sketch.
    fn overflow(&mut self) {
        let Some(exact) = self.exact.take() else {
            return;
        };
        // The value that did not fit is one more.
        self.exact_at_overflow = exact.entries.len() as u64 + 1;
        let mut hll = Box::new(Hll::new());
        let mut sketch = Box::new(Sketch::default());
        for (hash, entry) in &exact.entries {
            hll.add(*hash);
            if let Some(x) = entry.number() {
                sketch.add(x, entry.count);
            }
        }
        // From here on the running sum holds every number: the set's come first.
        let (finite, sum) = exact.sum();
        self.finite += finite;
        self.sum.merge(sum);
        self.hll = Some(hll);
        self.sketch = Some(sketch);
    }

    /// How many finite numbers, and their sum.
    fn numbers(&self) -> (u64, Sum) {
        match &self.exact {
            Some(exact) => exact.sum(),
            None => (self.finite, self.sum),
        }
    }
}

enum NonFinite {
    Nan,
    Infinity,
}

/// Whether `text` is how a database writes NaN or an infinity (JSON has neither).
fn non_finite(text: &[u8]) -> Option<NonFinite> {
    match text.len() {
        3 if text.eq_ignore_ascii_case(b"nan") => Some(NonFinite::Nan),
        8 if text.eq_ignore_ascii_case(b"infinity") => Some(NonFinite::Infinity),
        9 if text.eq_ignore_ascii_case(b"-infinity") || text.eq_ignore_ascii_case(b"+infinity") => {
            Some(NonFinite::Infinity)
        }
        _ => None,
    }
}

/// `bytes` (UTF-8, or shown lossily) cut to [`TEXT_CHARS`] characters, and whether it was cut.
fn cut(bytes: &[u8]) -> (Box<str>, bool) {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(TEXT_CHARS) {
        Some((end, _)) => {
            let mut cut = String::with_capacity(end + 3);
            cut.push_str(&text[..end]);
            cut.push_str(dual_core::profile::CUT_MARKER);
            (cut.into_boxed_str(), true)
        }
        None => (text.into_owned().into_boxed_str(), false),
    }
}
