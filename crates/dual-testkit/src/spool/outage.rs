//! Outage checks: the test cuts the spool's storage (a [`BreakableSpool`]
//! switch, or a fault-injection proxy in front of a server) and restores it. While cut, every call
//! fails with a retryable [`SpoolError::Unavailable`] (REST: 503 `storage_error`) within a bound and
//! nothing panics or hangs; after the restore the same spool works again by itself.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use dual_core::{ResourceId, error::ErrorCode};

use super::support::{expected, read, sample_rows, small, write};
use dual_spool::{Spool, SpoolBackend, SpoolError};

use crate::BreakableSpool;

/// How long the checks allow.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Longest time one failing call may take (the backend's timeouts and retries plus slack).
    pub fail_within: Duration,
    /// Longest time the spool may take to serve again after the restore.
    pub recover_within: Duration,
}

type Call<'a> = Pin<Box<dyn Future<Output = Result<(), SpoolError>> + Send + 'a>>;

/// [`outage_and_recovery`] of a spool on `backend`, cut by switching the backend off and restored by
/// switching it on: the outage check of a backend that has no network to cut.
pub async fn switched_off<B: SpoolBackend + Clone>(backend: &BreakableSpool<B>, bounds: Bounds) {
    let spool = Spool::new(backend.clone());
    outage_and_recovery(&spool, || backend.break_storage(), || backend.restore(), bounds).await;
}

/// Writes a snapshot, calls `cut`, checks that every kind of call fails as a retryable
/// `Unavailable` within `bounds.fail_within`, calls `restore`, and checks that the snapshot is
/// served again (and writers work) within `bounds.recover_within`.
pub async fn outage_and_recovery(spool: &Spool, cut: impl FnOnce(), restore: impl FnOnce(), bounds: Bounds) {
    let spool = small(spool);
    let id = ResourceId::new();
    let rows = sample_rows(30);
    write(&spool, id, &rows).await;
    let mut cursor = spool.cursor(id, 0, None).await.expect("cursor before the outage");
    let mut writer = spool
        .writer(ResourceId::new())
        .await
        .expect("writer before the outage");

    cut();
    let big = vec![b'x'; super::LIMITS.bytes];
    let calls: [(&str, Call<'_>); 8] = [
        (
            "writer",
            Box::pin(async { spool.writer(ResourceId::new()).await.map(drop) }),
        ),
        (
            "append+finish",
            Box::pin(async move {
                writer.append(&big).await?;
                writer.append(&big).await?;
                writer.finish().await.map(drop)
            }),
        ),
        ("manifest", Box::pin(async { spool.manifest(id).await.map(drop) })),
        (
            "read_rows",
            Box::pin(async { spool.read_rows(id, 3, 20).await.map(drop) }),
        ),
        (
            "cursor.next",
            Box::pin(async move { cursor.next().await.map(drop) }),
        ),
        ("delete", Box::pin(async { spool.delete(id).await })),
        ("list", Box::pin(async { spool.list().await.map(drop) })),
        (
            "sweep_orphans",
            Box::pin(async { spool.sweep_orphans(|_| false).await.map(drop) }),
        ),
    ];
    for (name, call) in calls {
        let started = Instant::now();
        let result = call.await;
        let took = started.elapsed();
        match &result {
            Err(e @ SpoolError::Unavailable { .. }) => {
                assert!(
                    e.is_retryable() && e.code() == ErrorCode::StorageError,
                    "{name}: {e}"
                );
            }
            other => panic!("{name} during the outage: {other:?}"),
        }
        assert!(took < bounds.fail_within, "{name} took {took:?} to fail");
    }

    restore();
    let started = Instant::now();
    loop {
        match spool.read_rows(id, 0, 100).await {
            Ok(_) => break,
            Err(e) if e.is_retryable() && started.elapsed() < bounds.recover_within => {
                // A client's retry pause, not a wait for time to pass.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("no recovery within {:?}: {e}", bounds.recover_within),
        }
    }
    assert_eq!(
        read(&spool, id, 0, 100).await,
        rows,
        "the snapshot survived the outage"
    );
    assert_eq!(read(&spool, id, 5, 9).await, expected(&rows, 5, 9));
    let again = ResourceId::new();
    write(&spool, again, &rows).await;
    assert_eq!(read(&spool, again, 0, 100).await, rows);
    spool.delete(again).await.expect("delete after recovery");
    spool.delete(id).await.expect("delete after recovery");
}
