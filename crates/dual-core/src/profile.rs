//! The column profile of a whole result: per column its type, counts, range and distribution, as
//! the snapshot writer computed it in one pass over every row (docs/DESIGN.md §4, *The column
//! profile*).
//!
//! A profile is what a model or a person reads to know the shape of a result it sees 15 rows of:
//! how many values are missing, how many differ, the range, where the middle is, the largest
//! groups. Statistics a bounded pass cannot know exactly are estimates, and
//! [`Profile::approximate`] names each one.
//!
//! ```
//! use dual_core::profile::Profile;
//!
//! let profile: Profile = serde_json::from_str(r#"{
//!   "rows": 3, "complete": true,
//!   "columns": [{"name": "state", "type": "string", "count": 3, "nulls": 0, "distinct": 2,
//!                "min": "CA", "max": "TX", "top": [{"value": "CA", "count": 2}, {"value": "TX", "count": 1}]}]
//! }"#)?;
//! assert_eq!(profile.columns[0].distinct, 2);
//! assert!(profile.approximate.is_empty());
//! assert_eq!(profile.columns[0].text_line(), "state string: 2 distinct, CA..TX, top CA 67%, TX 33%");
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Characters a text value keeps in a profile (a `min`, `max` or top value); a longer one is cut
/// to them and ends with [`CUT_MARKER`].
pub const TEXT_CHARS: usize = 256;

/// What ends a text value cut to [`TEXT_CHARS`] characters.
pub const CUT_MARKER: &str = "…";

/// Bins of a histogram, at most.
pub const MAX_BINS: usize = 20;

/// Top values of a column, at most.
pub const MAX_TOP_VALUES: usize = 5;

/// Bytes of one column's line in the profile's text for the model, at most.
pub const TEXT_LINE_BYTES: usize = 80;

/// The profile of a result's rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Profile {
    /// Rows the profile describes: every row of the result once `complete`.
    pub rows: u64,
    /// Every row is profiled. While the snapshot is still being written a profile describes the
    /// rows so far, and says `false`.
    pub complete: bool,
    /// One entry per column, in the result's column order.
    pub columns: Vec<ColumnProfile>,
    /// The statistics that are estimates, by column.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approximate: Vec<Approximate>,
    /// Columns past the profile's column cap, left out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub columns_omitted: u64,
}

impl Profile {
    /// An empty profile of `rows` rows.
    #[must_use]
    pub fn new(rows: u64, complete: bool) -> Self {
        Self {
            rows,
            complete,
            columns: Vec::new(),
            approximate: Vec::new(),
            columns_omitted: 0,
        }
    }

    /// The profile as text for a model: one line per column, each at most
    /// [`TEXT_LINE_BYTES`] bytes ([`ColumnProfile::text_line`]).
    #[must_use]
    pub fn text(&self) -> String {
        let mut text = format!(
            "Profile of all {} rows{}:",
            self.rows,
            if self.complete { "" } else { " so far" }
        );
        for column in &self.columns {
            text.push('\n');
            text.push_str(&column.text_line());
        }
        if self.columns_omitted > 0 {
            let _ = write!(text, "\n({} more columns not profiled)", self.columns_omitted);
        }
        text
    }

