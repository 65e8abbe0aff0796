//! The segment format: one immutable, self-describing block of encoded rows.
//!
//! ```text
//! offset        size      field
//! 0             4         magic "DSG1" (format version 1)
//! 4             4         n, the number of rows (u32, little-endian)
//! 8             4         d, the number of row bytes (u32, little-endian)
//! 12            4         reserved, zero
//! 16            4·(n+1)   row bounds b[0..=n] (u32 LE): row i is data[b[i]..b[i+1]], b[0] = 0, b[n] = d
//! 16 + 4·(n+1)  d         the row bytes, concatenated without separators
//! ```
//!
//! Rows `i..j` of a segment are the one slice `data[b[i]..b[j]]`: a range is found with two table
//! reads, never by scanning rows. A segment is validated once when it is decoded (lengths add up,
//! bounds ascend), so every later access is a plain slice.

use std::ops::Range;

use bytes::{BufMut, Bytes, BytesMut};
use dual_core::ResourceId;

use crate::SpoolError;

/// The magic number and format version at the start of every segment.
const MAGIC: [u8; 4] = *b"DSG1";
/// Length of the fixed header.
const HEADER_LEN: usize = 16;
/// Length of one row bound.
const BOUND_LEN: usize = 4;

/// Collects rows and encodes them as one segment.
#[derive(Debug)]
pub(crate) struct SegmentBuilder {
    data: Vec<u8>,
    bounds: Vec<u32>,
}

impl SegmentBuilder {
    pub(crate) fn new() -> Self {
        Self {
            data: Vec::new(),
            bounds: vec![0],
        }
    }

    /// Rows collected so far.
    pub(crate) fn rows(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The encoded size the segment would have now.
    pub(crate) fn encoded_len(&self) -> usize {
        HEADER_LEN + BOUND_LEN * self.bounds.len() + self.data.len()
    }

    /// The encoded size after adding a row of `len` bytes.
    pub(crate) fn encoded_len_with(&self, len: usize) -> usize {
        self.encoded_len() + BOUND_LEN + len
    }

    /// Appends one row.
    ///
    /// # Errors
    ///
    /// [`SpoolError::RowTooLarge`] when the segment's row bytes would pass 4 GiB.
    pub(crate) fn push(&mut self, row: &[u8]) -> Result<(), SpoolError> {
        let end = self
            .data
            .len()
            .checked_add(row.len())
            .and_then(|end| u32::try_from(end).ok())
            .filter(|_| u32::try_from(self.bounds.len()).is_ok())
            .ok_or(SpoolError::RowTooLarge { len: row.len() })?;
        self.data.extend_from_slice(row);
        self.bounds.push(end);
        Ok(())
    }

    /// Encodes the collected rows and leaves the builder empty.
    pub(crate) fn take(&mut self) -> Bytes {
        let rows = self.rows();
        let mut out = BytesMut::with_capacity(self.encoded_len());
        out.put_slice(&MAGIC);
        // `push` keeps both within u32.
        out.put_u32_le(u32::try_from(rows).unwrap_or(u32::MAX));
        out.put_u32_le(u32::try_from(self.data.len()).unwrap_or(u32::MAX));
        out.put_u32_le(0);
        for bound in &self.bounds {
            out.put_u32_le(*bound);
        }
        out.put_slice(&self.data);
        self.data.clear();
        self.bounds.truncate(1);
        out.freeze()
    }
}

/// A decoded, validated segment: cheap to clone (it shares the encoded bytes).
#[derive(Debug, Clone)]
pub(crate) struct Segment {
    bytes: Bytes,
    rows: u32,
    data_start: usize,
}

impl Segment {
    /// Validates an encoded segment of resource `id`.
    ///
    /// # Errors
    ///
    /// [`SpoolError::Corrupt`] when the bytes are not a version-1 segment.
    pub(crate) fn decode(id: ResourceId, bytes: Bytes) -> Result<Self, SpoolError> {
        let segment = Self::decode_validated(id, bytes)?;
        let corrupt = || SpoolError::Corrupt {
            id,
            reason: "segment row bounds",
        };
        let data_len = segment.bytes.len() - segment.data_start;
        let mut previous = 0;
        for i in 0..=segment.rows as usize {
            let bound =
                read_u32(&segment.bytes, HEADER_LEN + BOUND_LEN * i).map_or(usize::MAX, |b| b as usize);
            if bound < previous || bound > data_len || (i == 0 && bound != 0) {
                return Err(corrupt());
            }
            previous = bound;
        }
        if previous != data_len {
            return Err(corrupt());
        }
        Ok(segment)
    }

    /// Re-opens bytes that [`Segment::decode`] already validated (the same allocation, which a
    /// memory backend hands out on every read): only the header is checked again, so a read does
    /// not re-scan the bound table. Row access stays panic-free whatever the bytes hold.
    pub(crate) fn decode_validated(id: ResourceId, bytes: Bytes) -> Result<Self, SpoolError> {
        let corrupt = |reason| SpoolError::Corrupt { id, reason };
        if bytes.get(..4) != Some(&MAGIC[..]) {
            return Err(corrupt("segment magic or version"));
        }
        let (Some(rows), Some(data_len)) = (read_u32(&bytes, 4), read_u32(&bytes, 8)) else {
            return Err(corrupt("segment header truncated"));
        };
        let data_start = (rows as usize + 1)
            .checked_mul(BOUND_LEN)
            .and_then(|table| table.checked_add(HEADER_LEN))
            .ok_or_else(|| corrupt("segment row count"))?;
        if data_start.checked_add(data_len as usize) != Some(bytes.len()) {
            return Err(corrupt("segment length"));
        }
        Ok(Self {
            bytes,
            rows,
            data_start,
        })
    }

