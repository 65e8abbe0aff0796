//! Rows and helpers the cases share.

use dual_core::ResourceId;

use dual_spool::{Manifest, SegmentLimits, Spool};

/// The segment limits the cases write with: small, so that snapshots have many segments and rows of
/// odd sizes end segments early.
pub const LIMITS: SegmentLimits = SegmentLimits { bytes: 256, rows: 7 };

/// `n` rows of odd, varying sizes: compact JSON with unicode (two-, three- and four-byte UTF-8),
/// escapes, an empty string every so often and a long one now and then.
#[must_use]
pub fn sample_rows(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let text = match i % 5 {
                0 => String::new(),
                1 => "Zoë – naïve café".to_owned(),
                2 => "東京 🦀 \\\"quoted\\\"".to_owned(),
                3 => "x".repeat(i % 97),
                _ => format!("row {i}"),
            };
            format!(r#"{{"id":{i},"text":"{text}"}}"#).into_bytes()
        })
        .collect()
}

/// The spool with the suite's segment limits.
pub(super) fn small(spool: &Spool) -> Spool {
    spool.clone().with_segment_limits(LIMITS)
}

/// Writes `rows` as the snapshot of `id`.
pub(super) async fn write(spool: &Spool, id: ResourceId, rows: &[Vec<u8>]) -> Manifest {
    let mut writer = spool.writer(id).await.expect("writer");
    for row in rows {
        writer.append(row).await.expect("append");
    }
    writer.finish().await.expect("finish")
}

/// Rows `offset..offset + limit` of the snapshot of `id`, as owned bytes.
pub(super) async fn read(spool: &Spool, id: ResourceId, offset: u64, limit: usize) -> Vec<Vec<u8>> {
    let rows = spool.read_rows(id, offset, limit).await.expect("read_rows");
    rows.iter().map(|row| row.to_vec()).collect()
}

/// The model: rows `offset..offset + limit` of `rows`.
pub(super) fn expected(rows: &[Vec<u8>], offset: u64, limit: usize) -> Vec<Vec<u8>> {
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(rows.len());
    let end = start.saturating_add(limit).min(rows.len());
    rows[start..end].to_vec()
}

/// Whether `id` is listed.
pub(super) async fn listed(spool: &Spool, id: ResourceId) -> Option<bool> {
    let list = spool.list().await.expect("list");
    list.iter().find(|s| s.id == id).map(|s| s.finished)
}

/// Waits until `id` is no longer listed, polling storage for up to 10 s (a cleanup that runs in a
/// spawned task and does real IO).
pub(super) async fn until_unlisted(spool: &Spool, id: ResourceId) -> bool {
    for _ in 0..1000 {
        if listed(spool, id).await.is_none() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    false
}
