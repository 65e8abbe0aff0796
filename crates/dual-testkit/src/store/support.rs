//! Fixtures and helpers shared by the suite's cases.

use std::sync::Arc;

use dual_core::{
    Column, ColumnType, QuerySpec, ResourceId, ResourceRecord, Row,
    consistency::Consistency,
    status::{FailureCode, QueryFailure, ResourceStatus},
};
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

use dual_store::{Access, Lookup, ResourceStore, StoreError, Viewer};

/// The instant a case treats as "now": the real clock, truncated to whole microseconds.
///
/// Every record the suite saves expires minutes after this instant, so a backend that also sets a native
/// TTL (Redis `PEXPIREAT`, say) never drops one while a case runs; later instants are only passed as
/// `now` arguments.
pub(super) fn base_now() -> OffsetDateTime {
    let now = OffsetDateTime::now_utc();
    now - Duration::nanoseconds(i64::from(now.nanosecond() % 1_000))
}

/// `at` with its sub-second part replaced by `micros` microseconds.
pub(super) fn with_micros(at: OffsetDateTime, micros: u32) -> OffsetDateTime {
    at - Duration::nanoseconds(i64::from(at.nanosecond())) + Duration::microseconds(i64::from(micros))
}

/// A small record named `name`, created at `now`, that expires at `expires_at` (`None`: pinned): one
/// integer column `n` and one sample row. For a backend's own tests as well as the suite's cases.
#[must_use]
pub fn record(name: &str, now: OffsetDateTime, expires_at: Option<OffsetDateTime>) -> ResourceRecord {
    ResourceRecord {
        id: ResourceId::new(),
        name: name.to_owned(),
        query: QuerySpec::new("suite", json!({"name": name})),
        columns: vec![Column::new("n", ColumnType::Integer)],
        total_count: 1,
        spooled_rows: None,
        sample: vec![row(json!({"n": 1}))].into(),
        created_at: now,
        expires_at,
        access_count: 0,
        last_accessed_at: None,
        owner: None,
        metadata: Value::Null,
        consistency: Consistency::Live,
        status: ResourceStatus::Ready,
        lease_expires_at: None,
        failure: None,
    }
}

/// A record exercising every field: unicode, nested JSON in a deliberate key order, every JSON type,
/// integers beyond `f64` precision, a column of every [`ColumnType`], microsecond timestamps.
pub(super) fn rich_record(now: OffsetDateTime) -> ResourceRecord {
    let columns = vec![
        Column::new("id", ColumnType::Integer),
        Column::new("名前 (name)", ColumnType::String),
        Column::new("gpa", ColumnType::Number),
        Column::new("public", ColumnType::Boolean),
        Column::new("founded", ColumnType::Date),
        Column::new("updated_at", ColumnType::Datetime),
        Column::new("extra", ColumnType::Json),
    ];
    debug_assert_eq!(columns.len(), ColumnType::ALL.len());
    let sample = vec![
        row(json!({
            "id": 9_007_199_254_740_993_u64, "名前 (name)": "Rutgers — Nové Město 🎓 \"q\" \\ 'x'\n\t",
            "gpa": 3.761_904_761_904_762_f64, "public": true, "founded": "1766-11-10",
            "updated_at": "2026-01-15T10:30:00.123456Z",
            "extra": {"z": [1, 2.5, "three", null, true, {"deep": [[], {}]}], "a": {"b": {"c": "d"}}},
        })),
        row(json!({
            "id": u64::MAX, "名前 (name)": "مرحبا بالعالم e\u{301} 👩‍🔬", "gpa": -2.5e-8_f64, "public": false,
            "founded": "2000-02-29", "updated_at": "1999-12-31T23:59:59.999999+05:30",
            "extra": [i64::MIN, i64::MAX, 6.022_140_76e23_f64, 1.0_f64, 0.1_f64, -0.0_f64],
        })),
        row(json!({
            "id": null, "名前 (name)": "", "gpa": null, "public": null, "founded": null,
            "updated_at": null, "extra": null,
        })),
    ];
    ResourceRecord {
        id: ResourceId::new(),
        name: "Résultats « NJ » — 東京の大学 🎓 'quoted' \"double\" \\ ; DROP TABLE resources;--\r\n"
            .to_owned(),
        query: QuerySpec::new(
            "institutions.search/v2",
            json!({
                "zeta": 1, "state": "NJ", "alpha": {"nested": [1, "two", null, true, {"deep": [[]]}]},
                "big": u64::MAX, "neg": i64::MIN, "ratio": 0.1_f64, "empty_obj": {}, "empty_arr": [],
                "ключ": "значение",
            }),
        ),
        columns,
        total_count: 9_007_199_254_740_993,
        spooled_rows: None,
        sample: sample.into(),
        created_at: with_micros(now - Duration::minutes(1), 123_456),
        expires_at: Some(with_micros(now + Duration::minutes(15), 654_321)),
        access_count: 41,
        last_accessed_at: Some(with_micros(now - Duration::seconds(5), 1)),
        owner: Some("tenant-ä/π 🔑 \"owner\"".to_owned()),
        metadata: json!({
            "source": "suite", "nested": {"list": [1, 2.5, "x", null, false], "obj": {"k": "v"}},
            "emoji": "🎓", "count": 0, "null": null,
        }),
        consistency: Consistency::Snapshot,
        status: ResourceStatus::Failed,
        lease_expires_at: Some(with_micros(now + Duration::seconds(15), 500_001)),
        failure: Some(QueryFailure::new(
            FailureCode::QueryExecutionFailed,
            "no such column: «naïve» 🎓 \"x\" \\ ;--\n",
        )),
    }
}

