use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use futures_util::StreamExt;
use serde_json::json;

use super::*;
use crate::dataset::{self, DatasetSize};
use crate::options::*;
#[allow(unused_imports)]
use dual_core::SortOrder;
use dual_server::RowBatch;

pub(super) fn small_db() -> (SqliteDb, PathBuf) {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "dual-demo-sqlite-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let path = dir.join("small.sqlite");
    dataset::ensure(&path, DatasetSize::SMALL).expect("dataset");
    let db = SqliteDb::open(&path, 2, DEFAULT_TIME_LIMIT).expect("opens");
    (db, dir)
}

fn sql(text: &str) -> Value {
    json!({ "sql": text })
}

/// The kind of the model's SQL, as the tests register it.
pub(super) const SQL_KIND: &str = "sql";
/// A developer's query: the institutions of an optional `state` and `control`.
const INSTITUTIONS_KIND: &str = "institutions";

/// `state` (two letters) and `control` (`public` or `private`), both optional, bound by name.
fn institutions(params: &Value) -> Result<SqliteQuery, String> {
    let mut state = None;
    let mut control = None;
    for (key, value) in params.as_object().into_iter().flatten() {
        match (key.as_str(), value.as_str()) {
            ("state", Some(s)) if s.len() == 2 => state = Some(s.to_ascii_uppercase()),
            ("control", Some(c @ ("public" | "private"))) => control = Some(c.to_owned()),
            (key, _) => return Err(format!("bad parameter `{key}`")),
        }
    }
    Ok(SqliteQuery::new(
        "SELECT * FROM institutions WHERE (:state IS NULL OR state = :state) \
         AND (:control IS NULL OR control = :control) ORDER BY id",
    )
    .bind_named("state", state)
    .bind_named("control", control))
}

fn executor(db: &SqliteDb, kind: &str) -> Arc<SqliteExecutor> {
    Arc::new(match kind {
        SQL_KIND => db.sql_executor(),
        _ => db.query_executor(institutions),
    })
}

/// Removes a test's copy of the dataset when the test ends, passed or failed.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An executor of `kind` over a copy of the small dataset, and the copy's guard.
fn small_executor(kind: &str) -> (Arc<SqliteExecutor>, RemoveOnDrop) {
    let (db, dir) = small_db();
    (executor(&db, kind), RemoveOnDrop(dir))
}

#[tokio::test]
async fn counts_pages_and_sorts_wrapped_sql() {
    let (exec, _dataset) = small_executor(SQL_KIND);
    let params = sql("SELECT id, name, enrollment FROM institutions WHERE control = 'public';");
    let total = exec.count(&params).await.expect("count");
    assert!(total > 50, "{total}");
    let page = exec.fetch(&params, RowWindow::new(10, 5)).await.expect("page");
    assert_eq!(page.len(), 5);
    assert_eq!(page[0].keys().collect::<Vec<_>>(), ["id", "name", "enrollment"]);
    let sorted = exec
        .fetch(
            &params,
            RowWindow::new(0, 3).sorted(Some(&Sort::new("enrollment", SortOrder::Desc))),
        )
        .await
        .expect("sorted");
    let enrollments: Vec<i64> = sorted.iter().filter_map(|r| r["enrollment"].as_i64()).collect();
    assert!(enrollments.windows(2).all(|w| w[0] >= w[1]), "{enrollments:?}");
    let beyond = exec
        .fetch(&params, RowWindow::new(total, 10))
        .await
        .expect("past the end");
    assert!(beyond.is_empty());
    let columns = exec.columns(&params).expect("declared types");
    assert_eq!(
        columns
            .iter()
            .map(|c| (c.name.as_str(), c.column_type))
            .collect::<Vec<_>>(),
        [
            ("id", dual_core::ColumnType::Integer),
            ("name", dual_core::ColumnType::String),
            ("enrollment", dual_core::ColumnType::Integer)
        ]
    );
    // An expression has no declared type: the server infers it from the sample instead.
    assert!(
        exec.columns(&sql("SELECT COUNT(*) AS n FROM institutions"))
            .is_none()
    );
}