    /// Number of rows.
    pub(crate) fn rows(&self) -> u32 {
        self.rows
    }

    /// Bound `i` (0..=rows) as an index into the encoded bytes, never past their end (validated in
    /// `decode`; clamped anyway, so that no access can panic).
    fn bound(&self, i: u32) -> usize {
        let bound = read_u32(&self.bytes, HEADER_LEN + BOUND_LEN * i as usize).unwrap_or(0) as usize;
        (self.data_start + bound).min(self.bytes.len())
    }

    /// The bytes of rows `range` (clamped to the segment), concatenated: one slice, no copy.
    pub(crate) fn slice(&self, range: Range<u32>) -> Bytes {
        self.bytes.slice(self.span(range))
    }

    /// Where the bytes of rows `range` (clamped to the segment) are.
    pub(crate) fn span(&self, range: Range<u32>) -> Range<usize> {
        let end = range.end.min(self.rows);
        let start = range.start.min(end);
        let to = self.bound(end);
        self.bound(start).min(to)..to
    }

    /// The bytes of each row of `range` (clamped to the segment), borrowed, reading each bound once.
    pub(crate) fn row_slices(&self, range: Range<u32>) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        let end = range.end.min(self.rows);
        let start = range.start.min(end);
        let mut from = self.bound(start);
        (start..end).map(move |i| {
            let to = self.bound(i + 1).max(from);
            let row = self.bytes.get(from..to).unwrap_or_default();
            from = to;
            row
        })
    }

    /// The byte range of row `i` inside the bytes of rows starting at `from` (see [`Segment::slice`]).
    pub(crate) fn row_span(&self, from: u32, i: u32) -> Range<usize> {
        let base = self.bound(from);
        let end = self.bound(i + 1).max(base);
        self.bound(i).clamp(base, end) - base..end - base
    }
}

/// The encoded sizes a segment of `rows` rows can have: the header and its `rows + 1` bounds, plus
/// up to `u32::MAX` row bytes. A manifest recording another size is corrupt.
pub(crate) fn encoded_len_range(rows: u32) -> std::ops::RangeInclusive<u64> {
    let fixed = (HEADER_LEN + BOUND_LEN) as u64 + BOUND_LEN as u64 * u64::from(rows);
    fixed..=fixed + u64::from(u32::MAX)
}

/// The little-endian u32 at `at`, if the bytes reach that far.
fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let raw: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(rows: &[&[u8]]) -> Bytes {
        let mut builder = SegmentBuilder::new();
        for row in rows {
            builder.push(row).expect("small rows fit");
        }
        assert_eq!(
            builder.encoded_len(),
            HEADER_LEN + 4 * (rows.len() + 1) + rows.concat().len()
        );
        builder.take()
    }

    #[test]
    fn the_layout_is_header_bounds_then_rows() {
        let bytes = encode(&[b"{\"a\":1}", b"", b"[]"]);
        assert_eq!(&bytes[..4], b"DSG1");
        assert_eq!(&bytes[4..16], &[3, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&bytes[16..32], &[0, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0]);
        assert_eq!(&bytes[32..], b"{\"a\":1}[]");
    }

    #[test]
    fn ranges_are_slices() {
        let id = ResourceId::new();
        let segment = Segment::decode(id, encode(&[b"aa", b"b", b"ccc"])).expect("valid");
        assert_eq!(segment.rows(), 3);
        assert_eq!(&segment.slice(1..3)[..], b"bccc");
        assert_eq!(&segment.slice(2..9)[..], b"ccc");
        assert!(segment.slice(5..9).is_empty());
        assert_eq!(segment.row_span(1, 2), 1..4);
        let rows: Vec<&[u8]> = segment.row_slices(0..3).collect();
        assert_eq!(rows, [&b"aa"[..], b"b", b"ccc"]);
        let rows: Vec<&[u8]> = segment.row_slices(1..9).collect();
        assert_eq!(rows, [&b"b"[..], b"ccc"], "clamped to the segment");
        let empty = Segment::decode(id, encode(&[])).expect("valid");
        assert_eq!((empty.rows(), empty.slice(0..1).len()), (0, 0));
    }

    #[test]
    fn damaged_segments_are_corrupt_not_panics() {
        let id = ResourceId::new();
        let good = encode(&[b"aa", b"b"]);
        for cut in 0..good.len() {
            assert!(Segment::decode(id, good.slice(..cut)).is_err(), "cut at {cut}");
        }
        let mut swapped = good.to_vec();
        swapped[20] = 3; // bounds 0, 3, 2: descending
        swapped[24] = 2;
        assert!(Segment::decode(id, Bytes::from(swapped)).is_err());
        let mut huge = good.to_vec();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Segment::decode(id, Bytes::from(huge)).is_err());
    }
}
