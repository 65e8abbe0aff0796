//! The segment format: one immutable, self-describing block of encoded rows.
//!
//! ```text
//! offset        size      field
//! 0             4         magic "DSG2" (format version 2)
//! 4             4         n, the number of rows (u32, little-endian)
//! 8             4         d, the number of data bytes (u32, little-endian)
//! 12            4         reserved, zero
//! 16            4·(n+1)   row starts s[0..=n] (u32 LE): row i is data[s[i]..s[i+1] - 1], s[0] = 0,
//!                         s[n] = d + 1 (0 when n = 0): as if every row were followed by a comma
//! 16 + 4·(n+1)  d         the rows joined by commas (n - 1 of them)
//! ```
//!
//! Rows `i..j` of a segment are the one slice `data[s[i]..s[j] - 1]`: a range is found with two
//! table reads, never by scanning rows, and it is already what a JSON array holds between its
//! brackets, so a page of stored rows is sent as slices of the segment, not copied. A segment is
//! validated once when it is decoded (starts ascend, each row is followed by a comma), so every
//! later access is a plain slice.
//!
//! Version 1 (`"DSG1"`: bounds b[i] with row i = data[b[i]..b[i+1]], rows concatenated without
//! separators), written before version 2, is still read: decoding turns it into version 2 (one copy
//! of the segment).

use std::ops::Range;

use bytes::{BufMut, Bytes, BytesMut};
use dual_core::ResourceId;

use crate::SpoolError;

/// The magic number and format version at the start of every segment written.
const MAGIC: [u8; 4] = *b"DSG2";
/// The magic number of version 1, still read.
const MAGIC_V1: [u8; 4] = *b"DSG1";
/// Length of the fixed header.
const HEADER_LEN: usize = 16;
/// Length of one row bound.
const BOUND_LEN: usize = 4;
/// What joins the rows of a segment.
const SEPARATOR: u8 = b',';

/// Collects rows and encodes them as one segment.
#[derive(Debug)]
pub(crate) struct SegmentBuilder {
    /// The rows joined by commas.
    data: Vec<u8>,
    /// Where each row starts.
    starts: Vec<u32>,
}

impl SegmentBuilder {
    pub(crate) fn new() -> Self {
        Self {
            data: Vec::new(),
            starts: Vec::new(),
        }
    }

    /// Rows collected so far.
    pub(crate) fn rows(&self) -> usize {
        self.starts.len()
    }

    /// The encoded size the segment would have now.
    pub(crate) fn encoded_len(&self) -> usize {
        HEADER_LEN + BOUND_LEN * (self.starts.len() + 1) + self.data.len()
    }

    /// The encoded size after adding a row of `len` bytes (and the comma before it).
    pub(crate) fn encoded_len_with(&self, len: usize) -> usize {
        self.encoded_len() + BOUND_LEN + len + usize::from(!self.starts.is_empty())
    }

    /// Appends one row.
    ///
    /// # Errors
    ///
    /// [`SpoolError::RowTooLarge`] when the segment's data would pass 4 GiB.
    pub(crate) fn push(&mut self, row: &[u8]) -> Result<(), SpoolError> {
        let start = self.data.len() + usize::from(!self.starts.is_empty());
        // The end plus the comma after it (s[n] = d + 1) must fit a u32, as must the row count.
        let fits = start
            .checked_add(row.len())
            .and_then(|end| end.checked_add(1))
            .and_then(|after| u32::try_from(after).ok())
            .zip(u32::try_from(start).ok())
            .filter(|_| u32::try_from(self.starts.len() + 1).is_ok());
        let Some((_, start)) = fits else {
            return Err(SpoolError::RowTooLarge { len: row.len() });
        };
        if !self.starts.is_empty() {
            self.data.push(SEPARATOR);
        }
        self.data.extend_from_slice(row);
        self.starts.push(start);
        Ok(())
    }

    /// Encodes the collected rows and leaves the builder empty.
    pub(crate) fn take(&mut self) -> Bytes {
        let rows = self.rows();
        let mut out = BytesMut::with_capacity(self.encoded_len());
        out.put_slice(&MAGIC);
        // `push` keeps these within u32.
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        out.put_u32_le(clamp(rows));
        out.put_u32_le(clamp(self.data.len()));
        out.put_u32_le(0);
        for start in &self.starts {
            out.put_u32_le(*start);
        }
        out.put_u32_le(if rows == 0 { 0 } else { clamp(self.data.len() + 1) });
        out.put_slice(&self.data);
        self.data.clear();
        self.starts.clear();
        out.freeze()
    }
}

