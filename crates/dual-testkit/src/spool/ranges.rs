//! Ranges at and around every segment boundary, and past the end.

use dual_core::ResourceId;

use super::support::{expected, read, sample_rows, small, write};
use dual_spool::Spool;

/// Reads every range that starts or ends at a segment boundary (and one row either side of it),
/// plus ranges past the end, and compares each with the model.
pub async fn ranges_at_every_boundary(spool: Spool) {
    let spool = small(&spool);
    let id = ResourceId::new();
    let rows = sample_rows(40);
    let manifest = write(&spool, id, &rows).await;
    let mut edges: Vec<u64> = manifest.segments().iter().map(|s| s.first_row).collect();
    edges.push(manifest.rows());
    let mut points: Vec<u64> = edges
        .iter()
        .flat_map(|e| [e.saturating_sub(1), *e, e + 1])
        .collect();
    points.extend([manifest.rows() + 5, u64::MAX - 1, u64::MAX]);
    points.sort_unstable();
    points.dedup();
    for &offset in &points {
        for &end in &points {
            let limit = usize::try_from(end.saturating_sub(offset)).unwrap_or(usize::MAX);
            let got = read(&spool, id, offset, limit).await;
            assert_eq!(
                got,
                expected(&rows, offset, limit),
                "offset {offset}, limit {limit}"
            );
        }
        assert!(
            read(&spool, id, offset, 0).await.is_empty(),
            "offset {offset}, limit 0"
        );
    }
}

/// A cursor returns the range one segment at a time, each run within one segment, in order.
pub async fn cursor_streams_every_range(spool: Spool) {
    let spool = small(&spool);
    let id = ResourceId::new();
    let rows = sample_rows(30);
    let manifest = write(&spool, id, &rows).await;
    let total = manifest.rows();
    for offset in [0, 1, 6, 7, 8, 29, 30, 31] {
        for limit in [None, Some(0), Some(1), Some(7), Some(13), Some(100)] {
            let mut cursor = spool.cursor(id, offset, limit).await.expect("cursor");
            let want = expected(&rows, offset, limit.map_or(usize::MAX, |l| l as usize));
            assert_eq!(cursor.remaining(), want.len() as u64);
            let mut got = Vec::new();
            let mut runs = 0;
            while let Some(run) = cursor.next().await.expect("next") {
                assert_eq!(run.first_row(), offset + got.len() as u64);
                assert!(!run.is_empty() && run.len() <= super::LIMITS.rows as usize);
                assert_eq!(
                    run.joined(),
                    run.iter().map(|r| r.to_vec()).collect::<Vec<_>>().join(&b","[..]),
                    "a run's rows, joined by commas, are one slice"
                );
                assert_eq!(run.joined().len(), run.byte_len());
                got.extend(run.iter().map(|r| r.to_vec()));
                runs += 1;
            }
            assert_eq!(got, want, "offset {offset}, limit {limit:?} of {total}");
            assert!(runs <= manifest.segments().len());
            assert_eq!(read(&spool, id, offset, want.len()).await, want);
        }
    }
}
