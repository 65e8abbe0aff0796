//! Kind `typed`: rows with a value of every column type, for the Arrow exports.

use dual_core::{Column, ColumnType, Row};
use dual_server::DualResponseServer;
use dual_testkit::executor::Paged;
use serde_json::{Value, json};

/// The columns of kind `typed`, one of each type.
pub fn columns() -> Vec<Column> {
    vec![
        Column::new("id", ColumnType::Integer),
        Column::new("ratio", ColumnType::Number),
        Column::new("active", ColumnType::Boolean),
        Column::new("name", ColumnType::String),
        Column::new("founded", ColumnType::Date),
        Column::new("updated", ColumnType::Datetime),
        Column::new("tags", ColumnType::Json),
        Column::new("note", ColumnType::String),
    ]
}

/// Row `i`: `note` is null in even rows and missing in rows divisible by 3 and odd.
pub fn row(i: u64) -> Row {
    let mut value = json!({
        "id": i,
        "ratio": i as f64 / 4.0,
        "active": i.is_multiple_of(3),
        "name": format!("Name {i}, \"quoted\""),
        "founded": format!("{:04}-{:02}-{:02}", 1900 + i % 100, i % 12 + 1, i % 28 + 1),
        "updated": format!("2026-01-15T10:30:{:02}.5+01:00", i % 60),
        "tags": {"k": i % 5, "even": i.is_multiple_of(2)},
        "note": if i.is_multiple_of(2) { Value::Null } else { json!("odd") },
    });
    if let Some(map) = value.as_object_mut()
        && i % 6 == 3
    {
        map.remove("note");
    }
    value.as_object().cloned().unwrap_or_default()
}

/// Kind `typed`, `{"n": rows, "bad_at": k}`: `n` rows of [`row`]; row `k`, if given, has a string
/// `id`, which does not fit the `integer` column.
pub fn typed() -> Paged {
    Paged::new(|params, i| {
        let mut row = row(i);
        if params["bad_at"].as_u64() == Some(i) {
            row.insert("id".to_owned(), json!("not a number"));
        }
        row
    })
    .columns(columns())
}

/// A server with kind `typed`.
pub fn server() -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://127.0.0.1/resources")
        .executor("typed", typed())
        .without_sweeper()
        .build()
        .expect("valid configuration")
}

/// Creates a resource of kind `typed` with `params`: its id.
pub async fn create(server: &DualResponseServer, params: Value) -> dual_core::ResourceId {
    super::create_of(server, "typed", params).await
}
