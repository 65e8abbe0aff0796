//! Snapshots come back byte for byte.

use dual_core::ResourceId;

use super::support::{LIMITS, expected, read, sample_rows, small, write};
use dual_spool::{Spool, SpoolError};

/// Rows of odd sizes and unicode come back exactly, in order, and the manifest adds up.
pub async fn round_trip_odd_rows(spool: Spool) {
    let spool = small(&spool);
    let id = ResourceId::new();
    let rows = sample_rows(100);
    let manifest = write(&spool, id, &rows).await;
    assert_eq!((manifest.id(), manifest.rows()), (id, 100));
    assert!(
        manifest.segments().len() >= 100 / LIMITS.rows as usize,
        "{manifest:?}"
    );
    let mut next = 0;
    for info in manifest.segments() {
        assert_eq!(info.first_row, next);
        assert!(info.rows >= 1 && info.rows <= LIMITS.rows);
        next += u64::from(info.rows);
    }
    assert_eq!(spool.manifest(id).await.expect("manifest"), manifest);
    assert_eq!(read(&spool, id, 0, 1000).await, rows);
}

/// A snapshot of no rows has no segments and reads as empty, not as missing.
pub async fn empty_snapshot(spool: Spool) {
    let id = ResourceId::new();
    let manifest = write(&spool, id, &[]).await;
    assert_eq!((manifest.rows(), manifest.segments().len()), (0, 0));
    assert!(read(&spool, id, 0, 10).await.is_empty());
    let mut cursor = spool.cursor(id, 0, None).await.expect("cursor");
    assert!(cursor.next().await.expect("next").is_none());
    assert_eq!(super::support::listed(&spool, id).await, Some(true));
}

/// A row larger than the segment size gets a segment of its own; empty rows are rows.
pub async fn large_rows_get_their_own_segment(spool: Spool) {
    let spool = small(&spool);
    let id = ResourceId::new();
    let big = vec![b'x'; LIMITS.bytes * 3];
    let rows = vec![b"{}".to_vec(), big.clone(), Vec::new(), big, b"[]".to_vec()];
    let manifest = write(&spool, id, &rows).await;
    let sizes: Vec<u32> = manifest.segments().iter().map(|s| s.rows).collect();
    // Each big row closes the segment before it and fills its own; the empty row after one cannot
    // join it.
    assert_eq!(sizes, [1, 1, 1, 1, 1], "{manifest:?}");
    assert_eq!(read(&spool, id, 0, 10).await, rows);
    assert_eq!(read(&spool, id, 2, 1).await, expected(&rows, 2, 1));
}

/// A finished snapshot cannot be written again.
pub async fn snapshots_are_immutable(spool: Spool) {
    let id = ResourceId::new();
    write(&spool, id, &sample_rows(3)).await;
    let again = spool.writer(id).await;
    assert!(
        matches!(again, Err(SpoolError::AlreadyExists(found)) if found == id),
        "{again:?}"
    );
    assert_eq!(read(&spool, id, 0, 10).await, sample_rows(3));
}
