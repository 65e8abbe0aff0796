//! The manifest of a finished snapshot: its segments, their row counts and sizes, and the offset
//! index.

use bytes::{BufMut, Bytes, BytesMut};
use dual_core::ResourceId;

use crate::{SpoolError, segment};

/// The magic number and format version at the start of an encoded manifest without an annex.
const MAGIC: [u8; 4] = *b"DSM1";

/// The magic number of a manifest followed by its annex.
const MAGIC_ANNEX: [u8; 4] = *b"DSM2";

/// Bytes an annex may have, at most (a decoded manifest is another process's bytes).
pub const MAX_ANNEX_BYTES: usize = 16 << 20;

/// One segment as the manifest records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentInfo {
    /// The snapshot row the segment starts with.
    pub first_row: u64,
    /// Rows in the segment.
    pub rows: u32,
    /// The segment's encoded size in bytes.
    pub bytes: u64,
}

/// A finished snapshot: written once by [`SpoolWriter::finish`](crate::SpoolWriter::finish), then
/// immutable. Its segment list is the offset index: [`Manifest::locate`] finds the segment of any row
/// by binary search.
///
/// A manifest may carry an **annex**: bytes the spool stores with it and never reads (the server
/// keeps the column profile of the snapshot there), so every instance that reads the manifest reads
/// them too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    id: ResourceId,
    rows: u64,
    segments: Vec<SegmentInfo>,
    annex: Option<Bytes>,
}

impl Manifest {
    pub(crate) fn new(id: ResourceId) -> Self {
        Self {
            id,
            rows: 0,
            segments: Vec::new(),
            annex: None,
        }
    }

    /// The manifest with `annex` stored beside its segments (replacing any annex it had).
    #[must_use]
    pub fn with_annex(mut self, annex: Bytes) -> Self {
        self.annex = Some(annex);
        self
    }

    pub(crate) fn set_annex(&mut self, annex: Bytes) {
        self.annex = Some(annex);
    }

    /// The annex stored with the manifest, if any.
    #[must_use]
    pub fn annex(&self) -> Option<&Bytes> {
        self.annex.as_ref()
    }

    /// Records the next segment.
    pub(crate) fn push(&mut self, rows: u32, bytes: u64) {
        self.segments.push(SegmentInfo {
            first_row: self.rows,
            rows,
            bytes,
        });
        self.rows += u64::from(rows);
    }

    /// The resource.
    #[must_use]
    pub fn id(&self) -> ResourceId {
        self.id
    }

    /// Rows in the snapshot.
    #[must_use]
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Encoded bytes of all segments (saturating at `u64::MAX`: a decoded manifest is another
    /// process's bytes, so its sizes are not trusted to add up within `u64`).
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.segments.iter().fold(0, |sum, s| sum.saturating_add(s.bytes))
    }

    /// The segments in row order; the index of a segment is its number in storage.
    #[must_use]
    pub fn segments(&self) -> &[SegmentInfo] {
        &self.segments
    }

    /// The number of the segment that holds `row`, or `None` past the end.
    #[must_use]
    pub fn locate(&self, row: u64) -> Option<usize> {
        if row >= self.rows {
            return None;
        }
        // The first segment that starts after `row`, minus one. Empty segments are never written.
        Some(self.segments.partition_point(|s| s.first_row <= row) - 1)
    }

    /// Encodes the manifest for storage: `"DSM1"`, the segment count (u32 LE), then per segment
    /// its row count (u32 LE) and size (u64 LE). Start rows are sums and are not stored. With an
    /// annex the magic is `"DSM2"`, and the annex's length (u32 LE) and bytes follow the segments.
    #[must_use]
    pub fn encode(&self) -> Bytes {
        let annex = self.annex.as_deref().unwrap_or_default();
        let mut out = BytesMut::with_capacity(12 + 12 * self.segments.len() + annex.len());
        out.put_slice(if self.annex.is_some() {
            &MAGIC_ANNEX
        } else {
            &MAGIC
        });
        out.put_u32_le(u32::try_from(self.segments.len()).unwrap_or(u32::MAX));
        for segment in &self.segments {
            out.put_u32_le(segment.rows);
            out.put_u64_le(segment.bytes);
        }
        if self.annex.is_some() {
            out.put_u32_le(u32::try_from(annex.len()).unwrap_or(u32::MAX));
            out.put_slice(annex);
        }
        out.freeze()
    }