/// A decoded, validated segment: cheap to clone (it shares the encoded bytes).
#[derive(Debug, Clone)]
pub(crate) struct Segment {
    bytes: Bytes,
    rows: u32,
    data_start: usize,
    /// Whether the bytes were shared when read (a memory backend keeps them): holding on to them
    /// then keeps nothing alive that would not be anyway.
    resident: bool,
}

impl Segment {
    /// Validates an encoded segment of resource `id` (version 2, or version 1, which it rewrites as
    /// version 2).
    ///
    /// # Errors
    ///
    /// [`SpoolError::Corrupt`] when the bytes are not a valid segment.
    pub(crate) fn decode(id: ResourceId, bytes: Bytes) -> Result<Self, SpoolError> {
        if bytes.get(..4) == Some(&MAGIC_V1[..]) {
            return Self::decode_v1(id, &bytes);
        }
        let segment = Self::decode_validated(id, bytes)?;
        let corrupt = || SpoolError::Corrupt {
            id,
            reason: "segment row bounds",
        };
        let data = segment.bytes.get(segment.data_start..).unwrap_or_default();
        let n = segment.rows as usize;
        let mut previous = None;
        for i in 0..=n {
            let start =
                read_u32(&segment.bytes, HEADER_LEN + BOUND_LEN * i).map_or(usize::MAX, |s| s as usize);
            let valid = match previous {
                None => start == 0,
                // A row's start is past the comma that ends the row before it.
                Some(before) => start > before && (i == n || data.get(start - 1) == Some(&SEPARATOR)),
            };
            if !valid {
                return Err(corrupt());
            }
            previous = Some(start);
        }
        let end = if n == 0 { 0 } else { data.len() + 1 };
        if previous != Some(end) {
            return Err(corrupt());
        }
        Ok(segment)
    }

    /// A version-1 segment rewritten as version 2, after the same checks (bounds ascend from 0 to
    /// the data's length).
    fn decode_v1(id: ResourceId, bytes: &[u8]) -> Result<Self, SpoolError> {
        let corrupt = |reason| SpoolError::Corrupt { id, reason };
        let (rows, data_start) = header(id, bytes)?;
        let data = bytes.get(data_start..).unwrap_or_default();
        let mut builder = SegmentBuilder::new();
        let mut previous = 0;
        for i in 1..=rows as usize {
            let bound = read_u32(bytes, HEADER_LEN + BOUND_LEN * i).map_or(usize::MAX, |b| b as usize);
            let row = data
                .get(previous..bound)
                .ok_or_else(|| corrupt("segment row bounds"))?;
            builder.push(row)?;
            previous = bound;
        }
        if read_u32(bytes, HEADER_LEN) != Some(0) || previous != data.len() {
            return Err(corrupt("segment row bounds"));
        }
        Self::decode_validated(id, builder.take())
    }

    /// Re-opens bytes that [`Segment::decode`] already validated (the same allocation, which a
    /// memory backend hands out on every read): only the header is checked again, so a read does
    /// not re-scan the bound table. Row access stays panic-free whatever the bytes hold.
    pub(crate) fn decode_validated(id: ResourceId, bytes: Bytes) -> Result<Self, SpoolError> {
        if bytes.get(..4) != Some(&MAGIC[..]) {
            // Never validated as it is (version 1 is rewritten, so its bytes are not these).
            return if bytes.get(..4) == Some(&MAGIC_V1[..]) {
                Self::decode_v1(id, &bytes)
            } else {
                Err(SpoolError::Corrupt {
                    id,
                    reason: "segment magic or version",
                })
            };
        }
        let (rows, data_start) = header(id, &bytes)?;
        Ok(Self {
            resident: !bytes.is_unique(),
            bytes,
            rows,
            data_start,
        })
    }

    /// Number of rows.
    pub(crate) fn rows(&self) -> u32 {
        self.rows
    }

