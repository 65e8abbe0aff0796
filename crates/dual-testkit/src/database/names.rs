//! The tables the `describe_schema` tool shows, and the "did you mean …" of an unknown name.

use std::sync::Arc;

use dual_sql::schema::TableKind;
use serde_json::Value;

use super::{Database, Limits, sql, stream};

/// The database's tables and views are described with their columns, and a misspelt table or
/// column gets the database's message plus the closest name, never applied: a name close to none
/// gets no suggestion.
pub async fn close_names_are_suggested_never_applied(db: Arc<dyn Database>) {
    let t = db.table("institutions");
    db.execute(&format!(
        "CREATE TABLE {t} (id INTEGER NOT NULL PRIMARY KEY, enrollment INTEGER, state VARCHAR(2) NOT NULL);
         CREATE VIEW {t}_public AS SELECT id, state FROM {t};"
    ))
    .await;
    let tables = db
        .schema()
        .await
        .tables()
        .await
        .unwrap_or_else(|e| panic!("described: {e}"));
    // A listing names a table as the connection sees it: `institutions` or `schema.institutions`.
    let listed = |wanted: &str| {
        tables
            .iter()
            .find(|s| s.name == wanted || wanted.ends_with(&format!(".{}", s.name)))
            .unwrap_or_else(|| panic!("{wanted} is not in {tables:?}"))
    };
    let table = listed(&t);
    assert_eq!(table.kind, TableKind::Table);
    let columns: Vec<(&str, bool)> = table
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.nullable))
        .collect();
    assert_eq!(columns, [("id", false), ("enrollment", true), ("state", false)]);
    // Each column's type as the database names it: the two integers alike, the text another.
    let types: Vec<&str> = table.columns.iter().map(|c| c.data_type.as_str()).collect();
    assert!(types.iter().all(|t| !t.is_empty()), "{types:?}");
    assert_eq!(types[0], types[1], "{types:?}");
    assert_ne!(types[0], types[2], "{types:?}");
    assert_eq!(listed(&format!("{t}_public")).kind, TableKind::View);

    let executor = db.executor(Limits::default()).await;
    let message = |query: String| {
        let executor = Arc::clone(&executor);
        async move {
            let (rows, _) = stream(&executor, sql(&query, Value::Null)).await;
            match rows {
                Ok(rows) => panic!("{query} answered {} rows", rows.len()),
                Err(error) => error.message().to_owned(),
            }
        }
    };
    let column = message(format!("SELECT enrolment FROM {t}")).await;
    assert!(column.contains("enrolment"), "the database's message: {column}");
    assert!(column.ends_with("Did you mean `enrollment`?"), "{column}");
    let table = message(format!("SELECT * FROM {}", db.table("institution"))).await;
    assert!(table.contains("Did you mean `"), "{table}");
    assert!(table.contains("institutions`"), "{table}");
    let far = message(format!("SELECT revenue FROM {t}")).await;
    assert!(far.contains("revenue"), "{far}");
    assert!(
        !far.contains("Did you mean"),
        "no close name, no suggestion: {far}"
    );
}
