//! The memory spool's caps (bytes in memory and on disk together, the free-space floor) and its
//! spill directory's lock: at a cap a snapshot is refused with an error naming it, what is stored
//! stays, and room comes back after a delete; a directory a live spool holds is refused.

use dual_core::ResourceId;
use dual_spool::{
    MemorySpool, MemorySpoolBuilder, SegmentLimits, Spool, SpoolBackend, SpoolError, SpoolQuota,
};

const ROW: [u8; 100] = [b'r'; 100];

fn spool_on(backend: &MemorySpool) -> Spool {
    Spool::new(backend.clone()).with_segment_limits(SegmentLimits {
        bytes: 1_000,
        rows: 1_000,
    })
}

/// The memory spool `builder` configures, and a [`Spool`] on it (see [`spool_on`]).
async fn spool_with(builder: MemorySpoolBuilder) -> (MemorySpool, Spool) {
    let backend = builder.build().await.expect("spool");
    let spool = spool_on(&backend);
    (backend, spool)
}

/// Writes `rows` rows of 100 bytes as the snapshot of a new resource.
async fn write(spool: &Spool, rows: usize) -> Result<ResourceId, SpoolError> {
    let id = ResourceId::new();
    let mut writer = spool.writer(id).await?;
    for _ in 0..rows {
        writer.append(&ROW).await?;
    }
    writer.finish().await?;
    Ok(id)
}

/// How many rows `spool` serves of `id`'s snapshot, which `what` says it must serve.
async fn rows_served(spool: &Spool, id: ResourceId, what: &str) -> usize {
    spool.read_rows(id, 0, usize::MAX).await.expect(what).len()
}

