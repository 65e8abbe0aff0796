//! What an export would answer, without running it: the checks behind `HEAD /{id}/data`.

use dual_core::{ResourceId, ResourceRecord, Sort, page::validate_sort, range::RowRange};

use crate::source::Source;
use crate::{Caller, DualResponseServer, ServerError};

impl DualResponseServer {
    /// The record of `id` when [`DualResponseServer::export_range`] with `sort` and `range` would
    /// start an export for `caller`, and its error when it would not, found by the same checks in the
    /// same order (authorization, expiry, status, sort field, range, and for a live resource an
    /// executor registered for its kind). Nothing else happens: no access is counted, no snapshot is
    /// read, no sorted order derived and no query run, so it answers a `HEAD` of an export at the
    /// cost of one store read.
    ///
    /// # Errors
    /// As [`DualResponseServer::export_range`] before its stream starts: `RESOURCE_NOT_FOUND` (also
    /// for a resource bound to another owner), `RESOURCE_EXPIRED`, `NOT_READY`, `RESOURCE_FAILED`,
    /// `INVALID_REQUEST` (a sort field that is not a column, an `offset` beyond `total_count`),
    /// `UNKNOWN_QUERY_KIND` or `STORAGE_ERROR`.
    pub async fn check_export(
        &self,
        id: ResourceId,
        caller: &Caller,
        sort: Option<&Sort>,
        range: RowRange,
    ) -> Result<ResourceRecord, ServerError> {
        let record = self.get_resource(id, caller).await?;
        Self::readable(&record)?;
        if let Some(sort) = sort {
            validate_sort(sort, &record.columns)?;
        }
        range.check(record.total_count)?;
        if !Source::of(self.inner(), &record).is_snapshot() {
            self.inner().registry.get(&record.query.kind)?;
        }
        Ok(record)
    }
}
