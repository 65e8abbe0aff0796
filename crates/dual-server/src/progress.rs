//! What a running snapshot query has produced so far.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use dual_core::Row;

/// What a running snapshot query has produced so far, shared between its writer and the server.
#[derive(Debug)]
pub(crate) struct QueryProgress {
    rows: AtomicU64,
    sample: Mutex<Vec<Row>>,
    sample_size: usize,
}

impl QueryProgress {
    pub(crate) fn new(sample_size: usize) -> Self {
        Self {
            rows: AtomicU64::new(0),
            sample: Mutex::new(Vec::new()),
            sample_size,
        }
    }

    /// Rows written so far.
    pub(crate) fn rows(&self) -> u64 {
        self.rows.load(Ordering::Relaxed)
    }

    /// Counts one written row, keeping it when the sample is not yet full.
    pub(crate) fn push(&self, row: &Row) {
        if (self.rows.fetch_add(1, Ordering::Relaxed) as usize) < self.sample_size {
            self.lock().push(row.clone());
        }
    }

    /// The sample so far.
    pub(crate) fn sample(&self) -> Vec<Row> {
        self.lock().clone()
    }

    /// Takes the sample (at the end of the query).
    pub(crate) fn take_sample(&self) -> Vec<Row> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Row>> {
        self.sample.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