    /// Whether `stat` of `column` is an estimate.
    #[must_use]
    pub fn is_approximate(&self, column: &str, stat: &str) -> bool {
        self.approximate
            .iter()
            .any(|a| a.column == column && a.stats.iter().any(|s| s == stat))
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The statistics of one column that are estimates: some of `distinct`, `p50`, `p95`, `histogram`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Approximate {
    /// The column's name.
    pub column: String,
    /// The statistics, by their field names.
    pub stats: Vec<String>,
}

impl Approximate {
    /// The estimates `stats` of `column`.
    #[must_use]
    pub fn new(column: impl Into<String>, stats: Vec<String>) -> Self {
        Self {
            column: column.into(),
            stats,
        }
    }
}

/// The profile of one column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ColumnProfile {
    /// The column's name.
    pub name: String,
    /// A column type's wire name (`"integer"`, `"string"`, …), `"mixed"` when its values have
    /// more than one JSON type (see `types`), `"null"` when every value is null.
    #[serde(rename = "type")]
    pub kind: String,
    /// Values that are not null (a row without the key counts as null).
    pub count: u64,
    /// Nulls.
    pub nulls: u64,
    /// Distinct values that are not null (an estimate past the exact bound: see
    /// [`Profile::approximate`]).
    pub distinct: u64,
    /// The least value: numbers by value, text (dates and times too) by code point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Value>,
    /// The greatest value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Value>,
    /// The mean of the finite numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// The median of the finite numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    /// The 95th percentile of the finite numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95: Option<f64>,
    /// NaN values of a number column (`"NaN"` where JSON has no NaN), not in any other statistic.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nan: u64,
    /// Infinities of a number column, not in any other statistic.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub infinities: u64,
    /// The finite numbers in at most [`MAX_BINS`] bins of equal width from `min` to `max`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub histogram: Vec<Bin>,
    /// The most frequent values, most frequent first (at most [`MAX_TOP_VALUES`]), for a column of
    /// few distinct values that repeat.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<TopValue>,
    /// Values per JSON type (`"boolean"`, `"integer"`, `"number"`, `"string"`, `"json"`), for a
    /// `"mixed"` column.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<TypeCount>,
    /// The fields whose text was cut to [`TEXT_CHARS`] characters (`"min"`, `"max"`, `"top"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut: Vec<String>,
}

impl ColumnProfile {
    /// A column of `kind` with no values yet.
    #[must_use]
    pub fn new(name: impl Into<String>, kind: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            kind: kind.into(),
            count: 0,
            nulls: 0,
            distinct: 0,
            min: None,
            max: None,
            mean: None,
            p50: None,
            p95: None,
            nan: 0,
            infinities: 0,
            histogram: Vec::new(),
            top: Vec::new(),
            types: Vec::new(),
            cut: Vec::new(),
        }
    }

    /// The column in one line of at most [`TEXT_LINE_BYTES`] bytes, for a model: name and type,
    /// then as many of the null share, distinct count, range, median and top values as fit, in
    /// that order. `~` marks an estimate.
    #[must_use]
    pub fn text_line(&self) -> String {
        let mut line = String::new();
        push_cut(&mut line, &crate::escape::display_safe(&self.name), 20);
        line.push(' ');
        line.push_str(&self.kind);
        line.push(':');
        let rows = self.count + self.nulls;
        let mut parts: Vec<String> = Vec::new();
        if self.nulls > 0 {
            parts.push(format!("{} null", percent(self.nulls, rows)));
        }
        if self.count > 0 {
            parts.push(format!("{} distinct", self.distinct));
        }
        if let (Some(min), Some(max)) = (&self.min, &self.max) {
            parts.push(format!("{}..{}", short_value(min), short_value(max)));
        }
        if let Some(p50) = self.p50 {
            parts.push(format!("p50 {}", short_number(p50)));
        }
        if !self.top.is_empty() {
            let top: Vec<String> = self
                .top
                .iter()
                .map(|t| format!("{} {}", short_value(&t.value), percent(t.count, self.count)))
                .collect();
            parts.push(format!("top {}", top.join(", ")));
        }
        if self.nan + self.infinities > 0 {
            parts.push(format!("{} non-finite", self.nan + self.infinities));
        }
        let mut first = true;
        for part in parts {
            let sep = if first { " " } else { ", " };
            if line.len() + sep.len() + part.len() > TEXT_LINE_BYTES {
                break;
            }
            line.push_str(sep);
            line.push_str(&part);
            first = false;
        }
        line
    }
}

/// `text` into `out`, cut to `chars` characters with [`CUT_MARKER`] when longer.
fn push_cut(out: &mut String, text: &str, chars: usize) {
    match text.char_indices().nth(chars) {
        Some((end, _)) => {
            out.push_str(&text[..end]);
            out.push_str(CUT_MARKER);
        }
        None => out.push_str(text),
    }
}

/// A value as a few characters of a text line.
fn short_value(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::String(s) => push_cut(&mut out, &crate::escape::display_safe(s), 16),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => out.push_str(&short_number(f)),
            _ => push_cut(&mut out, &n.to_string(), 16),
        },
        other => push_cut(&mut out, &other.to_string(), 16),
    }
    out
}

