//! What the spool reports through the [`metrics`] facade: the bytes the memory spool holds per tier,
//! and the caps they run against. Nothing is recorded until the application installs a recorder
//! (the demo's `--metrics-addr` does); docs/METRICS.md lists every metric of the workspace.
//!
//! Call sites are one line each: the functions below own the names, labels and units.

use metrics::{Unit, describe_gauge, gauge};

/// Gauge, label `tier` (`memory`, `disk`): bytes of snapshot segments the memory spools of this
/// process hold, in memory and spilled to their directory.
pub const SPOOL_BYTES: &str = "dual_spool_bytes";
/// Gauge, label `tier` (`memory`, `disk`, `total`): the cap of each tier in bytes (the memory
/// budget; the disk cap and the cap of both together where they are configured).
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
        "Cap of each spool tier in bytes (memory: the memory budget; disk, total: the caps, when set)"
    );
    for tier in [Tier::Memory, Tier::Disk] {
        stored(tier, 0);
    }
}

/// Where a segment is kept: the `tier` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Tier {
    /// In the process's memory, under the memory budget.
    Memory,
    /// In a file of the spill directory.
    Disk,
    /// Memory and disk together (a cap of the whole spool; no bytes are reported under it).
    Total,
}

impl Tier {
    const fn as_str(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Disk => "disk",
            Self::Total => "total",
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

/// Reports that the cap of `tier` is `bytes` ([`SPOOL_LIMIT_BYTES`]): one call where a cap is
/// configured (the memory spool reports its budget itself).
pub fn limit(tier: Tier, bytes: u64) {
    gauge!(SPOOL_LIMIT_BYTES, "tier" => tier.as_str()).set(bytes as f64);
}
