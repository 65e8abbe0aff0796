//! What a database holds, as the model needs it to write correct queries (the DataSF seed's schema
//! retrieval): its tables and views, their columns, types and nullability; and the close-match
//! suggestions ("did you mean …") for a name the database does not know, never applied silently.

use serde::{Deserialize, Serialize};

/// A table or a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TableKind {
    /// A table.
    Table,
    /// A view.
    View,
}

/// One column of a table, as the database declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ColumnSchema {
    /// Its name.
    pub name: String,
    /// The database's own type name (`integer`, `text`, `timestamp with time zone`, …).
    pub data_type: String,
    /// Whether it may hold NULL.
    pub nullable: bool,
}

impl ColumnSchema {
    /// A column.
    #[must_use]
    pub fn new(name: impl Into<String>, data_type: impl Into<String>, nullable: bool) -> Self {
        Self {
            name: name.into(),
            data_type: data_type.into(),
            nullable,
        }
    }
}

/// One table or view and its columns, in their declared order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TableSchema {
    /// Its name, qualified with its schema where the database has several (`public.orders`).
    pub name: String,
    /// Table or view.
    pub kind: TableKind,
    /// Its columns.
    pub columns: Vec<ColumnSchema>,
}

impl TableSchema {
    /// A table or view.
    #[must_use]
    pub fn new(name: impl Into<String>, kind: TableKind, columns: Vec<ColumnSchema>) -> Self {
        Self {
            name: name.into(),
            kind,
            columns,
        }
    }

    /// Whether `name` names this table, with or without its schema, ignoring ASCII case.
    #[must_use]
    pub fn is_named(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
            || self
                .name
                .rsplit_once('.')
                .is_some_and(|(_, bare)| bare.eq_ignore_ascii_case(name))
    }
}

/// The tables of an `information_schema`-style listing: one row per column, `(table, table_type,
/// column)`, ordered so that each table's columns are consecutive and in their declared order. A
/// `table_type` of `VIEW` makes a view, any other a table (`BASE TABLE`, `SYSTEM VERSIONED`, …).
///
/// ```
/// use dual_sql::schema::{ColumnSchema, TableKind, tables_from_columns};
///
/// let tables = tables_from_columns([
///     ("orders", "BASE TABLE", ColumnSchema::new("id", "integer", false)),
///     ("orders", "BASE TABLE", ColumnSchema::new("region", "text", true)),
///     ("totals", "VIEW", ColumnSchema::new("sum", "numeric", true)),
/// ]);
/// assert_eq!(tables.len(), 2);
/// assert_eq!(tables[0].columns.len(), 2);
/// assert_eq!(tables[1].kind, TableKind::View);
/// ```
#[must_use]
pub fn tables_from_columns<T, K>(columns: impl IntoIterator<Item = (T, K, ColumnSchema)>) -> Vec<TableSchema>
where
    T: Into<String> + AsRef<str>,
    K: AsRef<str>,
{
    let mut tables: Vec<TableSchema> = Vec::new();
    for (table, table_type, column) in columns {
        match tables.last_mut() {
            Some(last) if last.name == table.as_ref() => last.columns.push(column),
            _ => {
                let kind = if table_type.as_ref() == "VIEW" {
                    TableKind::View
                } else {
                    TableKind::Table
                };
                tables.push(TableSchema::new(table, kind, vec![column]));
            }
        }
    }
    tables
}

/// The names among `candidates` closest to `name` (ignoring ASCII case), best first, at most
/// `max`: those within an edit distance (a swap of neighbours counting one) of a third of the longer
/// name (at least 1, at most 3), or
/// that contain it or are contained in it. An exact match (ignoring case) is never suggested:
/// `name` then exists.
#[must_use]
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>, max: usize) -> Vec<&'a str> {
    let wanted = name.to_ascii_lowercase();
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, &str)> = Vec::new();
    for candidate in candidates {
        let lower = candidate.to_ascii_lowercase();
        if lower == wanted {
            return Vec::new();
        }
        let limit = (wanted.len().max(lower.len()) / 3).clamp(1, 3);
        let distance = edit_distance(&wanted, &lower);
        let contains = wanted.len() >= 3 && (lower.contains(&wanted) || wanted.contains(&lower));
        if distance <= limit || contains {
            scored.push((distance, candidate));
        }
    }
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(max).map(|(_, name)| name).collect()
}

/// ` Did you mean `a` or `b`?` for the suggestions of [`closest`], or nothing without any.
#[must_use]
pub fn did_you_mean(suggestions: &[&str]) -> String {
    match suggestions {
        [] => String::new(),
        [one] => format!(" Did you mean `{one}`?"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|s| format!("`{s}`")).collect();
            format!(" Did you mean {} or `{last}`?", init.join(", "))
        }
    }
}

/// The edit distance between two strings, by characters, counting a swap of two neighbours as one
/// edit (optimal string alignment): `nmae` is one edit from `name`.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        d[i * width] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLUMNS: [&str; 5] = ["enrollment", "state", "name", "founded", "institution_id"];

    #[test]
    fn suggests_close_names_best_first() {
        assert_eq!(closest("enrolment", COLUMNS, 3), ["enrollment"]);
        assert_eq!(closest("STATES", COLUMNS, 3), ["state"]);
        assert_eq!(closest("institution", COLUMNS, 3), ["institution_id"]);
        assert_eq!(closest("nmae", COLUMNS, 3), ["name"]);
    }

    #[test]
    fn suggests_nothing_far_or_exact() {
        assert!(closest("revenue", COLUMNS, 3).is_empty());
        assert!(closest("Name", COLUMNS, 3).is_empty(), "it exists");
        assert!(closest("", COLUMNS, 3).is_empty());
    }

    #[test]
    fn words_the_suggestions() {
        assert_eq!(did_you_mean(&[]), "");
        assert_eq!(did_you_mean(&["a"]), " Did you mean `a`?");
        assert_eq!(did_you_mean(&["a", "b", "c"]), " Did you mean `a`, `b` or `c`?");
    }

    #[test]
    fn tables_match_with_or_without_their_schema() {
        let table = TableSchema::new("public.orders", TableKind::Table, Vec::new());
        assert!(table.is_named("ORDERS") && table.is_named("public.orders"));
        assert!(!table.is_named("order"));
    }
}