    /// Whether the storage holds these same bytes too (see [`RowRun::resident`]).
    ///
    /// [`RowRun::resident`]: crate::RowRun::resident
    pub(crate) fn resident(&self) -> bool {
        self.resident
    }

    /// Start `i` (0..=rows) as an index into the encoded bytes, never more than one past their end
    /// (validated in `decode`; clamped anyway, so that no access can panic).
    fn start(&self, i: u32) -> usize {
        let start = read_u32(&self.bytes, HEADER_LEN + BOUND_LEN * i as usize).unwrap_or(0) as usize;
        (self.data_start + start).min(self.bytes.len() + 1)
    }

    /// The bytes of rows `range` (clamped to the segment), joined by commas: one slice, no copy.
    pub(crate) fn slice(&self, range: Range<u32>) -> Bytes {
        self.bytes.slice(self.span(range))
    }

    /// Where the bytes of rows `range` (clamped to the segment), joined by commas, are.
    pub(crate) fn span(&self, range: Range<u32>) -> Range<usize> {
        let end = range.end.min(self.rows);
        let start = range.start.min(end);
        if start == end {
            return 0..0;
        }
        let to = (self.start(end) - 1).min(self.bytes.len());
        self.start(start).min(to)..to
    }

    /// The bytes of each row of `range` (clamped to the segment), borrowed, reading each start once.
    pub(crate) fn row_slices(&self, range: Range<u32>) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        let end = range.end.min(self.rows);
        let start = range.start.min(end);
        let mut from = self.start(start);
        (start..end).map(move |i| {
            let next = self.start(i + 1).max(from + 1);
            let row = self.bytes.get(from..next - 1).unwrap_or_default();
            from = next;
            row
        })
    }

    /// The byte range of row `i` inside the bytes of rows starting at `from` (see [`Segment::slice`]).
    pub(crate) fn row_span(&self, from: u32, i: u32) -> Range<usize> {
        let base = self.start(from);
        let end = (self.start(i + 1).max(base + 1) - 1).max(base);
        self.start(i).clamp(base, end) - base..end - base
    }
}

/// The row count and where the data starts, from a segment's header, checked against its length.
fn header(id: ResourceId, bytes: &[u8]) -> Result<(u32, usize), SpoolError> {
    let corrupt = |reason| SpoolError::Corrupt { id, reason };
    let (Some(rows), Some(data_len)) = (read_u32(bytes, 4), read_u32(bytes, 8)) else {
        return Err(corrupt("segment header truncated"));
    };
    let data_start = (rows as usize + 1)
        .checked_mul(BOUND_LEN)
        .and_then(|table| table.checked_add(HEADER_LEN))
        .ok_or_else(|| corrupt("segment row count"))?;
    if data_start.checked_add(data_len as usize) != Some(bytes.len()) {
        return Err(corrupt("segment length"));
    }
    Ok((rows, data_start))
}

