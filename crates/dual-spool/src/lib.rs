//! The snapshot spool of dual-response: one execution of a resource's query writes its result as
//! immutable encoded **segments**; pages and exports are read back from them, never by running the
//! query again.
//!
//! Servers depend on this crate (through `dual-server`); it depends on `dual-core` and tokio only,
//! and on `object_store` behind features. It knows nothing of HTTP or of resource records: the
//! server decides which snapshots are live, and never serves the segments of an expired resource.
//!
//! * [`Spool`] is the handle: [`Spool::writer`] → [`SpoolWriter::append`] each row's encoded
//!   bytes (for JSON, its compact JSON) → [`SpoolWriter::finish`] returns the [`Manifest`];
//!   [`Spool::read_rows`] reads a page, [`Spool::cursor`] streams a range one segment at a time,
//!   [`Spool::delete`] and [`Spool::sweep_orphans`] remove snapshots.
//! * [`SpoolBackend`] is the storage: [`MemorySpool`] (memory under a byte budget, spilling to a
//!   local directory), [`ObjectStoreSpool`] (feature `object-store`; any `object_store` store, and
//!   with feature `s3` [`S3SpoolBuilder`] for `s3://BUCKET[/PREFIX]` shared by several instances).
//!
//! ```
//! use dual_core::ResourceId;
//! use dual_spool::{MemorySpool, SegmentLimits, Spool};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), dual_spool::SpoolError> {
//! let backend = MemorySpool::builder().memory_budget_mb(64).build().await?;
//! let spool = Spool::new(backend).with_segment_limits(SegmentLimits { bytes: 4096, rows: 2 });
//!
//! let id = ResourceId::new();
//! let mut writer = spool.writer(id).await?;
//! for row in [r#"{"id":1}"#, r#"{"id":2}"#, r#"{"id":3,"name":"Zoë"}"#] {
//!     writer.append(row.as_bytes()).await?;
//! }
//! let manifest = writer.finish().await?;
//! assert_eq!((manifest.rows(), manifest.segments().len()), (3, 2));
//!
//! // A JSON page is the rows' bytes joined by commas: nothing is decoded.
//! let page = spool.read_rows(id, 1, 100).await?;
//! let rows: Vec<_> = page.iter().collect();
//! assert_eq!(rows, [r#"{"id":2}"#.as_bytes(), r#"{"id":3,"name":"Zoë"}"#.as_bytes()]);
//!
//! // An export reads one segment at a time.
//! let mut cursor = spool.cursor(id, 0, None).await?;
//! let mut exported = 0;
//! while let Some(run) = cursor.next().await? {
//!     exported += run.len();
//! }
//! assert_eq!(exported, 3);
//!
//! spool.delete(id).await?;
//! assert!(spool.read_rows(id, 0, 1).await.unwrap_err().is_not_found());
//! # Ok(()) }
//! ```
//!
//! # Segment format
//!
//! A segment is a 16-byte header (`"DSG2"`, row count n, data byte count d, reserved), a table of
//! n + 1 row starts (u32 little-endian), and the rows joined by commas. Rows `i..j` of a segment
//! are one slice, `data[s[i]..s[j] - 1]`, found with two table reads: already the inside of a JSON
//! array, so a page of stored rows is sent as slices of its segments ([`RowRun::joined`]), never
//! copied. Segments of version 1 (`"DSG1"`, rows without separators) are still read. A writer
//! closes a segment before a row would take it past [`SegmentLimits`] (1 MiB or 65,536 rows by
//! default; a larger row gets a segment of its own). The [`Manifest`] lists the segments with their
//! first row, row count and size; it is the offset index, searched by binary search, and it is
//! written last, so a snapshot is readable only once complete.
//!
//! # Lifetimes
//!
//! Segments are immutable and live as long as their resource: the server calls [`Spool::delete`]
//! when a resource is deleted or purged, and [`Spool::sweep_orphans`] in its sweep with a predicate
//! that knows the live resources, which removes what crashed writers and lost deletes left. A
//! [`SpoolWriter`] dropped without `finish` removes its segments itself.

mod backend;
mod cursor;
mod error;
mod limits;
mod manifest;
mod memory;
pub mod metrics;
#[cfg(feature = "object-store")]
mod object;
mod quota;
mod rows;
mod segment;
mod spool;
mod writer;

pub use backend::{SpoolBackend, Spooled};
pub use cursor::RowCursor;
pub use error::{BoxError, SpoolError};
pub use limits::{DEFAULT_SEGMENT_BYTES, DEFAULT_SEGMENT_ROWS, SegmentLimits};
pub use manifest::{MAX_ANNEX_BYTES, Manifest, SegmentInfo};
pub use memory::{
    DEFAULT_FREE_SPACE_PERCENT, DEFAULT_MEMORY_BUDGET, DEFAULT_MIN_FREE_BYTES, LOCK_FILE, MemorySpool,
    MemorySpoolBuilder, MemoryStats,
};
#[cfg(feature = "object-store")]
pub use object::ObjectStoreSpool;
#[cfg(feature = "s3")]
pub use object::S3SpoolBuilder;
pub use quota::{SpoolQuota, SpoolUsage};
pub use rows::{RowRun, Rows};
pub use spool::Spool;
pub use writer::SpoolWriter;
