//! How a record is laid out in its Redis hash, and back.

use std::sync::Arc;

use dual_core::{
    Column, ResourceRecord, Row,
    consistency::Consistency,
    status::{QueryFailure, ResourceStatus},
};
use dual_store::StoreError;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The record as JSON, as saved (its `access_count`, `last_accessed_at`, once pinned `expires_at`,
/// and once `update_query` ran its query's part are superseded by the fields below).
pub(crate) const RECORD: &str = "rec";
/// The query's part of the record as JSON ([`QueryPart`]), written by `update_query`; absent until
/// then (a save deletes it with the rest of the key).
pub(crate) const QUERY: &str = "q";
/// The access counter, an integer `HINCRBY` bumps.
pub(crate) const COUNT: &str = "n";
/// The last access, RFC 3339; absent until the first access.
pub(crate) const LAST_ACCESS: &str = "la";
/// The owner, as `record_access` checks it: [`NO_OWNER`] for a record without one, else
/// [`OWNED`] followed by the owner. Absent in records saved before it existed (the script then reads
/// the owner out of [`RECORD`]).
pub(crate) const OWNER: &str = "o";
/// [`OWNER`] of a record created without an owner.
pub(crate) const NO_OWNER: &str = "-";
/// The prefix of [`OWNER`] before the owner of an owned record.
pub(crate) const OWNED: &str = "=";
/// Whole microseconds of `expires_at` since the Unix epoch; absent once pinned.
pub(crate) const EXPIRES_MICROS: &str = "eu";
/// Nanoseconds of `expires_at` past [`EXPIRES_MICROS`] (0..=999); absent once pinned.
pub(crate) const EXPIRES_NANOS: &str = "en";

/// A point in time as Lua compares it exactly: whole microseconds since the Unix epoch (exact in a
/// Lua number, a double, until the year 2255) and the nanoseconds past them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SplitTime {
    pub(crate) micros: i64,
    pub(crate) nanos: i64,
}

impl SplitTime {
    pub(crate) fn new(at: OffsetDateTime) -> Self {
        let total = at.unix_timestamp_nanos();
        Self {
            // `OffsetDateTime` spans ±9999 years, well inside i64 microseconds.
            micros: i64::try_from(total.div_euclid(1_000)).unwrap_or(i64::MAX),
            nanos: i64::try_from(total.rem_euclid(1_000)).unwrap_or(0),
        }
    }
}

/// The hash fields a save writes (after deleting the key, so no stale field survives).
pub(crate) fn encode(record: &ResourceRecord) -> Result<Vec<(&'static str, String)>, StoreError> {
    let json = serde_json::to_string(record)
        .map_err(|e| StoreError::backend("cannot encode record").with_source(e))?;
    let count = record.access_count.min(i64::MAX as u64);
    let owner = owner_field(record);
    let mut fields = vec![(RECORD, json), (COUNT, count.to_string()), (OWNER, owner)];
    if let Some(at) = record.last_accessed_at {
        fields.push((LAST_ACCESS, format_time(at)?));
    }
    if let Some(at) = record.expires_at {
        let split = SplitTime::new(at);
        fields.push((EXPIRES_MICROS, split.micros.to_string()));
        fields.push((EXPIRES_NANOS, split.nanos.to_string()));
    }
    Ok(fields)
}

/// The value of [`OWNER`] for `record`.
pub(crate) fn owner_field(record: &ResourceRecord) -> String {
    owner_value(record.owner.as_deref())
}

/// The value of [`OWNER`] for a record of `owner`.
pub(crate) fn owner_value(owner: Option<&str>) -> String {
    owner.map_or_else(|| NO_OWNER.to_owned(), |owner| format!("{OWNED}{owner}"))
}

/// The value of [`QUERY`] for `record`'s query part.
pub(crate) fn encode_query(record: &ResourceRecord) -> Result<String, StoreError> {
    let part = QueryPartRef {
        status: record.status,
        total_count: record.total_count,
        spooled_rows: record.spooled_rows,
        columns: &record.columns,
        sample: &record.sample,
        consistency: record.consistency,
        lease_expires_at: record.lease_expires_at,
        failure: record.failure.as_ref(),
    };
    serde_json::to_string(&part).map_err(|e| StoreError::backend("cannot encode query state").with_source(e))
}