    /// Decodes a manifest of resource `id` written by [`Manifest::encode`].
    ///
    /// # Errors
    ///
    /// [`SpoolError::Corrupt`] when the bytes are not a version-1 manifest, or record a segment of
    /// no rows or of a size no segment of its row count has.
    pub fn decode(id: ResourceId, bytes: &[u8]) -> Result<Self, SpoolError> {
        let corrupt = SpoolError::Corrupt {
            id,
            reason: "manifest",
        };
        let (Some(magic), Some(count)) = (bytes.get(..4), bytes.get(4..8)) else {
            return Err(corrupt);
        };
        let with_annex = match magic {
            b"DSM1" => false,
            b"DSM2" => true,
            _ => return Err(corrupt),
        };
        let count = u32::from_le_bytes(count.try_into().map_err(|_| SpoolError::Corrupt {
            id,
            reason: "manifest",
        })?) as usize;
        let body_len = count.checked_mul(12).ok_or(SpoolError::Corrupt {
            id,
            reason: "manifest",
        })?;
        let (body, rest) = bytes[8..].split_at_checked(body_len).ok_or(SpoolError::Corrupt {
            id,
            reason: "manifest",
        })?;
        let annex = match (with_annex, rest.split_at_checked(4)) {
            (false, _) if rest.is_empty() => None,
            (true, Some((len, annex)))
                if u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize == annex.len()
                    && annex.len() <= MAX_ANNEX_BYTES =>
            {
                Some(Bytes::copy_from_slice(annex))
            }
            _ => return Err(corrupt),
        };
        let mut manifest = Self::new(id);
        for entry in body.chunks_exact(12) {
            let (rows, size) = entry.split_at(4);
            let (Ok(rows), Ok(size)) = (<[u8; 4]>::try_from(rows), <[u8; 8]>::try_from(size)) else {
                return Err(corrupt);
            };
            let (rows, size) = (u32::from_le_bytes(rows), u64::from_le_bytes(size));
            // No segment is empty, and none of `rows` rows can have another size.
            if rows == 0 || !segment::encoded_len_range(rows).contains(&size) {
                return Err(corrupt);
            }
            manifest.push(rows, size);
        }
        manifest.annex = annex;
        Ok(manifest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(rows: &[u32]) -> Manifest {
        let mut manifest = Manifest::new(ResourceId::new());
        for (i, r) in rows.iter().enumerate() {
            manifest.push(*r, 100 + i as u64);
        }
        manifest
    }

    #[test]
    fn locate_finds_the_segment_of_every_row() {
        let m = manifest(&[3, 1, 2]);
        let found: Vec<_> = (0..7).map(|row| m.locate(row)).collect();
        assert_eq!(
            found,
            [Some(0), Some(0), Some(0), Some(1), Some(2), Some(2), None]
        );
        assert_eq!((m.rows(), m.bytes()), (6, 303));
        assert_eq!(manifest(&[]).locate(0), None);
    }

    #[test]
    fn encoding_round_trips_and_rejects_damage() {
        let m = manifest(&[3, 1, 2]);
        let encoded = m.encode();
        assert_eq!(Manifest::decode(m.id(), &encoded).expect("valid"), m);
        let empty = manifest(&[]);
        assert_eq!(
            Manifest::decode(empty.id(), &empty.encode()).expect("valid"),
            empty
        );
        for cut in 0..encoded.len() {
            assert!(Manifest::decode(m.id(), &encoded[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn an_annex_round_trips_and_a_damaged_one_is_corrupt() {
        let m = manifest(&[3, 1]).with_annex(Bytes::from_static(br#"{"rows":4}"#));
        let encoded = m.encode();
        assert_eq!(&encoded[..4], b"DSM2");
        let back = Manifest::decode(m.id(), &encoded).expect("valid");
        assert_eq!(back.annex().map(|a| &a[..]), Some(&br#"{"rows":4}"#[..]));
        assert_eq!(back, m);
        for cut in 0..encoded.len() {
            assert!(Manifest::decode(m.id(), &encoded[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = encoded.to_vec();
        longer.push(b'x');
        assert!(Manifest::decode(m.id(), &longer).is_err(), "bytes past the annex");
        let empty = manifest(&[2]).with_annex(Bytes::new());
        assert_eq!(
            Manifest::decode(empty.id(), &empty.encode()).expect("valid"),
            empty
        );
        let mut plain = manifest(&[2]).encode().to_vec();
        plain.extend_from_slice(&[0, 0, 0, 0]);
        assert!(Manifest::decode(empty.id(), &plain).is_err(), "DSM1 has no annex");
    }

    /// Found by the fuzz target `manifest_decode`: two segments of `u64::MAX` bytes were accepted,
    /// and `bytes()` then overflowed (a panic with overflow checks, a wrapped total without).
    #[test]
    fn implausible_segment_sizes_are_corrupt_and_bytes_never_overflows() {
        let id = ResourceId::new();
        let encoded = |entries: &[(u32, u64)]| {
            let mut out = b"DSM1".to_vec();
            out.extend_from_slice(&u32::try_from(entries.len()).expect("few").to_le_bytes());
            for (rows, size) in entries {
                out.extend_from_slice(&rows.to_le_bytes());
                out.extend_from_slice(&size.to_le_bytes());
            }
            out
        };
        assert!(Manifest::decode(id, &encoded(&[(3, u64::MAX), (1, u64::MAX)])).is_err());
        // The smallest and largest sizes a segment of 3 rows can have: header and 4 bounds, plus 0
        // or u32::MAX row bytes.
        let (least, most) = (16 + 4 * 4, 16 + 4 * 4 + u64::from(u32::MAX));
        for (size, valid) in [(least - 1, false), (least, true), (most, true), (most + 1, false)] {
            assert_eq!(
                Manifest::decode(id, &encoded(&[(3, size)])).is_ok(),
                valid,
                "size {size}"
            );
        }
        assert!(Manifest::decode(id, &encoded(&[(u32::MAX, 16 + 4 * (1 << 32))])).is_ok());

        let mut huge = Manifest::new(id);
        huge.push(1, u64::MAX);
        huge.push(1, u64::MAX);
        assert_eq!(huge.bytes(), u64::MAX);
    }
}