#[tokio::test]
async fn sql_errors_carry_sqlites_message_and_writes_are_refused() {
    let (exec, _dataset) = small_executor(SQL_KIND);
    let error = exec
        .count(&sql("SELECT nope FROM institutions"))
        .await
        .expect_err("bad column");
    assert_eq!(error.message(), "no such column: nope");
    let error = exec
        .fetch(&sql("SELEC 1"), RowWindow::new(0, 1))
        .await
        .expect_err("syntax");
    assert!(error.message().contains("SELECT"), "{}", error.message());
    for write in [
        "DELETE FROM institutions",
        "DROP TABLE institutions",
        "INSERT INTO institutions (id) VALUES (1)",
        "WITH x AS (SELECT 1) DELETE FROM institutions",
        "SELECT 1; DELETE FROM institutions",
    ] {
        assert!(exec.count(&sql(write)).await.is_err(), "{write}");
    }
    assert_eq!(
        exec.count(&sql("SELECT * FROM institutions")).await.ok(),
        Some(u64::from(DatasetSize::SMALL.institutions))
    );
    let missing = exec.count(&json!({})).await.expect_err("no sql");
    assert!(missing.message().contains("sql"));
}

#[tokio::test]
async fn an_operator_policy_refuses_more_functions_and_can_be_an_allow_list() {
    let (db, dir) = small_db();
    let _dataset = RemoveOnDrop(dir);
    let policy = FunctionPolicy::new()
        .deny("random", "results must repeat")
        .user_defined(["haversine"]);
    let exec = Arc::new(db.sql_executor_with(policy));
    let error = exec
        .count(&sql("SELECT random() AS r"))
        .await
        .expect_err("denied");
    assert!(
        error.message().contains("results must repeat"),
        "{}",
        error.message()
    );
    let error = exec
        .count(&sql("SELECT haversine(1, 2, 3, 4) AS d"))
        .await
        .expect_err("user-defined");
    assert!(
        error.message().contains("user-defined function"),
        "{}",
        error.message()
    );
    assert_eq!(
        exec.count(&sql("SELECT lower(name) FROM institutions"))
            .await
            .ok(),
        Some(u64::from(DatasetSize::SMALL.institutions))
    );

    let only = Arc::new(db.sql_executor_with(FunctionPolicy::new().allow_only(["count"])));
    assert_eq!(
        only.count(&sql("SELECT count(*) AS n FROM institutions"))
            .await
            .ok(),
        Some(1)
    );
    let error = only
        .count(&sql("SELECT lower(name) FROM institutions"))
        .await
        .expect_err("not listed");
    assert!(
        error.message().contains("sql_function_refused"),
        "{}",
        error.message()
    );
    // The executor without a policy still refuses the built-in list.
    let plain = executor(&db, SQL_KIND);
    assert!(plain.count(&sql("SELECT readfile('/etc/passwd')")).await.is_err());
}

#[tokio::test]
async fn institutions_filters_and_validates() {
    let (exec, _dataset) = small_executor(INSTITUTIONS_KIND);
    let all = exec.count(&json!({})).await.expect("count");
    assert_eq!(all, u64::from(DatasetSize::SMALL.institutions));
    let params = json!({"state": "ca", "control": "public"});
    let rows = exec.fetch(&params, RowWindow::new(0, 1_000)).await.expect("rows");
    assert_eq!(rows.len() as u64, exec.count(&params).await.expect("count"));
    assert!(
        rows.iter()
            .all(|r| r["state"] == "CA" && r["control"] == "public")
    );
    for bad in [
        json!({"state": "California"}),
        json!({"control": "secret"}),
        json!({"city": "x"}),
    ] {
        assert!(exec.count(&bad).await.is_err(), "{bad}");
    }
}

