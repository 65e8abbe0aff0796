//! When a writer closes a segment and starts the next.

/// Default target size of a segment: 1 MiB.
pub const DEFAULT_SEGMENT_BYTES: usize = 1 << 20;
/// Default most rows in a segment.
pub const DEFAULT_SEGMENT_ROWS: u32 = 65_536;

/// When a writer closes a segment and starts the next.
///
/// A segment holds at least one row: a row larger than `bytes` gets a segment of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentLimits {
    /// Target encoded size; a row that would take the segment past it starts a new one.
    pub bytes: usize,
    /// Most rows per segment.
    pub rows: u32,
}

impl Default for SegmentLimits {
    fn default() -> Self {
        Self {
            bytes: DEFAULT_SEGMENT_BYTES,
            rows: DEFAULT_SEGMENT_ROWS,
        }
    }
}
