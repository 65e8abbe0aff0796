//! Reading a snapshot while it is written: the segments a writer has stored are readable through its
//! `stored()` manifest before `finish`, and nothing beyond them is.

use dual_core::ResourceId;
use dual_spool::{MemorySpool, SegmentLimits, Spool, SpoolError, SpoolWriter};

fn row(i: u64) -> Vec<u8> {
    format!("{{\"n\":{i}}}").into_bytes()
}

fn spool() -> Result<Spool, SpoolError> {
    Ok(
        Spool::new(MemorySpool::new()?).with_segment_limits(SegmentLimits {
            bytes: 1 << 20,
            rows: 4,
        }),
    )
}

/// A snapshot of `rows` rows being written on `spool` (segments of 4 rows), not finished: its id and
/// writer.
async fn unfinished(spool: &Spool, rows: u64) -> Result<(ResourceId, SpoolWriter), SpoolError> {
    let id = ResourceId::new();
    let mut writer = spool.writer(id).await?;
    for i in 0..rows {
        writer.append(&row(i)).await?;
    }
    Ok((id, writer))
}

#[tokio::test]
async fn stored_segments_are_readable_before_finish() -> Result<(), SpoolError> {
    let spool = spool()?;
    let (id, writer) = unfinished(&spool, 10).await?;
    // 10 rows in segments of 4: two segments stored, two rows still being built.
    let stored = writer.stored().clone();
    assert_eq!((stored.rows(), stored.segments().len()), (8, 2));
    assert!(
        spool.manifest(id).await.is_err(),
        "the snapshot is not finished: no manifest yet"
    );

    let rows = spool.read_rows_in(&stored, 3, 100).await?;
    let got: Vec<Vec<u8>> = rows.iter().map(|b| b.to_vec()).collect();
    assert_eq!(
        got,
        (3..8).map(row).collect::<Vec<_>>(),
        "rows 3..8, none beyond the stored ones"
    );

    let mut cursor = spool.cursor_in(stored, 6, None);
    let mut seen = Vec::new();
    while let Some(run) = cursor.next().await? {
        seen.extend(run.iter().map(|b| b.to_vec()));
    }
    assert_eq!(seen, vec![row(6), row(7)], "a cursor ends at the stored rows");

    let manifest = writer.finish().await?;
    assert_eq!(manifest.rows(), 10);
    let rows = spool.read_rows(id, 8, 10).await?;
    assert_eq!(rows.len(), 2, "the rest is readable once finished");
    Ok(())
}

#[tokio::test]
async fn a_deleted_snapshot_is_not_found_through_a_stored_manifest() -> Result<(), SpoolError> {
    let spool = spool()?;
    let (id, writer) = unfinished(&spool, 5).await?;
    let stored = writer.stored().clone();
    spool.delete(id).await?;
    let read = spool.read_rows_in(&stored, 0, 4).await;
    assert!(
        matches!(read, Err(SpoolError::NotFound(_))),
        "a deleted snapshot's segments are gone: {read:?}"
    );
    drop(writer);
    Ok(())
}
