//! `dual_spool::Manifest::decode`: the manifest of a snapshot as read back from a spill directory or an
//! S3 bucket, bytes another process wrote. A manifest either is rejected or re-encodes to exactly the
//! input, and its offset index (`locate`) agrees with its segment list for every probed row.
//!
//! Input: 8 bytes of the row to probe (little-endian u64), then the manifest bytes.

#![no_main]

use dual_core::ResourceId;
use dual_spool::Manifest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (probe, bytes) = data.split_at(data.len().min(8));
    let mut raw = [0; 8];
    raw[..probe.len()].copy_from_slice(probe);
    let probe = u64::from_le_bytes(raw);
    let id: ResourceId = "01ARZ3NDEKTSV4RRFFQ69G5FAV".parse().expect("a valid ULID");
    let Ok(manifest) = Manifest::decode(id, bytes) else {
        return;
    };
    assert_eq!(manifest.id(), id);
    assert_eq!(
        &manifest.encode()[..],
        bytes,
        "decode then encode is the identity"
    );
    let mut next = 0u64;
    for segment in manifest.segments() {
        assert_eq!(segment.first_row, next);
        assert!(segment.rows > 0, "empty segments are rejected");
        next += u64::from(segment.rows);
    }
    assert_eq!(manifest.rows(), next);
    let _ = manifest.bytes();
    for row in [
        probe,
        probe % manifest.rows().max(1),
        manifest.rows().saturating_sub(1),
        manifest.rows(),
    ] {
        match manifest.locate(row) {
            Some(index) => {
                let segment = manifest.segments()[index];
                assert!(segment.first_row <= row && row - segment.first_row < u64::from(segment.rows));
            }
            None => assert!(row >= manifest.rows()),
        }
    }
});
