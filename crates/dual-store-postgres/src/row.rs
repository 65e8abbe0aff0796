//! Records to statement parameters and rows back to records.

use dual_core::{
    Column, QuerySpec, ResourceRecord, Row as SampleRow,
    consistency::Consistency,
    status::{QueryFailure, ResourceStatus},
};
use dual_store::StoreError;
use serde_json::Value;
use time::OffsetDateTime;
use tokio_postgres::Row;
use tokio_postgres::types::{FromSql, Json, ToSql};

/// `at` truncated to whole microseconds, PostgreSQL's resolution. Every timestamp the store writes or
/// compares goes through this, so the store decides expiry exactly at the resolution it keeps.
pub(crate) fn micros(at: OffsetDateTime) -> OffsetDateTime {
    at.replace_nanosecond(at.nanosecond() / 1_000 * 1_000)
        .unwrap_or(at)
}

/// A count as a `bigint` parameter, or why it does not fit one.
fn bigint(what: &str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value)
        .map_err(|_| StoreError::backend(format!("{what} {value} does not fit a bigint column")))
}

/// The parameters of the `update_query` statement (the id and the query's columns), converted once
/// so `params` can lend them out.
pub(crate) struct QueryParams<'a> {
    id: String,
    status: &'static str,
    total_count: i64,
    columns: Json<&'a [Column]>,
    sample: Json<&'a [SampleRow]>,
    consistency: &'static str,
    lease_expires_at: Option<OffsetDateTime>,
    failure: Option<Json<&'a QueryFailure>>,
    spooled_rows: Option<i64>,
}

impl<'a> QueryParams<'a> {
    pub(crate) fn new(record: &'a ResourceRecord) -> Result<Self, StoreError> {
        Ok(Self {
            id: record.id.to_string(),
            status: record.status.as_str(),
            total_count: bigint("total_count", record.total_count)?,
            columns: Json(&record.columns),
            sample: Json(&record.sample[..]),
            consistency: record.consistency.as_str(),
            lease_expires_at: record.lease_expires_at.map(micros),
            failure: record.failure.as_ref().map(Json),
            spooled_rows: record
                .spooled_rows
                .map(|rows| bigint("spooled_rows", rows))
                .transpose()?,
        })
    }

    /// In the parameter order of the `update_query` statement.
    pub(crate) fn params(&self) -> [&(dyn ToSql + Sync); 9] {
        [
            &self.id,
            &self.status,
            &self.total_count,
            &self.columns,
            &self.sample,
            &self.consistency,
            &self.lease_expires_at,
            &self.failure,
            &self.spooled_rows,
        ]
    }
}

/// The parameters of the save statement, converted once so `params` can lend them out.
pub(crate) struct SaveParams<'a> {
    part: QueryParams<'a>,
    name: &'a str,
    query: Json<&'a QuerySpec>,
    created_at: OffsetDateTime,
    expires_at: Option<OffsetDateTime>,
    access_count: i64,
    last_accessed_at: Option<OffsetDateTime>,
    owner: Option<&'a str>,
    metadata: Json<&'a Value>,
}

impl<'a> SaveParams<'a> {
    pub(crate) fn new(record: &'a ResourceRecord) -> Result<Self, StoreError> {
        Ok(Self {
            part: QueryParams::new(record)?,
            name: &record.name,
            query: Json(&record.query),
            created_at: micros(record.created_at),
            expires_at: record.expires_at.map(micros),
            access_count: bigint("access_count", record.access_count)?,
            last_accessed_at: record.last_accessed_at.map(micros),
            owner: record.owner.as_deref(),
            metadata: Json(&record.metadata),
        })
    }

    /// In the column order of the save statement.
    pub(crate) fn params(&self) -> [&(dyn ToSql + Sync); 17] {
        [
            &self.part.id,
            &self.name,
            &self.query,
            &self.part.columns,
            &self.part.total_count,
            &self.part.sample,
            &self.created_at,
            &self.expires_at,
            &self.access_count,
            &self.last_accessed_at,
            &self.owner,
            &self.metadata,
            &self.part.consistency,
            &self.part.status,
            &self.part.lease_expires_at,
            &self.part.failure,
            &self.part.spooled_rows,
        ]
    }
}

fn column<'r, T: FromSql<'r>>(row: &'r Row, name: &str) -> Result<T, StoreError> {
    row.try_get(name)
        .map_err(|e| StoreError::corrupt(format!("column {name}")).with_source(e))
}

/// The record in a row of the table's columns.
pub(crate) fn decode(row: &Row) -> Result<ResourceRecord, StoreError> {
    let id: String = column(row, "id")?;
    let count = |name: &str| -> Result<u64, StoreError> {
        let value: i64 = column(row, name)?;
        u64::try_from(value).map_err(|_| StoreError::corrupt(format!("column {name}: negative")))
    };
    Ok(ResourceRecord {
        id: id
            .parse()
            .map_err(|_| StoreError::corrupt("column id: not a ULID"))?,
        name: column(row, "name")?,
        query: column::<Json<QuerySpec>>(row, "query")?.0,
        columns: column::<Json<Vec<Column>>>(row, "columns")?.0,
        total_count: count("total_count")?,
        sample: column::<Json<Vec<SampleRow>>>(row, "sample")?.0.into(),
        created_at: column(row, "created_at")?,
        expires_at: column(row, "expires_at")?,
        access_count: count("access_count")?,
        last_accessed_at: column(row, "last_accessed_at")?,
        owner: column(row, "owner")?,
        metadata: column::<Json<Value>>(row, "metadata")?.0,
        consistency: column::<String>(row, "consistency")?
            .parse::<Consistency>()
            .map_err(|e| StoreError::corrupt("column consistency").with_source(e))?,
        status: {
            let status: String = column(row, "status")?;
            ResourceStatus::parse(&status)
                .ok_or_else(|| StoreError::corrupt("column status: not `pending`, `ready` or `failed`"))?
        },
        lease_expires_at: column(row, "lease_expires_at")?,
        // An unknown failure code fails the JSON decode, which `column` reports naming the column.
        failure: column::<Option<Json<QueryFailure>>>(row, "failure")?.map(|failure| failure.0),
        spooled_rows: column::<Option<i64>>(row, "spooled_rows")?
            .map(|rows| u64::try_from(rows).map_err(|_| StoreError::corrupt("column spooled_rows: negative")))
            .transpose()?,
    })
}

/// The record of a `Sql::record_access` row when the access was counted, otherwise whether the row
/// was there and expired (`None` when there was no row, `Some(false)` when it is live but not the
/// viewer's).
pub(crate) fn decode_access(row: &Row) -> Result<Result<ResourceRecord, Option<bool>>, StoreError> {
    let id: Option<String> = column(row, "id")?;
    if id.is_some() {
        decode(row).map(Ok)
    } else {
        column(row, "expired").map(Err)
    }
}

/// The record of an update-if-live row (see `Sql::pin`) when the update matched, otherwise whether
/// the id exists.
pub(crate) fn decode_update(row: &Row) -> Result<Result<ResourceRecord, bool>, StoreError> {
    let id: Option<String> = column(row, "id")?;
    if id.is_some() {
        decode(row).map(Ok)
    } else {
        column(row, "present").map(Err)
    }
}
