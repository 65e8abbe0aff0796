//! The PostgreSQL store against a real PostgreSQL (`DUAL_TEST_POSTGRES_URL`, feature `services`), in
//! one test binary: `suite.rs` runs the store conformance suite, `outage.rs` the outages through a
//! proxy, and this file what the store does beyond the suite: its migration and table, sharing a
//! table between instances, microsecond resolution, batched purges, the query state columns, and its
//! errors. `support.rs` holds the per-test schema and the fixtures; `../no_server.rs` has the tests
//! that need no server.
#![cfg(feature = "services")]

mod outage;
mod suite;
mod support;

use dual_core::{QuerySpec, ResourceRecord};
use dual_store::{Access, Lookup, ResourceStore, StoreError, Viewer};
use dual_store_postgres::{PostgresStore, PostgresStoreBuilder};

use support::{Namespace, now_micros, record};
use time::{Duration, OffsetDateTime};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_migration_is_idempotent_and_safe_to_race() -> TestResult {
    let namespace = Namespace::new();
    let table = namespace.table();
    let builder = namespace.builder().table(table.clone());
    let starts: Vec<_> = (0..4).map(|_| tokio::spawn(builder.clone().connect())).collect();
    let mut stores = Vec::new();
    for start in starts {
        stores.push(start.await??);
    }
    let now = now_micros();
    let saved = record(now, None);
    stores[0].save(&saved).await?;
    // Starting again over an existing table keeps its records.
    let again = builder.connect().await?;
    assert!(matches!(again.get(saved.id, now).await?, Lookup::Found(_)));

    let raw = namespace.raw().await;
    let index = raw
        .query_opt(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 \
             AND indexname LIKE '%expires_at%'",
            &[&namespace.schema(), &table],
        )
        .await?;
    let Some(index) = index.and_then(|row| row.get::<_, Option<String>>(0)) else {
        panic!("no index on expires_at");
    };
    assert!(
        index.contains("(expires_at)") && index.contains("WHERE"),
        "{index}"
    );
    Ok(())
}

#[tokio::test]
async fn instances_share_one_table() -> TestResult {
    let namespace = Namespace::new();
    let table = namespace.table();
    let first = namespace.builder().table(table.clone()).connect().await?;
    let second = namespace.builder().table(table).connect().await?;
    let now = now_micros();
    let saved = record(now, Some(now + Duration::minutes(15)));
    first.save(&saved).await?;
    let Access::Counted(_) = second.record_access(saved.id, Viewer::Anonymous, now).await? else {
        panic!("a record saved by one instance is served by another");
    };
    let Access::Counted(seen) = first.record_access(saved.id, Viewer::Anonymous, now).await? else {
        panic!("still there");
    };
    assert_eq!(seen.access_count, 2, "both instances' accesses count");
    let Lookup::Found(pinned) = second.pin(saved.id, now).await? else {
        panic!("pin through the other instance");
    };
    assert_eq!(pinned.expires_at, None);
    assert!(first.delete(saved.id).await?);
    assert_eq!(second.get(saved.id, now).await?, Lookup::Missing);
    Ok(())
}

#[tokio::test]
async fn json_keeps_its_text_and_timestamps_keep_microseconds() -> TestResult {
    let namespace = Namespace::new();
    let store = namespace.store().await;
    let now = OffsetDateTime::now_utc().replace_nanosecond(123_456_789)?;
    let mut saved = record(now, Some(now + Duration::minutes(10)));
    saved.query = QuerySpec::new("test", serde_json::json!({"b": 1, "a": [true, null]}));
    store.save(&saved).await?;

    let raw = namespace.raw().await;
    let sql = format!("SELECT query::text FROM {} WHERE id = $1", store.table());
    let text: String = raw.query_one(&sql, &[&saved.id.to_string()]).await?.get(0);
    assert_eq!(
        text, r#"{"kind":"test","params":{"b":1,"a":[true,null]}}"#,
        "stored as json text"
    );

    let Lookup::Found(got) = store.get(saved.id, now).await? else {
        panic!("saved record");
    };
    assert_eq!(
        got.created_at.nanosecond(),
        123_456_000,
        "truncated to the microsecond"
    );
    // Expiry is decided at the same resolution: within the expiring microsecond it is expired.
    let expires = now + Duration::minutes(10);
    assert!(matches!(
        store.get(saved.id, expires - Duration::nanoseconds(790)).await?,
        Lookup::Found(_)
    ));
    assert_eq!(
        store.get(saved.id, expires - Duration::nanoseconds(789)).await?,
        Lookup::Expired
    );
    assert_eq!(
        store
            .record_access(saved.id, Viewer::Anonymous, expires - Duration::nanoseconds(789))
            .await?,
        Access::Expired,
        "record_access decides like get"
    );
    Ok(())
}

