//! The conformance suite fails stores that break the contract, naming the case: each store here is a
//! `MemoryStore` with one deliberate bug.

use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use dual_core::task::{TaskId, TaskRecord};
use dual_core::{ResourceId, ResourceRecord};
use dual_store::{Access, ListPage, Lookup, MemoryStore, ResourceStore, StoreError, Viewer};

use time::OffsetDateTime;

/// The bug a [`Buggy`] store has.
#[derive(Debug, Clone, Copy)]
enum Bug {
    /// Serves a record at exactly `expires_at`.
    ServesAtExpiry,
    /// Counts accesses by reading and writing back, losing concurrent updates.
    LosesAccesses,
    /// Lists expired records latest first.
    FindsLatestFirst,
    /// Purges pinned records too.
    PurgesPinned,
    /// Truncates timestamps to milliseconds, as a store keeping milliseconds would.
    KeepsMilliseconds,
    /// Returns sample rows with their keys sorted, as PostgreSQL `jsonb` would.
    SortsJsonKeys,
    /// Still counts a record as live at exactly its `expires_at`.
    CountsAtExpiry,
    /// Counts every stored record, expired ones not yet purged included.
    CountsExpired,
    /// Counts an access by whoever asks, as a store that checks the viewer after the count would.
    CountsStrangers,
    /// Lists a prefix owner's records too, as a `LIKE 'owner%'` would.
    ListsByPrefix,
    /// Renews a task by saving it whole, losing a concurrent cancellation.
    RenewalLosesCancel,
}

#[derive(Clone)]
struct Buggy {
    inner: MemoryStore,
    bug: Bug,
    /// Every id ever saved, for the purge that forgets pinned records.
    saved: Arc<Mutex<Vec<ResourceId>>>,
}

impl Buggy {
    fn new(bug: Bug) -> Self {
        Self {
            inner: MemoryStore::new(),
            bug,
            saved: Arc::default(),
        }
    }

    fn saved_ids(&self) -> Vec<ResourceId> {
        self.saved.lock().map(|ids| ids.clone()).unwrap_or_default()
    }
}

impl fmt::Debug for Buggy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Buggy({:?})", self.bug)
    }
}

fn millis(at: OffsetDateTime) -> OffsetDateTime {
    at - time::Duration::nanoseconds(i64::from(at.nanosecond() % 1_000_000))
}

#[async_trait]
impl ResourceStore for Buggy {
    async fn save(&self, record: &ResourceRecord) -> Result<(), StoreError> {
        if let Ok(mut ids) = self.saved.lock() {
            ids.push(record.id);
        }
        let mut record = record.clone();
        match self.bug {
            Bug::KeepsMilliseconds => {
                record.created_at = millis(record.created_at);
                record.expires_at = record.expires_at.map(millis);
                record.last_accessed_at = record.last_accessed_at.map(millis);
            }
            Bug::SortsJsonKeys => {
                let mut sample = record.sample.to_vec();
                for row in &mut sample {
                    row.sort_keys();
                }
                record.sample = sample.into();
            }
            _ => {}
        }
        self.inner.save(&record).await
    }

    async fn get(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        match self.bug {
            Bug::ServesAtExpiry => self.inner.get(id, now - time::Duration::nanoseconds(1)).await,
            _ => self.inner.get(id, now).await,
        }
    }

    async fn record_access(
        &self,
        id: ResourceId,
        viewer: Viewer<'_>,
        now: OffsetDateTime,
    ) -> Result<Access, StoreError> {
        match self.bug {
            Bug::LosesAccesses => {}
            Bug::CountsStrangers => {
                return match self.inner.record_access(id, Viewer::Grant(id), now).await? {
                    Access::Counted(record) if !viewer.sees(&record) => Ok(Access::NotVisible),
                    other => Ok(other),
                };
            }
            _ => return self.inner.record_access(id, viewer, now).await,
        }
        let mut record = match self.inner.get(id, now).await? {
            Lookup::Found(record) => record,
            Lookup::Expired => return Ok(Access::Expired),
            Lookup::Missing => return Ok(Access::Missing),
        };
        if !viewer.sees(&record) {
            return Ok(Access::NotVisible);
        }
        tokio::task::yield_now().await;
        record.access_count += 1;
        record.last_accessed_at = Some(now);
        self.inner.save(&record).await?;
        Ok(Access::Counted(Arc::new(record)))
    }

    async fn pin(&self, id: ResourceId, now: OffsetDateTime) -> Result<Lookup, StoreError> {
        self.inner.pin(id, now).await
    }

    async fn update_query(&self, record: &ResourceRecord) -> Result<bool, StoreError> {
        self.inner.update_query(record).await
    }

    async fn delete(&self, id: ResourceId) -> Result<bool, StoreError> {
        self.inner.delete(id).await
    }

