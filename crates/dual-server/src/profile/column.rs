//! What the profile keeps of one column while the rows pass: counts per JSON type, the exact set of
//! distinct values up to a bound (then a HyperLogLog and a quantile sketch), the range and the sum.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use dual_core::ColumnType;
use dual_core::profile::{Bin, ColumnProfile, MAX_BINS, MAX_TOP_VALUES, TEXT_CHARS, TopValue, TypeCount};
use serde_json::Value;

use super::scan::Scalar;
use super::sketch::{Hll, Sketch, hash_bytes, mix};

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

    /// The column's profile after `rows` rows; `declared` is its type as declared or inferred, if
    /// known. Also says which statistics are estimates.
    pub(super) fn profile(
        &self,
        name: &str,
        rows: u64,
        declared: Option<ColumnType>,
    ) -> (ColumnProfile, Vec<String>) {
        let numbers = self.kinds[INTEGER] + self.kinds[NUMBER];
        let declared_number = matches!(declared, Some(ColumnType::Integer | ColumnType::Number));
        // "NaN" and "Infinity" are numbers only where the column holds numbers.
        let nonfinite_numbers = numbers > 0 || declared_number;
        let mut kinds = self.kinds;
        if !nonfinite_numbers {
            kinds[STRING] += self.nan + self.infinities;
        }
        let present: Vec<usize> = (0..KINDS.len()).filter(|k| kinds[*k] > 0).collect();
        let number_only = present.iter().all(|k| *k == INTEGER || *k == NUMBER);
        let kind = match present.as_slice() {
            [] if self.nan + self.infinities > 0 => declared.map_or("number", ColumnType::as_str),
            [] => declared.map_or("null", ColumnType::as_str),
            _ if number_only => {
                if kinds[NUMBER] > 0 || declared == Some(ColumnType::Number) {
                    "number"
                } else {
                    "integer"
                }
            }
            [STRING] => match declared {
                Some(t @ (ColumnType::Date | ColumnType::Datetime | ColumnType::String)) => t.as_str(),
                _ => "string",
            },
            [BOOLEAN] => "boolean",
            [JSON] => "json",
            _ => "mixed",
        };
        let mut column = ColumnProfile::new(name, kind);
        column.count = self.count;
        column.nulls = rows.saturating_sub(self.count);
        if nonfinite_numbers {
            column.nan = self.nan;
            column.infinities = self.infinities;
        }
        if kind == "mixed" {
            column.types = present
                .iter()
                .map(|k| TypeCount::new(KINDS[*k], kinds[*k]))
                .collect();
        }
        let mut approximate = Vec::new();
        column.distinct = match (&self.exact, &self.hll) {
            (Some(exact), _) => exact.entries.len() as u64,
            (None, Some(hll)) => {
                approximate.push("distinct".to_owned());
                // An estimate is never more than the values, nor less than the exact set it passed.
                hll.estimate().max(self.exact_at_overflow).min(self.count)
            }
            (None, None) => 0,
        };
        if !nonfinite_numbers && self.nan + self.infinities > 0 && self.exact.is_some() {
            // The spellings were held apart from the strings: each is one more distinct text.
            column.distinct += self.spellings.len() as u64;
        }
        if let (Some(min), Some(max)) = (self.min_number, self.max_number) {
            column.min = Some(number_value(min));
            column.max = Some(number_value(max));
            let (finite, sum) = self.numbers();
            let mean = sum.value() / finite as f64;
            column.mean = mean.is_finite().then_some(mean);
            self.distribution(&mut column, &mut approximate, kind == "integer");
        } else if let (Some(min), Some(max)) = self.text_bounds(nonfinite_numbers) {
            column.min = Some(Value::String(min.text.to_string()));
            column.max = Some(Value::String(max.text.to_string()));
            if min.cut {
                column.cut.push("min".to_owned());
            }
            if max.cut {
                column.cut.push("max".to_owned());
            }
        }
        if let Some(exact) = &self.exact {
            let (top, cut) = top_values(exact);
            column.top = top;
            if cut {
                column.cut.push("top".to_owned());
            }
        }
        (column, approximate)
    }

    /// The least and greatest text, with the NaN and infinity spellings among the texts unless
    /// they count as numbers.
    fn text_bounds(&self, nonfinite_numbers: bool) -> (Option<TextBound>, Option<TextBound>) {
        let (mut min, mut max) = (self.min_text.clone(), self.max_text.clone());
        if !nonfinite_numbers {
            for spelling in &self.spellings {
                let text: Box<str> = String::from_utf8_lossy(spelling).into();
                if min.as_ref().is_none_or(|m| text < m.text) {
                    min = Some(TextBound {
                        text: text.clone(),
                        cut: false,
                    });
                }
                if max.as_ref().is_none_or(|m| text > m.text) {
                    max = Some(TextBound { text, cut: false });
                }
            }
        }
        (min, max)
    }

    /// The median, 95th percentile and histogram of the finite numbers: exact from the exact set,
    /// else from the sketch (then named in `approximate`).
    fn distribution(&self, column: &mut ColumnProfile, approximate: &mut Vec<String>, integers: bool) {
        let values: Vec<(f64, u64)> = match (&self.exact, &self.sketch) {
            (Some(exact), _) => {
                let mut values: Vec<(f64, u64)> = exact
                    .entries
                    .values()
                    .filter_map(|e| Some((e.number()?, e.count)))
                    .collect();
                values.sort_by(|a, b| a.0.total_cmp(&b.0));
                values
            }
            (None, Some(sketch)) => {
                approximate.extend(["p50", "p95", "histogram"].map(str::to_owned));
                sketch.values().collect()
            }
            (None, None) => return,
        };
        let (Some(min), Some(max)) = (self.min_number, self.max_number) else {
            return;
        };
        let (min, max) = (min.value, max.value);
        let total: u64 = values.iter().map(|(_, n)| n).sum();
        let clamp = |x: f64| x.clamp(min, max);
        column.p50 = quantile(&values, total, 0.50).map(clamp);
        column.p95 = quantile(&values, total, 0.95).map(clamp);
        column.histogram = histogram(&values, min, max, integers);
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

fn number_value(bound: NumberBound) -> Value {
    match bound.int {
        Some(n) => Value::from(n),
        None => serde_json::Number::from_f64(bound.value).map_or(Value::Null, Value::Number),
    }
}

/// The value at the nearest rank `ceil(q × total)` of `values` (sorted, with counts).
fn quantile(values: &[(f64, u64)], total: u64, q: f64) -> Option<f64> {
    if total == 0 {
        return None;
    }
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for (value, count) in values {
        seen += count;
        if seen >= rank {
            return Some(*value);
        }
    }
    values.last().map(|(value, _)| *value)
}

/// At most [`MAX_BINS`] bins of equal width from `min` to `max` (one per integer when a column of
/// integers spans fewer).
fn histogram(values: &[(f64, u64)], min: f64, max: f64, integers: bool) -> Vec<Bin> {
    if values.is_empty() {
        return Vec::new();
    }
    if min == max {
        return vec![Bin::new(min, max, values.iter().map(|(_, n)| n).sum())];
    }
    let span = max - min;
    let (bins, width) = if integers && span < MAX_BINS as f64 {
        (span as usize + 1, 1.0)
    } else {
        (MAX_BINS, span / MAX_BINS as f64)
    };
    let mut out: Vec<Bin> = (0..bins)
        .map(|i| {
            let from = min + width * i as f64;
            let to = if i + 1 == bins && !integers {
                max
            } else {
                from + width
            };
            Bin::new(from, to, 0)
        })
        .collect();
    for (value, count) in values {
        let at = (((value.clamp(min, max) - min) / width) as usize).min(bins - 1);
        out[at].count += count;
    }
    out
}

/// The most frequent values (only those that repeat), most frequent first, and whether one of them
/// was cut.
fn top_values(exact: &Exact) -> (Vec<TopValue>, bool) {
    let mut entries: Vec<&Entry> = exact
        .entries
        .values()
        .filter(|e| e.count > 1 && !matches!(e.shown, Shown::Nested))
        .collect();
    entries.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| order(&a.shown, &b.shown)));
    let mut cut = false;
    let top = entries
        .into_iter()
        .take(MAX_TOP_VALUES)
        .map(|e| {
            let value = match &e.shown {
                Shown::Bool(b) => Value::Bool(*b),
                Shown::Int(n) => Value::from(*n),
                Shown::Float(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
                Shown::Text(text, was_cut) => {
                    cut |= was_cut;
                    Value::String(text.to_string())
                }
                Shown::Nested => Value::Null,
            };
            TopValue::new(value, e.count)
        })
        .collect();
    (top, cut)
}

/// A stable order of shown values of equal counts: numbers by value, text by code point.
fn order(a: &Shown, b: &Shown) -> std::cmp::Ordering {
    let number = |s: &Shown| match s {
        Shown::Int(n) => Some(*n as f64),
        Shown::Float(x) => Some(*x),
        Shown::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    };
    match (number(a), number(b), a, b) {
        (Some(x), Some(y), _, _) => x.total_cmp(&y),
        (_, _, Shown::Text(x, _), Shown::Text(y, _)) => x.cmp(y),
        _ => std::cmp::Ordering::Equal,
    }
}
