//! Cases run from many tokio tasks at once. They take an `Arc` because the tasks are spawned.

use std::collections::HashSet;
use std::sync::Arc;

use dual_core::ResourceRecord;
use time::Duration;
use tokio::task::JoinHandle;

use super::support::{OrPanic, base_now, counted, expect_get, get_found, record, saved_record};
use dual_store::{Lookup, ResourceStore, Viewer};

/// How many tasks the concurrent cases spawn.
pub const TASKS: usize = 64;
/// How many accesses each task of [`concurrent_record_access`] records.
pub const ACCESSES_PER_TASK: usize = 25;
/// How many records each task of [`concurrent_saves`] saves.
pub const SAVES_PER_TASK: usize = 16;

/// Spawns `tasks` tokio tasks, task `t` running `work(t, store)`.
fn spawn_each<T, F>(
    store: &Arc<dyn ResourceStore>,
    tasks: usize,
    work: impl Fn(usize, Arc<dyn ResourceStore>) -> F,
) -> Vec<JoinHandle<T>>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    (0..tasks)
        .map(|t| tokio::spawn(work(t, Arc::clone(store))))
        .collect()
}

/// What each of `tasks` returned; `what` names them if one failed.
async fn join_each<T>(tasks: Vec<JoinHandle<T>>, what: &str) -> Vec<T> {
    let mut results = Vec::with_capacity(tasks.len());
    for task in tasks {
        results.push(task.await.unwrap_or_else(|e| panic!("{what} task failed: {e}")));
    }
    results
}

/// [`TASKS`] tasks × [`ACCESSES_PER_TASK`] `record_access` calls on one resource lose no count: the final
/// `access_count` is exact and the counts the calls returned are exactly `1..=total`, each once.
pub async fn concurrent_record_access(store: Arc<dyn ResourceStore>) {
    let now = base_now();
    let saved = saved_record(&*store, "hot", now, Some(now + Duration::minutes(15))).await;
    let when = now + Duration::seconds(1);
    let tasks = spawn_each(&store, TASKS, |_, store| async move {
        let mut seen = Vec::with_capacity(ACCESSES_PER_TASK);
        for _ in 0..ACCESSES_PER_TASK {
            let access = store
                .record_access(saved.id, Viewer::Anonymous, when)
                .await
                .or_panic("record_access");
            seen.push(counted(access, "concurrent record_access").access_count);
        }
        seen
    });
    let mut counts = Vec::with_capacity(TASKS * ACCESSES_PER_TASK);
    for seen in join_each(tasks, "record_access").await {
        assert!(
            seen.windows(2).all(|w| w[0] < w[1]),
            "one task's counts must increase: {seen:?}"
        );
        counts.extend(seen);
    }
    let total = (TASKS * ACCESSES_PER_TASK) as u64;
    counts.sort_unstable();
    assert!(
        counts.iter().copied().eq(1..=total),
        "the counts returned by {total} concurrent record_access calls must be 1..={total}, each once"
    );
    let after = get_found(&*store, saved.id, when, "hot record").await;
    assert_eq!(
        after.access_count, total,
        "final access_count after concurrent record_access"
    );
    assert_eq!(
        after.last_accessed_at,
        Some(when),
        "last_accessed_at after concurrent record_access"
    );
}

/// [`TASKS`] tasks each saving [`SAVES_PER_TASK`] distinct records: every record is readable afterwards,
/// unchanged, `live_count` counts every one of them, and the expiry index holds every one of them.
pub async fn concurrent_saves(store: Arc<dyn ResourceStore>) {
    let now = base_now();
    let tasks = spawn_each(&store, TASKS, |t, store| async move {
        let mut saved = Vec::with_capacity(SAVES_PER_TASK);
        for i in 0..SAVES_PER_TASK {
            let expires_at = now + Duration::minutes(5) + Duration::microseconds((t * 100 + i) as i64);
            let r = record(&format!("task {t} record {i}"), now, Some(expires_at));
            store.save(&r).await.or_panic("concurrent save");
            saved.push(r);
        }
        saved
    });
    let all: Vec<ResourceRecord> = join_each(tasks, "save").await.concat();
    for r in &all {
        let got = get_found(&*store, r.id, now, "a concurrently saved record").await;
        assert_eq!(&got, r, "a concurrently saved record reads back unchanged");
    }
    assert_eq!(
        store.live_count(now).await.or_panic("live_count"),
        all.len() as u64,
        "live_count after concurrent saves"
    );
    let later = now + Duration::minutes(10);
    assert_eq!(
        store.live_count(later).await.or_panic("live_count"),
        0,
        "live_count once every concurrently saved record has expired"
    );
    let expired = store
        .find_expired(later, all.len() * 2)
        .await
        .or_panic("find_expired");
    let want: HashSet<_> = all.iter().map(|r| r.id).collect();
    assert_eq!(
        expired.len(),
        all.len(),
        "every concurrently saved record is in the expiry index"
    );
    assert_eq!(
        expired.into_iter().collect::<HashSet<_>>(),
        want,
        "the expiry index after concurrent saves"
    );
}

/// Several purges racing each other delete every expired record once: their counts add up to exactly
/// the number expired, and `live_count` afterwards counts only the live record. Accesses to a live
/// record racing the purges all count.
pub async fn concurrent_purges(store: Arc<dyn ResourceStore>) {
    const EXPIRED: usize = 600;
    const PURGERS: usize = 4;
    const READERS: usize = 8;
    const READS: usize = 25;
    let now = base_now();
    let mut expired = Vec::with_capacity(EXPIRED);
    for i in 0..EXPIRED {
        let r = saved_record(
            &*store,
            "expired",
            now,
            Some(now + Duration::minutes(1) + Duration::microseconds(i as i64)),
        )
        .await;
        expired.push(r.id);
    }
    let live = saved_record(&*store, "live", now, Some(now + Duration::minutes(30))).await;
    let at = now + Duration::minutes(10);
    let purgers = spawn_each(&store, PURGERS, |_, store| async move {
        store.purge_expired(at).await.or_panic("concurrent purge_expired")
    });
    let readers = spawn_each(&store, READERS, |_, store| async move {
        for _ in 0..READS {
            let access = store
                .record_access(live.id, Viewer::Anonymous, at)
                .await
                .or_panic("record_access");
            counted(access, "record_access of a live record during purges");
        }
    });
    let purged: u64 = join_each(purgers, "purge").await.into_iter().sum();
    join_each(readers, "reader").await;
    assert_eq!(
        purged, EXPIRED as u64,
        "concurrent purges must count each purged record exactly once"
    );
    for id in expired {
        expect_get(&*store, id, now, &Lookup::Missing, "purged record").await;
    }
    for when in [now, at] {
        assert_eq!(
            store.live_count(when).await.or_panic("live_count"),
            1,
            "live_count after concurrent purges"
        );
    }
    let after = get_found(&*store, live.id, at, "live record after purges").await;
    assert_eq!(
        after.access_count,
        (READERS * READS) as u64,
        "accesses counted during purges"
    );
}
