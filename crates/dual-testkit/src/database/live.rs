//! Live paging: a count and a sorted window of a query run again for every page.

use std::sync::Arc;

use dual_core::{Sort, SortOrder};
use dual_server::RowWindow;
use serde_json::json;

use super::{Database, Limits};

/// A developer's query and the model's SQL page live: the count, a window sorted either way by any
/// column (a name with a space included, quoted by the executor), and the query's own parameters;
/// a query builder's refusal reaches the model as written.
pub async fn live_pages_count_sort_and_seek(db: Arc<dyn Database>) {
    let t = db.table("live_numbers");
    let odd = db.quote("odd name");
    let values: Vec<String> = (1..=50).map(|i| format!("({i}, 'n{i}')")).collect();
    db.execute(&format!(
        "CREATE TABLE {t} (id INTEGER NOT NULL PRIMARY KEY, {odd} VARCHAR(10));
         INSERT INTO {t} VALUES {};",
        values.join(", ")
    ))
    .await;
    let query = db
        .query_executor(format!("SELECT id, {odd} FROM {t} WHERE id <= {}", db.param(1)))
        .await;
    let live = query
        .live()
        .unwrap_or_else(|| panic!("a query executor pages live"));
    let params = json!({"n": 50});
    assert_eq!(live.count(&params).await.ok(), Some(50));
    let descending = Sort::new("id", SortOrder::Desc);
    let rows = live
        .fetch(&params, RowWindow::new(10, 3).sorted(Some(&descending)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<u64> = rows.iter().filter_map(|r| r["id"].as_u64()).collect();
    assert_eq!(ids, [40, 39, 38]);
    let by_name = Sort::new("odd name", SortOrder::Asc);
    let rows = live
        .fetch(&params, RowWindow::new(0, 2).sorted(Some(&by_name)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = rows.iter().filter_map(|r| r["odd name"].as_str()).collect();
    assert_eq!(names, ["n1", "n10"], "text order");
    let refused = live.count(&json!({})).await.err().map(|e| e.message().to_owned());
    assert_eq!(refused.as_deref(), Some("`n` is required"));

    let model = db.executor(Limits::default()).await;
    let live = model
        .live()
        .unwrap_or_else(|| panic!("the model's SQL pages live"));
    let params = json!({"sql": format!("SELECT id FROM {t} WHERE id > {}", db.param(1)), "params": [45]});
    assert_eq!(live.count(&params).await.ok(), Some(5));
    let rows = live
        .fetch(&params, RowWindow::new(1, 10))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<u64> = rows.iter().filter_map(|r| r["id"].as_u64()).collect();
    assert_eq!(ids.len(), 4, "{rows:?}");
}