#[tokio::test]
async fn stream_returns_every_row_once_in_order() {
    let (exec, _dataset) = small_executor(SQL_KIND);
    // In the query's own order.
    let params = sql("SELECT id, count FROM degrees_awarded ORDER BY id DESC");
    let mut stream = Arc::clone(&exec).stream(params.clone(), QueryStart::detached());
    let mut ids = Vec::new();
    while let Some(batch) = stream.next().await {
        let batch = batch.and_then(RowBatch::into_rows).expect("batch");
        assert!(batch.len() <= STREAM_BATCH);
        ids.extend(batch.iter().filter_map(|r| r["id"].as_i64()));
    }
    let expected: Vec<i64> = (1..=i64::from(DatasetSize::SMALL.degrees)).rev().collect();
    assert_eq!(ids, expected);
    let mut failing = exec.stream(sql("SELECT nope"), QueryStart::detached());
    let first = failing.next().await.expect("an item");
    assert!(first.is_err());
}

#[tokio::test]
async fn stream_range_seeks_with_limit_and_offset() {
    let (exec, _dataset) = small_executor(SQL_KIND);
    let params = sql("SELECT id FROM degrees_awarded");
    let total = i64::from(DatasetSize::SMALL.degrees);
    let sort = Some(Sort::new("id", SortOrder::Desc));
    let collect = |range: RowRange| {
        let stream = Arc::clone(&exec).stream_range(params.clone(), sort.clone(), range);
        async move {
            let batches: Vec<_> = stream.collect().await;
            batches
                .into_iter()
                .flat_map(|batch| batch.and_then(RowBatch::into_rows).expect("batch"))
                .filter_map(|r| r["id"].as_i64())
                .collect::<Vec<i64>>()
        }
    };
    assert_eq!(
        collect(RowRange::new(2, Some(3))).await,
        [total - 2, total - 3, total - 4]
    );
    assert_eq!(collect(RowRange::new(0, Some(1))).await, [total]);
    let tail = collect(RowRange::new(u64::try_from(total - 2).unwrap_or(0), None)).await;
    assert_eq!(tail, [2, 1]);
    assert!(
        collect(RowRange::new(u64::try_from(total).unwrap_or(0), Some(10)))
            .await
            .is_empty()
    );
    let whole = collect(RowRange::ALL).await;
    assert_eq!(whole.len() as i64, total);
}

