//! The rows of the example executor: two shapes, and their order under a sort.

use dual_core::{Row, Sort, SortOrder};
use serde_json::{Value, json};

/// Row `i` of the default shape, four columns: `{"id": i, "name": "College {i}", "enrollment": (i ×
/// 7919) mod 1000, "public": i is even}`.
#[must_use]
pub fn row(i: u64) -> Row {
    object(json!({
        "id": i,
        "name": format!("College {i}"),
        "enrollment": (i * 7919) % 1000,
        "public": i.is_multiple_of(2),
    }))
}

/// Row `i` of a typical report, eight columns of mixed types: `id`, `name`, `state`, `city`,
/// `enrollment`, `tuition` (a float), `public` and `founded` (a date).
#[must_use]
pub fn wide_row(i: u64) -> Row {
    let states = ["NJ", "NY", "PA", "CT"];
    object(json!({
        "id": i,
        "name": format!("Institution {i}"),
        "state": states[usize::try_from(i % 4).unwrap_or(0)],
        "city": format!("City {}", i % 977),
        "enrollment": (i * 7919) % 1_000_003,
        "tuition": i as f64 * 1.5 + 0.25,
        "public": i.is_multiple_of(3),
        "founded": format!("{}-01-01", 1800 + i % 200),
    }))
}

/// A JSON object as a [`Row`]; anything else is the empty row.
#[must_use]
pub fn object(value: Value) -> Row {
    value.as_object().cloned().unwrap_or_default()
}

/// Rows `0..n` of `row` in the order `sort` asks: numbers by value, anything else by its JSON text,
/// ties by id; descending is the exact reverse.
pub(crate) fn sorted(n: u64, row: fn(u64) -> Row, sort: &Sort) -> Vec<Row> {
    let mut rows: Vec<Row> = (0..n).map(row).collect();
    rows.sort_by(|a, b| {
        let key = |r: &Row| r.get(&sort.field).cloned().unwrap_or(Value::Null);
        let ord = match (key(a), key(b)) {
            (Value::Number(x), Value::Number(y)) => x
                .as_f64()
                .unwrap_or_default()
                .total_cmp(&y.as_f64().unwrap_or_default()),
            (x, y) => x.to_string().cmp(&y.to_string()),
        };
        let ord = ord.then_with(|| a["id"].as_u64().cmp(&b["id"].as_u64()));
        if sort.order == SortOrder::Desc {
            ord.reverse()
        } else {
            ord
        }
    });
    rows
}

/// The id at position `i` of `0..n` sorted by `id` (or unsorted).
pub(super) fn id_at(i: u64, n: u64, desc: bool) -> u64 {
    if desc { n - 1 - i } else { i }
}
