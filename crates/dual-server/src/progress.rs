//! What a run has produced so far: the state its snapshot writer publishes on a watch channel, for
//! `create_response` (to answer as soon as it can) and for the readers on this instance (to serve
//! the rows already spooled).

use std::sync::Arc;

use dual_core::{
    Column, Row,
    profile::Profile,
    status::{FailureCode, QueryFailure},
};
use dual_spool::Manifest;

use crate::ServerError;

/// The state of one run, as its writer last published it.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// The query runs: it holds its connection (waiting for one is not running).
    pub(crate) started: bool,
    /// The executor's consistent count (`QueryStart::started_with_count`), when it gave one.
    pub(crate) total: Option<u64>,
    /// The columns the executor declared (`QueryStart::declare_columns`), when it did.
    pub(crate) columns: Option<Vec<Column>>,
    /// Rows read from the executor so far.
    pub(crate) rows: u64,
    /// The first rows, up to the sample size.
    pub(crate) sample: Vec<Row>,
    /// The segments stored so far: the rows readable before the snapshot is finished (with the
    /// profile so far as their manifest's annex, when profiles are on).
    pub(crate) stored: Option<Arc<Manifest>>,
    /// The column profile of the rows so far (complete once the writer finished), when profiles
    /// are on.
    pub(crate) profile: Option<Arc<Profile>>,
    /// How the writer ended, once it did.
    pub(crate) end: Option<End>,
    /// The run's outcome is in the store (set by the task that drives a handed-over run).
    pub(crate) settled: bool,
}

impl Progress {
    /// Rows readable now: every row once finished, else those of the stored segments.
    pub(crate) fn spooled(&self) -> u64 {
        match &self.end {
            Some(End::Finished { rows }) => *rows,
            _ => self.stored.as_deref().map_or(0, Manifest::rows),
        }
    }
}

/// How a run's writer ended.
#[derive(Debug, Clone)]
pub(crate) enum End {
    /// Every row is spooled and the snapshot finished (its manifest stored).
    Finished {
        /// Rows written: the resource's total.
        rows: u64,
    },
    /// The rows passed the snapshot cap: nothing stays spooled, and the resource is served live.
    OverCap,
    /// The query, the spool or a quota failed; nothing stays spooled.
    Failed(QueryFailure),
}

/// The failure a writer's error becomes.
pub(crate) fn failure_of(error: &ServerError) -> QueryFailure {
    let code = match error {
        ServerError::QueryTimeout { .. } => FailureCode::QueryTimeout,
        ServerError::Spool(_) | ServerError::Storage(_) | ServerError::QuotaExceeded { .. } => {
            FailureCode::StorageError
        }
        ServerError::Overloaded(_) => FailureCode::Overloaded,
        _ => FailureCode::QueryExecutionFailed,
    };
    QueryFailure::new(code, dual_core::error::Report::new(error).to_string())
}