#[tokio::test]
async fn purges_in_batches() -> TestResult {
    let namespace = Namespace::new();
    let store = namespace.builder().purge_batch(3).connect().await?;
    dual_testkit::store::purges_in_batches(&store, now_micros()).await;
    Ok(())
}

#[tokio::test]
async fn a_corrupt_row_is_reported_not_served() -> TestResult {
    let namespace = Namespace::new();
    let (store, raw, saved, now) = namespace.saved().await?;
    let sql = format!("UPDATE {} SET access_count = -1 WHERE id = $1", store.table());
    raw.execute(&sql, &[&saved.id.to_string()]).await?;
    // Only `get`: `record_access` counts the access first, which mends the count.
    match store.get(saved.id, now).await {
        Err(StoreError::Corrupt { message, .. }) => {
            assert!(message.contains("column access_count"), "{message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn counts_beyond_bigint_are_refused() -> TestResult {
    let namespace = Namespace::new();
    let store = namespace.store().await;
    let mut huge = record(now_micros(), None);
    huge.total_count = u64::MAX;
    assert!(matches!(store.save(&huge).await, Err(StoreError::Backend { .. })));
    Ok(())
}

#[tokio::test]
async fn a_stores_debug_output_names_its_schema() {
    let namespace = Namespace::new();
    dual_testkit::store::connect::debug_shows(&namespace.store().await, namespace.schema());
}

/// A table of an earlier release: a table with one record, saved at `now`, from which `drop` (a list
/// of `DROP COLUMN …`) removes the columns that release did not have; then the store connected to it
/// again, the migration having run, with the old record.
async fn upgraded(
    namespace: &Namespace,
    drop: &str,
) -> Result<(PostgresStore, ResourceRecord, String), Box<dyn std::error::Error>> {
    let table = namespace.table();
    let builder: PostgresStoreBuilder = namespace.builder().table(table.clone());
    let first = builder.clone().connect().await?;
    let now = now_micros();
    let old = record(now, None);
    first.save(&old).await?;
    let raw = namespace.raw().await;
    raw.batch_execute(&format!(
        "ALTER TABLE \"{}\".\"{table}\" {drop}",
        namespace.schema()
    ))
    .await?;
    Ok((builder.connect().await?, old, table))
}

#[tokio::test]
async fn the_migration_adds_consistency_to_a_table_from_before_snapshots() -> TestResult {
    let namespace = Namespace::new();
    let (upgraded, old, _) = upgraded(&namespace, "DROP COLUMN consistency").await?;
    let now = old.created_at;
    let Lookup::Found(seen) = upgraded.get(old.id, now).await? else {
        panic!("the old record survives the migration");
    };
    assert_eq!(seen.consistency, dual_core::consistency::Consistency::Live);
    let mut snapshot = record(now, None);
    snapshot.consistency = dual_core::consistency::Consistency::Snapshot;
    upgraded.save(&snapshot).await?;
    let Lookup::Found(seen) = upgraded.get(snapshot.id, now).await? else {
        panic!("saved");
    };
    assert_eq!(seen.consistency, dual_core::consistency::Consistency::Snapshot);
    Ok(())
}

#[tokio::test]
async fn the_migration_adds_the_query_state_columns_to_a_table_from_before_statuses() -> TestResult {
    let namespace = Namespace::new();
    // A table of an earlier release: no `status`, `lease_expires_at` or `failure` column.
    let (upgraded, old, table) = upgraded(
        &namespace,
        "DROP COLUMN status, DROP COLUMN lease_expires_at, DROP COLUMN failure",
    )
    .await?;
    let now = old.created_at;
    let raw = namespace.raw().await;
    let Lookup::Found(seen) = upgraded.get(old.id, now).await? else {
        panic!("the old record survives the migration");
    };
    assert_eq!(seen, old, "read as ready, without lease or failure");

    let columns = raw
        .query(
            "SELECT column_name::text, data_type::text, is_nullable::text, coalesce(column_default, '') \
             FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 \
             AND column_name IN ('status', 'lease_expires_at', 'failure') ORDER BY column_name",
            &[&namespace.schema(), &table],
        )
        .await?;
    let columns: Vec<(String, String, String, String)> = columns
        .iter()
        .map(|row| (row.get(0), row.get(1), row.get(2), row.get(3)))
        .collect();
    let column = |name: &str, ty: &str, nullable: &str, default: &str| {
        (
            name.to_owned(),
            ty.to_owned(),
            nullable.to_owned(),
            default.to_owned(),
        )
    };
    assert_eq!(
        columns,
        vec![
            column("failure", "json", "YES", ""),
            column("lease_expires_at", "timestamp with time zone", "YES", ""),
            column("status", "text", "NO", "'ready'::text"),
        ]
    );

    let mut failed = old.clone();
    failed.status = dual_core::status::ResourceStatus::Failed;
    failed.failure = Some(dual_core::status::QueryFailure::new(
        dual_core::status::FailureCode::StorageError,
        "disk full",
    ));
    assert!(upgraded.update_query(&failed).await?);
    let Lookup::Found(seen) = upgraded.get(old.id, now).await? else {
        panic!("updated");
    };
    assert_eq!(seen, failed);
    Ok(())
}

#[tokio::test]
async fn update_query_writes_only_the_query_columns_and_keeps_json_text() -> TestResult {
    let namespace = Namespace::new();
    let store = namespace.store().await;
    let now = now_micros();
    let saved = record(now, Some(now + Duration::minutes(5)));
    store.save(&saved).await?;
    let mut update = saved.clone();
    update.name = "not written".to_owned();
    update.access_count = 7;
    update.status = dual_core::status::ResourceStatus::Pending;
    update.lease_expires_at = Some(now.replace_nanosecond(123_456_789)?);
    update.failure = Some(dual_core::status::QueryFailure::new(
        dual_core::status::FailureCode::QueryExecutionFailed,
        "«x» \"q\" 🎓",
    ));
    assert!(store.update_query(&update).await?);

    let raw = namespace.raw().await;
    let sql = format!(
        "SELECT name, access_count, failure::text FROM {} WHERE id = $1",
        store.table()
    );
    let row = raw.query_one(&sql, &[&saved.id.to_string()]).await?;
    assert_eq!(row.get::<_, String>(0), saved.name, "the name is kept");
    assert_eq!(row.get::<_, i64>(1), 0, "the access count is kept");
    assert_eq!(
        row.get::<_, String>(2),
        r#"{"code":"query_execution_failed","message":"«x» \"q\" 🎓"}"#,
        "stored as json text"
    );
    let Lookup::Found(got) = store.get(saved.id, now).await? else {
        panic!("updated");
    };
    assert_eq!(
        got.lease_expires_at.map(OffsetDateTime::nanosecond),
        Some(123_456_000),
        "the lease is truncated to the microsecond"
    );
    Ok(())
}

#[tokio::test]
async fn an_unknown_status_or_failure_code_is_corrupt_naming_its_column() -> TestResult {
    let namespace = Namespace::new();
    let (store, raw, saved, now) = namespace.saved().await?;
    for (column, value) in [
        ("status", "'done'"),
        ("failure", r#"'{"code":"query_exploded","message":"x"}'"#),
    ] {
        let sql = format!(
            "UPDATE {} SET status = 'ready', failure = NULL WHERE id = $1",
            store.table()
        );
        raw.execute(&sql, &[&saved.id.to_string()]).await?;
        let sql = format!("UPDATE {} SET {column} = {value} WHERE id = $1", store.table());
        raw.execute(&sql, &[&saved.id.to_string()]).await?;
        dual_testkit::store::reported_not_served(&store, saved.id, now, &format!("column {column}")).await;
    }
    Ok(())
}
