//! The conformance suite on the memory spool: all in memory, all spilled, and a budget in between;
//! then the outage checks and what only the memory spool promises (the budget, its directory).

use std::time::Duration;

use dual_core::ResourceId;
use dual_spool::{MemorySpool, SegmentLimits, Spool, SpoolBackend, SpoolError};
use dual_testkit::BreakableSpool;
use dual_testkit::spool::outage::Bounds;

async fn memory(budget: u64) -> MemorySpool {
    MemorySpool::builder()
        .memory_budget(budget)
        .build()
        .await
        .expect("memory spool")
}

const BOUNDS: Bounds = Bounds {
    fail_within: Duration::from_secs(2),
    recover_within: Duration::from_secs(5),
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_passes_the_conformance_suite() {
    dual_testkit::spool::run(|| async { Spool::new(memory(256 << 20).await) }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_spilled_passes_the_conformance_suite() {
    dual_testkit::spool::run(|| async { Spool::new(memory(0).await) }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partly_spilled_passes_the_conformance_suite() {
    dual_testkit::spool::run(|| async { Spool::new(memory(2048).await) }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switched_off_backend_fails_retryably_and_recovers() {
    let backend = BreakableSpool::new(memory(1024).await);
    dual_testkit::spool::outage::switched_off(&backend, BOUNDS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_spill_directory_is_a_storage_error_until_it_is_back() {
    let backend = memory(0).await;
    let dir = backend.dir().to_owned();
    let spool = Spool::new(backend).with_segment_limits(SegmentLimits { bytes: 64, rows: 2 });
    let id = ResourceId::new();
    let mut writer = spool.writer(id).await.expect("writer");
    writer.append(b"{}").await.expect("append");
    std::fs::remove_dir_all(&dir).expect("remove the spill directory");
    let failed = writer.finish().await.expect_err("no directory to spill to");
    assert!(failed.is_retryable(), "{failed:?}");
    std::fs::create_dir(&dir).expect("restore the spill directory");
    let id = ResourceId::new();
    let mut writer = spool.writer(id).await.expect("writer");
    writer.append(b"{}").await.expect("append");
    writer.finish().await.expect("finish after the restore");
    assert_eq!(spool.read_rows(id, 0, 5).await.expect("read").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stays_within_the_budget_and_the_rest_spills() {
    let budget = 10_000;
    let backend = memory(budget).await;
    let spool = Spool::new(backend.clone()).with_segment_limits(SegmentLimits {
        bytes: 1000,
        rows: 1000,
    });
    let row = vec![b'r'; 90];
    let mut ids = Vec::new();
    for _ in 0..5 {
        let id = ResourceId::new();
        let mut writer = spool.writer(id).await.expect("writer");
        for _ in 0..100 {
            writer.append(&row).await.expect("append");
        }
        writer.finish().await.expect("finish");
        let stats = backend.stats();
        assert!(stats.in_memory_bytes <= budget, "{stats:?}");
        ids.push(id);
    }
    let stats = backend.stats();
    assert!(
        stats.on_disk_bytes > 0 && stats.in_memory_bytes > budget / 2,
        "{stats:?}"
    );
    let files = count_files(backend.dir());
    assert!(files > 0, "spilled segments are files");
    for id in &ids {
        let rows = spool.read_rows(*id, 0, 1000).await.expect("read");
        assert!(rows.len() == 100 && rows.iter().all(|r| r == row), "{id}");
    }
    for id in &ids {
        spool.delete(*id).await.expect("delete");
    }
    assert_eq!(
        backend.stats(),
        dual_spool::MemoryStats::default(),
        "deletes free memory and disk"
    );
    assert_eq!(count_files(backend.dir()), 0);
}

#[cfg(unix)]
#[tokio::test]
async fn the_private_directory_is_owner_only_and_removed_on_close_and_drop() {
    use std::os::unix::fs::PermissionsExt;
    let closed = memory(0).await;
    let dir = closed.dir().to_owned();
    let mode = std::fs::metadata(&dir).expect("exists").permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    closed.close().await.expect("close");
    assert!(!dir.exists());
    let after = closed.get_manifest(ResourceId::new()).await;
    assert!(matches!(after, Err(SpoolError::Unavailable { .. })), "{after:?}");

    let dropped = memory(0).await;
    let dir = dropped.dir().to_owned();
    let spool = Spool::new(dropped);
    let mut writer = spool.writer(ResourceId::new()).await.expect("writer");
    writer.append(b"[1]").await.expect("append");
    writer.finish().await.expect("finish");
    assert!(count_files(&dir) > 0);
    drop(spool);
    assert!(!dir.exists(), "the last handle removes the directory");
}

#[tokio::test]
async fn a_given_directory_is_cleared_of_a_crashed_process_leftovers_only() {
    let base = std::env::temp_dir().join(format!("dual-spool-test-{}", ResourceId::new()));
    let leftover = base.join(ResourceId::new().to_string());
    std::fs::create_dir_all(&leftover).expect("leftover dir");
    std::fs::write(leftover.join("00000000.seg"), b"old").expect("leftover segment");
    std::fs::write(base.join("keep.txt"), b"not ours").expect("unrelated file");
    std::fs::create_dir(base.join("keep-dir")).expect("unrelated dir");

    let backend = MemorySpool::builder()
        .dir(&base)
        .memory_budget(0)
        .build()
        .await
        .expect("spool");
    assert!(!leftover.exists(), "leftovers are swept at start-up");
    assert!(base.join("keep.txt").exists() && base.join("keep-dir").exists());
    let spool = Spool::new(backend.clone());
    let mut writer = spool.writer(ResourceId::new()).await.expect("writer");
    writer.append(b"[1]").await.expect("append");
    writer.finish().await.expect("finish");
    backend.close().await.expect("close");
    assert!(base.join("keep.txt").exists(), "a given directory stays");
    assert!(base.join(dual_spool::LOCK_FILE).exists(), "its lock file stays");
    assert_eq!(count_files(&base), 1, "only the unrelated file is left");
    std::fs::remove_dir_all(&base).expect("clean up");
}

fn count_files(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|entry| entry.file_name() != dual_spool::LOCK_FILE)
        .map(|entry| {
            if entry.path().is_dir() {
                count_files(&entry.path())
            } else {
                1
            }
        })
        .sum()
}