    async fn find_expired(&self, now: OffsetDateTime, limit: usize) -> Result<Vec<ResourceId>, StoreError> {
        if !matches!(self.bug, Bug::FindsLatestFirst) {
            return self.inner.find_expired(now, limit).await;
        }
        let mut all = self.inner.find_expired(now, usize::MAX).await?;
        all.reverse();
        all.truncate(limit);
        Ok(all)
    }

    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        let purged = self.inner.purge_expired(now).await?;
        if !matches!(self.bug, Bug::PurgesPinned) {
            return Ok(purged);
        }
        // A store that treats "no expiry" as "expired long ago".
        let mut extra = 0;
        for id in self.saved_ids() {
            if let Lookup::Found(record) = self.inner.get(id, now).await?
                && record.is_pinned()
            {
                extra += u64::from(self.inner.delete(id).await?);
            }
        }
        Ok(purged + extra)
    }

    async fn live_count(&self, now: OffsetDateTime) -> Result<u64, StoreError> {
        match self.bug {
            Bug::CountsAtExpiry => self.inner.live_count(now - time::Duration::nanoseconds(1)).await,
            // No record the suite saves expires before the epoch.
            Bug::CountsExpired => self.inner.live_count(OffsetDateTime::UNIX_EPOCH).await,
            _ => self.inner.live_count(now).await,
        }
    }

    async fn list(&self, page: ListPage<'_>, now: OffsetDateTime) -> Result<Vec<ResourceRecord>, StoreError> {
        let mut listed = self.inner.list(page, now).await?;
        if matches!(self.bug, Bug::ListsByPrefix)
            && let Some(owner) = page.owner
        {
            let longer = format!("{owner}2");
            let theirs = ListPage::new(Some(&longer), page.limit).below(page.before);
            listed.extend(self.inner.list(theirs, now).await?);
            listed.sort_by_key(|record| std::cmp::Reverse(record.id));
            listed.truncate(page.limit);
        }
        Ok(listed)
    }

    async fn save_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        self.inner.save_task(task).await
    }

    async fn get_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        self.inner.get_task(id, now).await
    }

    async fn update_task(&self, task: &TaskRecord, now: OffsetDateTime) -> Result<Option<bool>, StoreError> {
        if !matches!(self.bug, Bug::RenewalLosesCancel) {
            return self.inner.update_task(task, now).await;
        }
        let Some(stored) = self.inner.get_task(task.id, now).await? else {
            return Ok(None);
        };
        let mut whole = task.clone();
        whole.owner = stored.owner;
        whole.created_at = stored.created_at;
        whole.expires_at = stored.expires_at;
        self.inner.save_task(&whole).await?;
        Ok(Some(whole.cancel_requested))
    }

    async fn cancel_task(&self, id: TaskId, now: OffsetDateTime) -> Result<Option<TaskRecord>, StoreError> {
        self.inner.cancel_task(id, now).await
    }

    async fn save_session(&self, id: &str, state: &str, expires: OffsetDateTime) -> Result<(), StoreError> {
        self.inner.save_session(id, state, expires).await
    }

    async fn load_session(&self, id: &str, now: OffsetDateTime) -> Result<Option<String>, StoreError> {
        self.inner.load_session(id, now).await
    }

    async fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.delete_session(id).await
    }

    async fn close(&self) -> Result<(), StoreError> {
        self.inner.close().await
    }
}

async fn run_with(bug: Bug) {
    dual_testkit::store::run(move || async move { Buggy::new(bug) }).await;
}

/// Tests that the suite, or one case of it, panics with `expected` on a store with `bug`.
macro_rules! bug_fails {
    ($($test:ident: $bug:ident fails $run:expr, expected $expected:literal;)+) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        #[should_panic(expected = $expected)]
        async fn $test() {
            $run(Bug::$bug).await;
        }
    )+};
}

async fn purge_expired_exact(bug: Bug) {
    dual_testkit::store::purge_expired_exact(&Buggy::new(bug)).await;
}

async fn live_count(bug: Bug) {
    dual_testkit::store::live_count_counts_live_records(&Buggy::new(bug)).await;
}

bug_fails! {
    serving_at_expires_at_fails_expiry_boundary: ServesAtExpiry fails run_with,
        expected "case `expiry_boundary` failed";
    lost_access_counts_fail_concurrent_record_access: LosesAccesses fails run_with,
        expected "case `concurrent_record_access` failed";
    latest_first_fails_find_expired: FindsLatestFirst fails run_with,
        expected "case `find_expired_order_and_limit` failed";
    millisecond_timestamps_fail_round_trip: KeepsMilliseconds fails run_with,
        expected "case `round_trip_every_field` failed";
    sorted_json_keys_fail_round_trip: SortsJsonKeys fails run_with,
        expected "JSON object keys must keep their order";
    purging_pinned_records_fails_purge_expired_exact: PurgesPinned fails purge_expired_exact,
        expected "4 expired + 1 at the boundary";
    counting_at_expires_at_fails_live_count: CountsAtExpiry fails run_with,
        expected "case `live_count_counts_live_records` failed";
    counting_unpurged_records_fails_live_count: CountsExpired fails live_count,
        expected "a record stops counting at exactly its expires_at";
    counting_strangers_fails_record_access_checks_the_viewer: CountsStrangers fails run_with,
        expected "case `record_access_checks_the_viewer` failed";
    listing_by_prefix_fails_list_pages: ListsByPrefix fails run_with,
        expected "case `list_pages_one_owners_live_records` failed";
    losing_a_cancellation_fails_the_task_case: RenewalLosesCancel fails run_with,
        expected "case `tasks_round_trip_renew_and_cancel` failed";
}