/// The encoded sizes a segment of `rows` rows can have: the header and its `rows + 1` bounds, plus
/// up to `u32::MAX` data bytes. A manifest recording another size is corrupt.
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
            HEADER_LEN + 4 * (rows.len() + 1) + rows.join(&b","[..]).len()
        );
        builder.take()
    }

    /// `rows` as version 1 wrote them.
    fn encode_v1(rows: &[&[u8]]) -> Bytes {
        let mut out = BytesMut::new();
        out.put_slice(b"DSG1");
        out.put_u32_le(u32::try_from(rows.len()).expect("few rows"));
        out.put_u32_le(u32::try_from(rows.concat().len()).expect("small rows"));
        out.put_u32_le(0);
        let mut bound = 0;
        out.put_u32_le(0);
        for row in rows {
            bound += row.len();
            out.put_u32_le(u32::try_from(bound).expect("small rows"));
        }
        out.put_slice(&rows.concat());
        out.freeze()
    }

    #[test]
    fn the_layout_is_header_starts_then_rows_joined_by_commas() {
        let bytes = encode(&[b"{\"a\":1}", b"", b"[]"]);
        assert_eq!(&bytes[..4], b"DSG2");
        assert_eq!(&bytes[4..16], &[3, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&bytes[16..32], &[0, 0, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0, 12, 0, 0, 0]);
        assert_eq!(&bytes[32..], b"{\"a\":1},,[]");
        let empty = encode(&[]);
        assert_eq!(&empty[4..], &[0; 16]);
    }

    #[test]
    fn ranges_are_slices_joined_by_commas() {
        let id = ResourceId::new();
        let segment = Segment::decode(id, encode(&[b"aa", b"b", b"ccc"])).expect("valid");
        assert_eq!(segment.rows(), 3);
        assert_eq!(&segment.slice(0..3)[..], b"aa,b,ccc");
        assert_eq!(&segment.slice(1..3)[..], b"b,ccc");
        assert_eq!(&segment.slice(0..1)[..], b"aa");
        assert_eq!(&segment.slice(2..9)[..], b"ccc");
        assert!(segment.slice(5..9).is_empty());
        assert!(segment.slice(1..1).is_empty());
        assert_eq!(segment.row_span(1, 2), 2..5);
        assert_eq!(segment.row_span(0, 0), 0..2);
        let rows: Vec<&[u8]> = segment.row_slices(0..3).collect();
        assert_eq!(rows, [&b"aa"[..], b"b", b"ccc"]);
        let rows: Vec<&[u8]> = segment.row_slices(1..9).collect();
        assert_eq!(rows, [&b"b"[..], b"ccc"], "clamped to the segment");
        let empty = Segment::decode(id, encode(&[])).expect("valid");
        assert_eq!((empty.rows(), empty.slice(0..1).len()), (0, 0));
        let blanks = Segment::decode(id, encode(&[b"", b"", b"x"])).expect("valid");
        assert_eq!(&blanks.slice(0..3)[..], b",,x");
        assert_eq!(blanks.row_slices(0..3).collect::<Vec<_>>(), [&b""[..], b"", b"x"]);
    }

    #[test]
    fn version_1_is_read_as_version_2() {
        let id = ResourceId::new();
        let rows: [&[u8]; 4] = [b"{\"a\":1}", b"", b"[]", b"x,y"];
        for decode in [Segment::decode, Segment::decode_validated] {
            let segment = decode(id, encode_v1(&rows)).expect("valid version 1");
            assert_eq!(segment.rows(), 4);
            assert_eq!(segment.row_slices(0..4).collect::<Vec<_>>(), rows);
            assert_eq!(&segment.slice(0..4)[..], b"{\"a\":1},,[],x,y");
            assert_eq!(
                &segment.bytes[..],
                &encode(&rows)[..],
                "the same bytes version 2 writes"
            );
        }
        let good = encode_v1(&[b"aa", b"b"]);
        for cut in 0..good.len() {
            assert!(Segment::decode(id, good.slice(..cut)).is_err(), "cut at {cut}");
        }
        let mut descending = good.to_vec();
        descending[20] = 3; // bounds 0, 3, 2
        descending[24] = 2;
        assert!(Segment::decode(id, Bytes::from(descending)).is_err());
        let mut offset = good.to_vec();
        offset[16] = 1; // b[0] = 1
        assert!(Segment::decode(id, Bytes::from(offset)).is_err());
    }

    #[test]
    fn damaged_segments_are_corrupt_not_panics() {
        let id = ResourceId::new();
        let good = encode(&[b"aa", b"b"]);
        assert!(Segment::decode(id, good.clone()).is_ok());
        for cut in 0..good.len() {
            assert!(Segment::decode(id, good.slice(..cut)).is_err(), "cut at {cut}");
        }
        let damage = |at: usize, value: u8| {
            let mut bytes = good.to_vec();
            bytes[at] = value;
            Segment::decode(id, Bytes::from(bytes))
        };
        assert!(damage(20, 5).is_err(), "starts 0, 5, 5: not ascending");
        assert!(
            damage(20, 2).is_err(),
            "row 1 would start at the comma, not after it"
        );
        assert!(damage(28 + 2, b'x').is_err(), "no comma between the rows");
        assert!(damage(24, 4).is_err(), "the last start is not one past the data");
        assert!(damage(16, 1).is_err(), "the first start is not 0");
        assert!(damage(0, b'X').is_err(), "another magic");
        let mut huge = good.to_vec();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Segment::decode(id, Bytes::from(huge)).is_err());
    }
}