/// A number in at most about 8 characters: integers as they are, others to 4 significant digits.
fn short_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else if value != 0.0 && (value.abs() >= 1e6 || value.abs() < 1e-3) {
        format!("{value:.3e}")
    } else {
        let text = format!("{value:.4}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// `part` of `whole` as a whole percentage (`<1%` for a small non-zero share).
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0%".to_owned();
    }
    let share = part as f64 * 100.0 / whole as f64;
    if share > 0.0 && share < 1.0 {
        "<1%".to_owned()
    } else {
        format!("{share:.0}%")
    }
}

/// One bin of a histogram: the finite numbers from `from` up to `to` (the last bin includes `to`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Bin {
    /// The bin's lower bound, included.
    pub from: f64,
    /// The bin's upper bound, excluded but for the last bin.
    pub to: f64,
    /// Values in the bin.
    pub count: u64,
}

impl Bin {
    /// The bin `[from, to)` of `count` values.
    #[must_use]
    pub fn new(from: f64, to: f64, count: u64) -> Self {
        Self { from, to, count }
    }
}

/// A frequent value and how often it occurs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TopValue {
    /// The value (text cut to [`TEXT_CHARS`] characters).
    pub value: Value,
    /// Rows holding it.
    pub count: u64,
}

impl TopValue {
    /// `value`, held by `count` rows.
    #[must_use]
    pub fn new(value: Value, count: u64) -> Self {
        Self { value, count }
    }
}

/// Values of one JSON type in a `"mixed"` column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TypeCount {
    /// `"boolean"`, `"integer"`, `"number"`, `"string"` or `"json"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Values of that type.
    pub count: u64,
}

impl TypeCount {
    /// `count` values of type `kind`.
    #[must_use]
    pub fn new(kind: impl Into<String>, count: u64) -> Self {
        Self {
            kind: kind.into(),
            count,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn numeric() -> ColumnProfile {
        let mut column = ColumnProfile::new("tuition_and_fees_in_state_total", "integer");
        column.count = 268_500;
        column.nulls = 500;
        column.distinct = 10_234;
        column.min = Some(json!(0));
        column.max = Some(json!(65_000));
        column.mean = Some(14_231.52);
        column.p50 = Some(11_000.0);
        column
    }

    #[test]
    fn a_line_keeps_what_fits_in_order_and_never_passes_its_cap() {
        let line = numeric().text_line();
        assert_eq!(
            line,
            "tuition_and_fees_in_… integer: <1% null, 10234 distinct, 0..65000, p50 11000"
        );
        assert!(line.len() <= TEXT_LINE_BYTES, "{} bytes", line.len());
        let mut wide = ColumnProfile::new("n".repeat(500), "string");
        wide.count = 3;
        wide.distinct = 3;
        wide.min = Some(json!("\u{202e}".repeat(300)));
        wide.max = Some(json!("é".repeat(300)));
        wide.top = (0..5)
            .map(|i| TopValue::new(json!("x".repeat(i * 50)), 1))
            .collect();
        let line = wide.text_line();
        assert!(line.len() <= TEXT_LINE_BYTES, "{line}");
        assert!(!line.contains('\u{202e}'), "display-safe: {line}");
    }

    #[test]
    fn the_wire_form_leaves_out_what_is_empty() {
        let mut profile = Profile::new(269_000, true);
        profile.columns.push(numeric());
        profile
            .approximate
            .push(Approximate::new("tuition", vec!["distinct".into()]));
        let wire = serde_json::to_value(&profile).unwrap_or_default();
        let column = &wire["columns"][0];
        assert_eq!(column["type"], "integer");
        assert!(
            column.get("top").is_none() && column.get("nan").is_none(),
            "{column}"
        );
        assert_eq!(wire["approximate"][0]["stats"][0], "distinct");
        let back: Profile = serde_json::from_value(wire).unwrap_or_else(|_| Profile::new(0, false));
        assert_eq!(back, profile);
        assert!(back.is_approximate("tuition", "distinct"));
        assert!(!back.is_approximate("tuition", "p50"));
    }

    #[test]
    fn numbers_stay_short() {
        assert_eq!(short_number(11_000.0), "11000");
        assert_eq!(short_number(0.125), "0.125");
        assert_eq!(short_number(1.5e9 + 0.5), "1.500e9");
        assert_eq!(short_number(0.000_12), "1.200e-4");
        assert_eq!(percent(1, 1_000), "<1%");
        assert_eq!(percent(0, 0), "0%");
    }
}