/// Waits for the abandoned writer's clean-up task to remove `id`'s segments.
async fn gone(spool: &Spool, id: ResourceId) -> bool {
    for _ in 0..200 {
        if spool.list().await.expect("list").iter().all(|s| s.id != id) {
            return true;
        }
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_byte_cap_a_snapshot_is_refused_naming_it_and_nothing_stored_is_lost() {
    // 2 KB in memory, 10 KB in all: the second snapshot of ~6 KB does not fit after the first.
    let (backend, spool) = spool_with(MemorySpool::builder().memory_budget(2_000).max_bytes(10_000)).await;
    let first = write(&spool, 60).await.expect("the first snapshot fits");
    let held = backend.stats();
    assert!(held.on_disk_bytes > 0, "it spilled: {held:?}");

    let refused = write(&spool, 60).await.expect_err("the second passes the cap");
    assert!(
        matches!(
            refused,
            SpoolError::QuotaExceeded {
                quota: SpoolQuota::Bytes,
                limit: 10_000,
                ..
            }
        ),
        "{refused:?}"
    );
    assert!(refused.is_retryable());
    assert!(refused.to_string().contains("spool_bytes"), "{refused}");
    let listed = spool.list().await.expect("list");
    let partial: Vec<_> = listed.iter().filter(|s| s.id != first).map(|s| s.id).collect();
    for id in partial {
        assert!(
            gone(&spool, id).await,
            "the refused snapshot's segments are removed"
        );
    }
    assert_eq!(backend.stats(), held, "what was stored is untouched");
    assert_eq!(rows_served(&spool, first, "still served").await, 60);
    let usage = spool.usage().expect("the memory spool keeps count");
    assert_eq!(
        (
            usage.memory_bytes + usage.disk_bytes,
            usage.max_bytes,
            usage.memory_budget
        ),
        (held.in_memory_bytes + held.on_disk_bytes, Some(10_000), 2_000)
    );

    spool.delete(first).await.expect("delete");
    let second = write(&spool, 60).await.expect("room again after a delete");
    assert_eq!(rows_served(&spool, second, "read").await, 60);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spill_that_would_pass_the_free_space_floor_is_refused_naming_it() {
    let (backend, spool) = spool_with(
        MemorySpool::builder()
            .memory_budget(1_000)
            .unlimited_bytes()
            .min_free_bytes(u64::MAX / 2),
    )
    .await;
    let in_memory = write(&spool, 5).await.expect("memory needs no disk");
    let refused = write(&spool, 30).await.expect_err("no disk has that much room");
    if cfg!(unix) {
        assert!(
            matches!(
                refused,
                SpoolError::QuotaExceeded {
                    quota: SpoolQuota::FreeSpace,
                    ..
                }
            ),
            "{refused:?}"
        );
    }
    assert_eq!(backend.stats().on_disk_bytes, 0, "nothing was spilled");
    assert_eq!(rows_served(&spool, in_memory, "still served").await, 5);

    let (roomy, on_roomy) = spool_with(MemorySpool::builder().memory_budget(0).min_free_bytes(1)).await;
    write(&on_roomy, 30).await.expect("a low floor lets it spill");
    let usage = roomy.usage().expect("usage");
    assert!(
        usage.disk_bytes > 0 && usage.disk_bytes == roomy.stats().on_disk_bytes,
        "{usage:?}"
    );
    assert_eq!((usage.memory_bytes, usage.min_free_bytes), (0, 1));
}

#[tokio::test]
async fn the_default_caps_are_sized_to_the_machine() {
    let backend = MemorySpool::builder()
        .memory_budget_mb(1)
        .build()
        .await
        .expect("spool");
    if cfg!(unix) {
        let max = backend.max_bytes().expect("a cap where free space is known");
        assert!(max >= 1 << 20, "at least the memory budget: {max}");
        assert!(
            backend.min_free_bytes() > 0 && backend.min_free_bytes() <= dual_spool::DEFAULT_MIN_FREE_BYTES
        );
    }
}

#[tokio::test]
async fn a_directory_a_live_spool_holds_is_refused_and_free_again_once_it_is_gone() {
    let base = std::env::temp_dir().join(format!("dual-spool-lock-test-{}", ResourceId::new()));
    let first = MemorySpool::builder().dir(&base).build().await.expect("first");
    let spool = spool_on(&first);
    let kept = write(&spool, 3).await.expect("write");

    let refused = MemorySpool::builder()
        .dir(&base)
        .build()
        .await
        .expect_err("a second spool on the same directory");
    // The message names the directory; the cause (its lock held) is the source.
    let message = dual_core::error::Report::new(&refused).to_string();
    assert!(matches!(refused, SpoolError::Config { .. }), "{refused:?}");
    assert!(
        message.contains(&base.display().to_string()) && message.contains("in use by another process"),
        "{message}"
    );
    assert!(
        !refused.to_string().contains("in use by another process"),
        "{refused}"
    );
    assert_eq!(
        rows_served(&spool, kept, "the first spool's snapshots stay").await,
        3
    );

    drop(spool);
    drop(first);
    let again = MemorySpool::builder()
        .dir(&base)
        .build()
        .await
        .expect("the lock is free again");
    drop(again);
    std::fs::remove_dir_all(&base).expect("clean up");
}

#[tokio::test]
async fn runs_say_whether_their_segment_stays_in_memory_and_join_their_rows_with_commas() {
    let (backend, spool) = spool_with(MemorySpool::builder().memory_budget(1_000)).await;
    // Segments of 9 rows (960 bytes): the first stays in memory, the rest spill to disk.
    let id = write(&spool, 20).await.expect("written");
    let rows = spool.read_rows(id, 0, 20).await.expect("read");
    let resident: Vec<bool> = rows.runs().iter().map(dual_spool::RowRun::resident).collect();
    assert_eq!(resident, [true, false, false]);
    assert!(backend.stats().on_disk_bytes > 0);
    for run in rows.runs() {
        let joined = run.joined();
        assert_eq!(joined.len(), run.byte_len());
        assert_eq!(joined, vec![&ROW[..]; run.len()].join(&b","[..]));
        assert_eq!(run.head(2).joined(), [&ROW[..], b",", &ROW[..]].concat());
        assert_eq!(run.head(2).len(), 2);
        assert_eq!(run.head(usize::MAX).len(), run.len());
        assert!(run.head(0).joined().is_empty());
    }
}
