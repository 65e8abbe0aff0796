//! The snapshot writer's column profile, computed beside it: the writer hands each batch of rows it
//! stored to a task of its own that profiles them ([`crate::profile`]), through a bounded queue, so
//! on a multi-threaded runtime profiling overlaps the query and the spooling instead of adding to
//! them (docs/PERFORMANCE.md). A task, not a blocking thread: a batch takes well under a
//! millisecond, and a blocking thread alive for the whole write would keep a paused test clock
//! from advancing.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use dual_core::column::infer_columns;
use dual_core::profile::Profile;
use dual_core::{Column, Row};
use tokio::sync::mpsc;

use crate::batch::JsonRows;
use crate::profile::Profiler;
use crate::progress::Progress;

/// How often, at most, the writer publishes the profile of the rows so far.
const PROFILE_EVERY: Duration = Duration::from_millis(250);

/// Batches queued for the profiling task, at most: past them the writer waits (memory stays
/// bounded by a few batches).
const QUEUED_BATCHES: usize = 8;

/// A batch of stored rows for the profiling task.
#[derive(Debug)]
pub(crate) enum Batch {
    /// Rows as the spool stores them.
    Json(JsonRows),
    /// Rows the executor yielded decoded (profiled without parsing).
    Decoded(Vec<Row>),
}

impl Batch {
    fn is_empty(&self) -> bool {
        match self {
            Self::Json(rows) => rows.is_empty(),
            Self::Decoded(rows) => rows.is_empty(),
        }
    }
}

/// What the writer and the profiling thread share.
#[derive(Debug, Default)]
struct Shared {
    profiler: Profiler,
    /// Profiling a row panicked: no profile for this snapshot.
    broken: bool,
}

/// The writer's side of its profile.
pub(crate) struct Profiling {
    shared: Arc<Mutex<Shared>>,
    queue: Option<mpsc::Sender<Batch>>,
    worker: Option<tokio::task::JoinHandle<()>>,
    /// When the profile so far was last published.
    published: Option<tokio::time::Instant>,
    /// Its JSON, stored with the manifest of the segments stored so far.
    annex: Option<Bytes>,
}

impl Profiling {
    /// Starts the profiling task.
    pub(crate) fn start() -> Self {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let (queue, mut batches) = mpsc::channel::<Batch>(QUEUED_BATCHES);
        let profiled = Arc::clone(&shared);
        let worker = tokio::spawn(async move {
            while let Some(rows) = batches.recv().await {
                {
                    // A std lock, held for one batch and never across an `.await`.
                    let mut shared = profiled.lock().unwrap_or_else(PoisonError::into_inner);
                    if !shared.broken {
                        profile_batch(&mut shared, &rows);
                    }
                }
                tokio::task::yield_now().await;
            }
        });
        Self {
            shared,
            queue: Some(queue),
            worker: Some(worker),
            published: None,
            annex: None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts `columns` first in the profile's column order (before any row is profiled).
    pub(crate) fn declare(&self, columns: &[Column]) {
        self.lock().profiler.declare(columns);
    }

    /// Queues a batch of stored rows for profiling, waiting while the queue is full.
    pub(crate) async fn send(&mut self, rows: Batch) {
        if rows.is_empty() {
            return;
        }
        let sent = match &self.queue {
            Some(queue) => queue.send(rows).await.is_ok(),
            None => false,
        };
        if !sent && self.queue.take().is_some() {
            tracing::error!("the profiling task is gone: the snapshot goes on without a profile");
            self.lock().broken = true;
        }
    }

    /// The profile of the rows profiled so far, when [`PROFILE_EVERY`] has passed since the last one
    /// (`progress` gives the declared columns, or the sample they are inferred from, with `kept`).
    pub(crate) fn so_far(&mut self, progress: &Progress, kept: &[Row]) -> Option<Arc<Profile>> {
        let now = tokio::time::Instant::now();
        if self.published.is_some_and(|at| now - at < PROFILE_EVERY) {
            return None;
        }
        let columns = match &progress.columns {
            Some(columns) => columns.clone(),
            None => {
                let sample: Vec<Row> = progress.sample.iter().chain(kept).cloned().collect();
                infer_columns(&sample)
            }
        };
        let profile = {
            let shared = self.lock();
            if shared.broken || shared.profiler.rows() == 0 {
                return None;
            }
            finish(&shared.profiler, &columns, false)?
        };
        self.published = Some(now);
        self.annex = serde_json::to_vec(&profile).ok().map(Bytes::from);
        Some(Arc::new(profile))
    }

    /// The JSON of the profile last published, for the manifest of the segments stored so far.
    pub(crate) fn annex(&self) -> Option<Bytes> {
        self.annex.clone()
    }

    /// The profile of every row, once the profiling task has taken the last batch; `None` when
    /// profiling failed.
    pub(crate) async fn finish(mut self, columns: &[Column]) -> Option<Arc<Profile>> {
        drop(self.queue.take());
        if let Some(worker) = self.worker.take()
            && worker.await.is_err()
        {
            tracing::error!("the profiling task failed: the snapshot is stored without a profile");
            return None;
        }
        let shared = self.lock();
        if shared.broken {
            return None;
        }
        finish(&shared.profiler, columns, true).map(Arc::new)
    }
}

/// Profiles `rows`. The profile never costs the result: should profiling a row ever panic (a bug),
/// the profile is dropped and logged, and the snapshot goes on without one.
fn profile_batch(shared: &mut Shared, rows: &Batch) {
    let profiler = &mut shared.profiler;
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match rows {
        Batch::Json(rows) => {
            for row in rows.iter() {
                profiler.add_row(&row);
            }
        }
        Batch::Decoded(rows) => {
            for row in rows {
                profiler.add_decoded(row);
            }
        }
    }));
    if done.is_err() {
        tracing::error!(
            rows = shared.profiler.rows(),
            "the column profile failed: the snapshot goes on without one"
        );
        shared.broken = true;
        shared.profiler = Profiler::default();
    }
}

/// The profile of `profiler`'s rows, or `None` (logged) should computing it panic.
fn finish(profiler: &Profiler, columns: &[Column], complete: bool) -> Option<Profile> {
    let profile = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        profiler.profile(columns, complete)
    }));
    if profile.is_err() {
        tracing::error!("the column profile failed: the snapshot is stored without one");
    }
    profile.ok()
}
