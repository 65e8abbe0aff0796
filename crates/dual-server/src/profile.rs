//! The column profile the snapshot writer computes as it spools (docs/DESIGN.md §4, *The column
//! profile*): one pass over each stored row's JSON, no extra query, memory bounded by the columns
//! (each keeps at most [`column::EXACT_DISTINCT`] exact values, then a fixed-size sketch).

mod column;
mod scan;
mod sketch;

use std::collections::{HashMap, HashSet};

use dual_core::Column;
use dual_core::profile::{Approximate, Profile};

use column::ColumnStats;

/// Columns a profile covers, at most; keys past them are counted in
/// [`Profile::columns_omitted`].
pub(crate) const MAX_COLUMNS: usize = 512;

/// A profile being computed.
#[derive(Debug, Default)]
pub(crate) struct Profiler {
    rows: u64,
    /// Column names in the order they were first seen.
    names: Vec<Box<str>>,
    by_name: HashMap<Box<str>, usize>,
    stats: Vec<ColumnStats>,
    omitted: HashSet<Box<str>>,
    /// Rows that were not one JSON object (profiled as far as they could be read).
    unreadable: u64,
}

impl Profiler {
    /// A profiler whose columns start in the order of `columns` (others follow as the rows show
    /// them).
    #[cfg(test)]
    pub(crate) fn new(columns: &[Column]) -> Self {
        let mut profiler = Self::default();
        profiler.declare(columns);
        profiler
    }

    /// Puts `columns` first, in their order, when no row has been profiled yet.
    pub(crate) fn declare(&mut self, columns: &[Column]) {
        if self.rows > 0 {
            return;
        }
        for column in columns {
            self.column(column.name.as_bytes());
        }
    }

    /// Rows profiled.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// Profiles one row: its compact JSON object, as stored.
    pub(crate) fn add_row(&mut self, row: &[u8]) {
        self.rows += 1;
        let mut position = 0;
        let read = scan::object(row, |key, escaped, value| {
            let at = if escaped {
                let quoted = [b"\"", key, b"\""].concat();
                serde_json::from_slice::<String>(&quoted)
                    .ok()
                    .and_then(|key| self.column(key.as_bytes()))
            } else if self
                .names
                .get(position)
                .is_some_and(|name| name.as_bytes() == key)
            {
                // Rows keep their columns' order: the next name is nearly always the key.
                Some(position)
            } else {
                self.column(key)
            };
            if let Some(at) = at {
                self.stats[at].add(value);
                position = at + 1;
            }
        });
        if read.is_err() {
            self.unreadable += 1;
            if self.unreadable == 1 {
                tracing::debug!(
                    row = self.rows,
                    "a stored row is not one JSON object: profiled as far as it reads"
                );
            }
        }
    }

    /// Profiles one decoded row (what an executor yields as [`Row`]s): the values are read as they
    /// are, with nothing to parse; the profile is the one [`Profiler::add_row`] computes of the
    /// row's JSON.
    pub(crate) fn add_decoded(&mut self, row: &dual_core::Row) {
        self.rows += 1;
        let mut position = 0;
        for (key, value) in row {
            let at = if self.names.get(position).is_some_and(|name| **name == **key) {
                Some(position)
            } else {
                self.column(key.as_bytes())
            };
            let Some(at) = at else { continue };
            position = at + 1;
            let stats = &mut self.stats[at];
            match value {
                serde_json::Value::Null => {}
                serde_json::Value::Bool(b) => stats.add_bool(*b),
                serde_json::Value::Number(n) => match n.as_i64() {
                    Some(i) => stats.add_int(i),
                    // Finite: a JSON number is never NaN nor infinite.
                    None => {
                        if let Some(x) = n.as_f64() {
                            stats.add_float(x);
                        }
                    }
                },
                serde_json::Value::String(s) => stats.add_text(s.as_bytes()),
                nested => {
                    let text = serde_json::to_vec(nested).unwrap_or_default();
                    stats.add_nested(&text);
                }
            }
        }
    }

    /// The index of the column `key`, added when new and within [`MAX_COLUMNS`].
    fn column(&mut self, key: &[u8]) -> Option<usize> {
        let name = String::from_utf8_lossy(key);
        if let Some(at) = self.by_name.get(name.as_ref()) {
            return Some(*at);
        }
        if self.names.len() >= MAX_COLUMNS {
            if self.omitted.len() < MAX_COLUMNS {
                self.omitted.insert(name.into());
            }
            return None;
        }
        let name: Box<str> = name.into();
        let at = self.names.len();
        self.names.push(name.clone());
        self.by_name.insert(name, at);
        self.stats.push(ColumnStats::new());
        Some(at)
    }

    /// The profile of the rows so far (`complete` once every row is in). `columns` are the result's
    /// columns as declared or inferred: they give the types text alone cannot (dates, times).
    pub(crate) fn profile(&self, columns: &[Column], complete: bool) -> Profile {
        let mut profile = Profile::new(self.rows, complete);
        for (name, stats) in self.names.iter().zip(&self.stats) {
            let declared = columns.iter().find(|c| *c.name == **name).map(|c| c.column_type);
            let (column, approximate) = stats.profile(name, self.rows, declared);
            if !approximate.is_empty() {
                profile
                    .approximate
                    .push(Approximate::new(name.as_ref(), approximate));
            }
            profile.columns.push(column);
        }
        profile.columns_omitted = self.omitted.len() as u64;
        profile
    }
}

#[cfg(test)]
mod tests;