/// A record with every optional or empty field empty.
pub(super) fn minimal_record(now: OffsetDateTime) -> ResourceRecord {
    ResourceRecord {
        name: String::new(),
        query: QuerySpec::new("k", Value::Null),
        columns: Vec::new(),
        total_count: 0,
        spooled_rows: None,
        sample: Vec::new().into(),
        created_at: with_micros(now, 999_999),
        ..record("", now, None)
    }
}

fn row(value: Value) -> Row {
    match value {
        Value::Object(map) => map,
        other => panic!("suite fixture rows are objects, got {other}"),
    }
}

/// Turns a store error into a panic that says which operation failed.
pub(super) trait OrPanic<T> {
    /// The value, or a panic naming `op` and the error.
    fn or_panic(self, op: &str) -> T;
}

impl<T> OrPanic<T> for Result<T, StoreError> {
    #[track_caller]
    fn or_panic(self, op: &str) -> T {
        self.unwrap_or_else(|err| panic!("{op} returned an error: {err}"))
    }
}

/// The record of a [`Lookup::Found`], or a panic saying what was expected.
#[track_caller]
pub(super) fn found(lookup: Lookup, what: &str) -> ResourceRecord {
    match lookup {
        Lookup::Found(record) => record,
        other => panic!("{what}: expected Lookup::Found, got {other:?}"),
    }
}

/// A new [`record`], saved.
pub(super) async fn saved_record(
    store: &dyn ResourceStore,
    name: &str,
    now: OffsetDateTime,
    expires_at: Option<OffsetDateTime>,
) -> ResourceRecord {
    let saved = record(name, now, expires_at);
    store.save(&saved).await.or_panic("save");
    saved
}

/// The record `get` finds for `id` at `now`, or a panic naming `what`.
pub(super) async fn get_found(
    store: &dyn ResourceStore,
    id: ResourceId,
    now: OffsetDateTime,
    what: &str,
) -> ResourceRecord {
    found(store.get(id, now).await.or_panic("get"), what)
}

/// The record of an [`Access::Counted`], or a panic saying what was expected.
#[track_caller]
pub(super) fn counted(access: Access, what: &str) -> ResourceRecord {
    match access {
        Access::Counted(record) => Arc::unwrap_or_clone(record),
        other => panic!("{what}: expected Access::Counted, got {other:?}"),
    }
}

/// The record `record_access` of `id` by an anonymous viewer (the suite's records have no owner)
/// at `now` returns, or a panic naming `what`.
pub(super) async fn access_found(
    store: &dyn ResourceStore,
    id: ResourceId,
    now: OffsetDateTime,
    what: &str,
) -> ResourceRecord {
    counted(
        store
            .record_access(id, Viewer::Anonymous, now)
            .await
            .or_panic("record_access"),
        what,
    )
}

/// What `record_access` answers where `get` answers `lookup` (`Missing` or `Expired`).
pub(super) fn access_of(lookup: &Lookup) -> Access {
    match lookup {
        Lookup::Found(record) => Access::Counted(Arc::new(record.clone())),
        Lookup::Expired => Access::Expired,
        Lookup::Missing => Access::Missing,
    }
}

/// Asserts that `get`, `record_access` and `pin` of `id` at `now` each answer `want` (`Missing` or
/// `Expired`, which change nothing).
pub(super) async fn expect_lookups(
    store: &dyn ResourceStore,
    id: ResourceId,
    now: OffsetDateTime,
    want: &Lookup,
    what: &str,
) {
    expect_get(store, id, now, want, &format!("get: {what}")).await;
    let got = store
        .record_access(id, Viewer::Anonymous, now)
        .await
        .or_panic("record_access");
    assert_eq!(got, access_of(want), "record_access: {what}");
    let got = store.pin(id, now).await.or_panic("pin");
    assert_eq!(&got, want, "pin: {what}");
}

/// Asserts that `find_expired` at `at` finds nothing.
pub(super) async fn expect_none_expired(store: &dyn ResourceStore, at: OffsetDateTime, what: &str) {
    let expired = store.find_expired(at, 10).await.or_panic("find_expired");
    assert!(expired.is_empty(), "{what}: find_expired found {expired:?}");
}

/// Asserts that `get` of `id` at `now` answers `want`.
pub(super) async fn expect_get(
    store: &dyn ResourceStore,
    id: ResourceId,
    now: OffsetDateTime,
    want: &Lookup,
    what: &str,
) {
    let got = store.get(id, now).await.or_panic("get");
    assert_eq!(&got, want, "{what}");
}