/// The fields `update_query` overwrites, with the record's wire names, borrowed for encoding.
#[derive(Serialize)]
struct QueryPartRef<'a> {
    status: ResourceStatus,
    total_count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    spooled_rows: Option<u64>,
    columns: &'a [Column],
    sample: &'a [Row],
    consistency: Consistency,
    #[serde(with = "time::serde::rfc3339::option")]
    lease_expires_at: Option<OffsetDateTime>,
    failure: Option<&'a QueryFailure>,
}

/// The fields `update_query` overwrites, as [`QUERY`] holds them. The store always writes all of
/// them; a value without one (but `failure` and `spooled_rows`, which serde reads as `None` when
/// absent) is corrupt.
#[derive(Deserialize)]
struct QueryPart {
    status: ResourceStatus,
    total_count: u64,
    #[serde(default)]
    spooled_rows: Option<u64>,
    columns: Vec<Column>,
    sample: Arc<[Row]>,
    consistency: Consistency,
    #[serde(with = "time::serde::rfc3339::option")]
    lease_expires_at: Option<OffsetDateTime>,
    failure: Option<QueryFailure>,
}

pub(crate) fn format_time(at: OffsetDateTime) -> Result<String, StoreError> {
    at.format(&Rfc3339)
        .map_err(|e| StoreError::backend("cannot format timestamp").with_source(e))
}

/// A record as read back from its hash.
#[derive(Debug)]
pub(crate) struct Stored {
    pub(crate) json: String,
    /// The query's part ([`QUERY`]); `None` or empty when `update_query` never ran.
    pub(crate) query: Option<String>,
    pub(crate) count: Option<u64>,
    /// The last access, RFC 3339; `None` or empty when never accessed.
    pub(crate) last_access: Option<String>,
    pub(crate) pinned: bool,
}

/// A record as the scripts that read one answer it: its JSON, query part, access count, last access
/// and whether it is pinned (`1`).
pub(crate) type ScriptRecord = (String, String, u64, String, i64);

impl Stored {
    /// The record a script answered, decoded.
    pub(crate) fn decode_script(
        (json, query, count, last_access, pinned): ScriptRecord,
    ) -> Result<ResourceRecord, StoreError> {
        Self {
            json,
            query: Some(query),
            count: Some(count),
            last_access: Some(last_access),
            pinned: pinned == 1,
        }
        .decode()
    }

    pub(crate) fn decode(self) -> Result<ResourceRecord, StoreError> {
        let mut record: ResourceRecord = serde_json::from_str(&self.json)
            .map_err(|e| StoreError::corrupt("record JSON").with_source(e))?;
        if let Some(count) = self.count {
            record.access_count = count;
        }
        record.last_accessed_at = match self.last_access.as_deref() {
            None | Some("") => record.last_accessed_at,
            Some(text) => Some(
                OffsetDateTime::parse(text, &Rfc3339)
                    .map_err(|e| StoreError::corrupt("last access time").with_source(e))?,
            ),
        };
        if self.pinned {
            record.expires_at = None;
        }
        if let Some(text) = self.query.as_deref().filter(|text| !text.is_empty()) {
            let part: QueryPart = serde_json::from_str(text)
                .map_err(|e| StoreError::corrupt("query state JSON").with_source(e))?;
            record.status = part.status;
            record.total_count = part.total_count;
            record.spooled_rows = part.spooled_rows;
            record.columns = part.columns;
            record.sample = part.sample;
            record.consistency = part.consistency;
            record.lease_expires_at = part.lease_expires_at;
            record.failure = part.failure;
        }
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::SplitTime;

    #[test]
    fn splits_exactly_on_both_sides_of_the_epoch() {
        let at = datetime!(2026-01-15 10:30:00.123_456_789 UTC);
        let split = SplitTime::new(at);
        assert_eq!(split.micros, 1_768_473_000_123_456);
        assert_eq!(split.nanos, 789);
        let before = SplitTime::new(datetime!(1969-12-31 23:59:59.999_999_999 UTC));
        assert_eq!((before.micros, before.nanos), (-1, 999));
    }
}
