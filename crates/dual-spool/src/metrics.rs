//! What the spool reports through the [`metrics`] facade: the bytes the memory spool holds per tier,
//! and the caps they run against. Nothing is recorded until the application installs a recorder
//! (the demo's `--metrics-addr` does); docs/METRICS.md lists every metric of the workspace.
//!
//! Call sites are one line each: the functions below own the names, labels and units.

use metrics::{Unit, describe_gauge, gauge};

/// Gauge, label `tier` (`memory`, `disk`): bytes of snapshot segments the memory spools of this
/// process hold, in memory and spilled to their directory.
pub const SPOOL_BYTES: &str = "dual_spool_bytes";
/// Gauge, label `tier` (`memory`, `disk`): the cap of each tier in bytes (the memory budget; the
/// disk cap where one is configured).
pub const SPOOL_LIMIT_BYTES: &str = "dual_spool_limit_bytes";

/// Registers the descriptions of the spool's metrics with the installed recorder, and shows the
/// bytes of both tiers (at zero until something is stored); call it once, after installing the
/// recorder.
pub fn describe() {
    describe_gauge!(
        SPOOL_BYTES,
        Unit::Bytes,
        "Bytes of snapshot segments the memory spool holds, by tier (memory, disk)"
    );
    describe_gauge!(
        SPOOL_LIMIT_BYTES,
        Unit::Bytes,
        "Cap of each spool tier in bytes (memory: the memory budget; disk: the disk cap, when set)"
    );
    for tier in [Tier::Memory, Tier::Disk] {
        stored(tier, 0);
    }
}

/// Where a segment is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tier {
    /// In the process's memory, under the memory budget.
    Memory,
    /// In a file of the spill directory.
    Disk,
}

impl Tier {
    const fn as_str(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Disk => "disk",
        }
    }
}

/// `bytes` more are kept in `tier`.
pub(crate) fn stored(tier: Tier, bytes: u64) {
    gauge!(SPOOL_BYTES, "tier" => tier.as_str()).increment(bytes as f64);
}

/// `bytes` fewer are kept in `tier`.
pub(crate) fn released(tier: Tier, bytes: u64) {
    if bytes > 0 {
        gauge!(SPOOL_BYTES, "tier" => tier.as_str()).decrement(bytes as f64);
    }
}

/// The cap of `tier` is `bytes`: one call where the cap is configured.
pub(crate) fn limit(tier: Tier, bytes: u64) {
    gauge!(SPOOL_LIMIT_BYTES, "tier" => tier.as_str()).set(bytes as f64);
}

#[cfg(test)]
mod tests {
    use dual_core::ResourceId;
    use dual_testkit::metrics::Captured;

    use super::*;
    use crate::{MemorySpool, SpoolBackend};

    const MEMORY: &[(&str, &str)] = &[("tier", "memory")];
    const DISK: &[(&str, &str)] = &[("tier", "disk")];

    #[tokio::test]
    async fn bytes_per_tier_follow_puts_deletes_and_close() {
        let captured = Captured::new();
        let _local = captured.local();
        describe();
        let spool = MemorySpool::builder()
            .memory_budget(10)
            .build()
            .await
            .expect("spool");
        assert_eq!(captured.gauge(SPOOL_LIMIT_BYTES, MEMORY), Some(10.0));
        let (a, b) = (ResourceId::new(), ResourceId::new());
        spool.put_segment(a, 0, vec![1; 6].into()).await.expect("put");
        // Over the budget: spilled whole.
        spool.put_segment(a, 1, vec![2; 7].into()).await.expect("put");
        spool.put_segment(b, 0, vec![3; 4].into()).await.expect("put");
        assert_eq!(captured.gauge(SPOOL_BYTES, MEMORY), Some(10.0));
        assert_eq!(captured.gauge(SPOOL_BYTES, DISK), Some(7.0));
        // An index stored again replaces the old segment (this one spills: the budget is full).
        spool.put_segment(b, 0, vec![3; 2].into()).await.expect("put");
        assert_eq!(captured.gauge(SPOOL_BYTES, MEMORY), Some(6.0));
        assert_eq!(captured.gauge(SPOOL_BYTES, DISK), Some(9.0));
        spool.delete(a).await.expect("delete");
        assert_eq!(captured.gauge(SPOOL_BYTES, MEMORY), Some(0.0));
        assert_eq!(captured.gauge(SPOOL_BYTES, DISK), Some(2.0));
        spool.close().await.expect("close");
        assert_eq!(captured.gauge(SPOOL_BYTES, MEMORY), Some(0.0));
        assert!(captured.description(SPOOL_BYTES).is_some());
    }

    #[tokio::test]
    async fn a_dropped_spool_gives_its_bytes_back() {
        let captured = Captured::new();
        let _local = captured.local();
        let spool = MemorySpool::builder()
            .memory_budget(4)
            .build()
            .await
            .expect("spool");
        let id = ResourceId::new();
        spool.put_segment(id, 0, vec![1; 3].into()).await.expect("put");
        spool.put_segment(id, 1, vec![1; 3].into()).await.expect("put");
        drop(spool);
        assert_eq!(captured.gauge(SPOOL_BYTES, MEMORY), Some(0.0));
        assert_eq!(captured.gauge(SPOOL_BYTES, DISK), Some(0.0));
    }
}
