//! A column's statistics as its profile: the kind, counts, range, distribution and top values
//! ([`ColumnStats::profile`]), built when the profile so far or the final one is asked for.

use dual_core::ColumnType;
use dual_core::profile::{Bin, ColumnProfile, MAX_BINS, MAX_TOP_VALUES, TopValue, TypeCount};
use serde_json::Value;

use super::{
    BOOLEAN, ColumnStats, Entry, Exact, INTEGER, JSON, KINDS, NUMBER, NumberBound, STRING, Shown, TextBound,
};

impl ColumnStats {
    /// The column's profile after `rows` rows; `declared` is its type as declared or inferred, if
    /// known. Also says which statistics are estimates.
    pub(in crate::profile) fn profile(
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