#[tokio::test]
async fn the_time_limit_interrupts_runaway_queries() {
    let (_, dir) = small_db();
    let db = SqliteDb::open(&dir.join("small.sqlite"), 1, Duration::from_millis(50)).expect("opens");
    let exec = executor(&db, SQL_KIND);
    // A recursive CTE that would count to a billion.
    let runaway = sql(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) \
         SELECT MAX(i) AS m FROM n",
    );
    let error = exec
        .fetch(&runaway, RowWindow::new(0, 1))
        .await
        .expect_err("interrupted");
    assert!(error.message().contains("time limit"), "{}", error.message());
    // The connection is usable again afterwards.
    assert!(exec.count(&sql("SELECT 1")).await.is_ok());
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_models_sql_binds_params_by_position_and_by_name() {
    let (exec, _dataset) = small_executor(SQL_KIND);
    let by_position = json!({
        "sql": "SELECT id, state FROM institutions WHERE state = ?1 AND control = ?2 ORDER BY id",
        "params": ["CA", "public"],
    });
    let by_name = json!({
        "sql": "SELECT id, state FROM institutions WHERE state = :state AND control = :control ORDER BY id;",
        "params": {"state": "CA", "control": "public"},
    });
    let literal =
        sql("SELECT id, state FROM institutions WHERE state = 'CA' AND control = 'public' ORDER BY id");
    let want = exec
        .fetch(&literal, RowWindow::new(0, 1_000))
        .await
        .expect("literal");
    assert!(!want.is_empty());
    for params in [&by_position, &by_name] {
        assert_eq!(exec.count(params).await.ok(), Some(want.len() as u64), "{params}");
        assert_eq!(
            exec.fetch(params, RowWindow::new(0, 1_000)).await.ok().as_ref(),
            Some(&want),
            "{params}"
        );
        let streamed = collect(Arc::clone(&exec).stream(params.clone(), QueryStart::detached())).await;
        assert_eq!(streamed.ok().as_ref(), Some(&want), "{params}");
    }
    // A value is bound, never interpolated: a quote is just a character of the value.
    let injection = json!({
        "sql": "SELECT id FROM institutions WHERE state = ?",
        "params": ["CA' OR 1=1 --"],
    });
    assert_eq!(exec.count(&injection).await.ok(), Some(0));
    for (bad, says) in [
        (
            json!({"sql": "SELECT id FROM institutions WHERE state = ?", "params": []}),
            "1 parameter",
        ),
        (
            json!({"sql": "SELECT id FROM institutions WHERE state = ?", "params": ["CA", "x"]}),
            "2 value",
        ),
        (
            json!({"sql": "SELECT id FROM institutions WHERE state = :state", "params": {"city": "x"}}),
            "`city`",
        ),
        (
            json!({"sql": "SELECT id FROM institutions WHERE state = ?", "params": [["CA"]]}),
            "parameter 1",
        ),
        (
            json!({"sql": "SELECT id FROM institutions WHERE state = ?", "params": "CA"}),
            "array",
        ),
    ] {
        let error = exec.count(&bad).await.expect_err("refused");
        assert!(error.message().contains(says), "{bad}: {}", error.message());
    }
}

/// Every row of `stream`, or its first error.
async fn collect(mut stream: RowStream) -> Result<Vec<Row>, ExecutorError> {
    let mut rows = Vec::new();
    while let Some(batch) = stream.next().await {
        rows.extend(batch?.into_rows()?);
    }
    Ok(rows)
}

#[tokio::test]
async fn describes_its_tables_and_suggests_close_names_without_applying_them() {
    let (db, dir) = small_db();
    let tables = db.schema().tables().await.expect("described");
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["degrees_awarded", "institutions"]);
    let institutions = &tables[1];
    assert_eq!(institutions.kind, dual_sql::schema::TableKind::Table);
    let id = &institutions.columns[0];
    assert_eq!(
        (id.name.as_str(), id.data_type.as_str(), id.nullable),
        ("id", "INTEGER", false)
    );
    assert!(institutions.columns.iter().any(|c| c.name == "enrollment"));

    let exec = executor(&db, SQL_KIND);
    for (query, message) in [
        (
            "SELECT enrolment FROM institutions",
            "no such column: enrolment. Did you mean `enrollment`?",
        ),
        (
            "SELECT * FROM institution",
            "no such table: institution. Did you mean `institutions`?",
        ),
        // No close name, no suggestion.
        ("SELECT revenue FROM institutions", "no such column: revenue"),
    ] {
        let error = exec.count(&sql(query)).await.expect_err(query);
        assert_eq!(error.message(), message, "{query}");
    }
    // The snapshot's stream words it the same way.
    let streamed =
        collect(Arc::clone(&exec).stream(sql("SELECT nmae FROM institutions"), QueryStart::detached())).await;
    assert_eq!(
        streamed.err().map(|e| e.message().to_owned()).as_deref(),
        Some("no such column: nmae. Did you mean `name`?")
    );
    // Two columns of one name: SQLite names the second of a subquery's `id:1`, so both values stay.
    let twice =
        collect(Arc::clone(&exec).stream(sql("SELECT 1 AS id, 2 AS id"), QueryStart::detached())).await;
    let row = json!({"id": 1, "id:1": 2})
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert_eq!(twice.ok(), Some(vec![row]));
    let _ = std::fs::remove_dir_all(dir);
}
