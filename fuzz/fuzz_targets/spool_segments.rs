//! Segment decoding through dual-spool's public read path: a `SpoolBackend` that hands the `Spool`
//! fuzzed manifest and segment bytes (as a spill directory or an S3 bucket would, bytes another
//! process wrote), then `Spool::read_rows` and `Spool::cursor` over fuzzed ranges. A read either fails
//! with an error or returns at most the rows asked for, each row a slice of its run's bytes.
//!
//! Input: records of a tag byte, a u16 little-endian length and that many bytes: `M` the manifest
//! (the last one wins; none means no finished snapshot), `S` the next segment, `R` a read of 11 bytes
//! (offset u64 LE, limit u16 LE, then a byte whose low bit asks for a cursor instead of a page).
//! Each read runs twice: the second takes the path for an allocation already validated.

#![no_main]

use std::sync::{LazyLock, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use dual_core::ResourceId;
use dual_spool::{Manifest, Spool, SpoolBackend, SpoolError, Spooled};
use libfuzzer_sys::fuzz_target;

/// One read: offset, limit, cursor or page.
type Read = (u64, u16, bool);

/// The manifest, segments and reads of an input.
fn records(mut data: &[u8]) -> (Option<Bytes>, Vec<Bytes>, Vec<Read>) {
    let (mut manifest, mut segments, mut reads) = (None, Vec::new(), Vec::new());
    while let [tag, low, high, rest @ ..] = data {
        let len = usize::from(u16::from_le_bytes([*low, *high])).min(rest.len());
        let (payload, tail) = rest.split_at(len);
        data = tail;
        match tag {
            b'M' => manifest = Some(Bytes::copy_from_slice(payload)),
            b'S' => segments.push(Bytes::copy_from_slice(payload)),
            b'R' if payload.len() >= 11 => {
                let offset = u64::from_le_bytes(payload[..8].try_into().unwrap_or_default());
                let limit = u16::from_le_bytes([payload[8], payload[9]]);
                reads.push((offset, limit, payload[10] & 1 == 1));
            }
            _ => {}
        }
    }
    (manifest, segments, reads)
}

/// What the backend serves this iteration.
#[derive(Debug, Default)]
struct Stored {
    manifest: Option<Bytes>,
    segments: Vec<Bytes>,
}

/// A backend over [`Stored`]; writes are refused (the target only reads).
#[derive(Debug, Clone, Copy)]
struct FuzzBackend;

static STORED: Mutex<Option<Stored>> = Mutex::new(None);

fn stored<T>(f: impl FnOnce(&Stored) -> T) -> T {
    let guard = STORED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    f(guard.as_ref().expect("set before every read"))
}

fn refused() -> SpoolError {
    SpoolError::unavailable("the fuzz backend is read-only")
}

#[async_trait]
impl SpoolBackend for FuzzBackend {
    async fn put_segment(&self, _: ResourceId, _: u32, _: Bytes) -> Result<(), SpoolError> {
        Err(refused())
    }

    async fn get_segment(&self, id: ResourceId, index: u32) -> Result<Bytes, SpoolError> {
        stored(|s| s.segments.get(index as usize).cloned()).ok_or(SpoolError::NotFound(id))
    }

    async fn put_manifest(&self, _: &Manifest) -> Result<(), SpoolError> {
        Err(refused())
    }

    async fn get_manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError> {
        // As the object-store backend does: the stored bytes through the public decoder.
        stored(|s| match &s.manifest {
            Some(bytes) => Manifest::decode(id, bytes),
            None => Err(SpoolError::NotFound(id)),
        })
    }

    async fn delete(&self, _: ResourceId) -> Result<(), SpoolError> {
        Ok(())
    }

    async fn list(&self) -> Result<Vec<Spooled>, SpoolError> {
        Ok(Vec::new())
    }
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    id: ResourceId,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| Fixture {
    runtime: tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime"),
    id: "01ARZ3NDEKTSV4RRFFQ69G5FAV".parse().expect("a valid ULID"),
});

fuzz_target!(|data: &[u8]| {
    let (manifest, segments, reads) = records(data);
    *STORED.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Stored { manifest, segments });

    let fixture = &*FIXTURE;
    // A spool per input: its memory of validated segments (by allocation) must not outlive the bytes.
    let spool = Spool::new(FuzzBackend);
    fixture.runtime.block_on(async {
        // Twice each: the second read of the same allocation takes the already-validated path.
        for (offset, limit, cursor) in reads.into_iter().take(8) {
            for _ in 0..2 {
                if cursor {
                    read_cursor(&spool, fixture.id, offset, u64::from(limit)).await;
                } else {
                    read_page(&spool, fixture.id, offset, usize::from(limit)).await;
                }
            }
        }
    });
});

async fn read_page(spool: &Spool, id: ResourceId, offset: u64, limit: usize) {
    let Ok(rows) = spool.read_rows(id, offset, limit).await else {
        return;
    };
    assert!(rows.len() <= limit);
    let mut expected = offset;
    for run in rows.runs() {
        assert!(!run.is_empty());
        assert_eq!(run.first_row(), expected, "runs are consecutive");
        expected += run.len() as u64;
        check_run(run);
    }
    assert_eq!(rows.iter().count(), rows.len());
}

async fn read_cursor(spool: &Spool, id: ResourceId, offset: u64, limit: u64) {
    let Ok(mut cursor) = spool.cursor(id, offset, Some(limit)).await else {
        return;
    };
    let mut returned = 0u64;
    let mut steps = 0;
    while let Ok(Some(run)) = cursor.next().await {
        returned += run.len() as u64;
        check_run(&run);
        steps += 1;
        assert!(
            steps <= cursor.manifest().segments().len(),
            "one step per segment at most"
        );
    }
    assert!(returned <= limit);
}

/// Every row of `run` is the slice of its bytes that `row(i)`, the iterator and the borrowed slices
/// agree on, and the rows joined by commas are the run's joined bytes.
fn check_run(run: &dual_spool::RowRun) {
    let all = run.joined();
    assert_eq!(all.len(), run.byte_len());
    let mut joined = Vec::with_capacity(all.len());
    for ((i, row), slice) in run.iter().enumerate().zip(run.slices()) {
        assert_eq!(run.row(i).as_ref(), Some(&row));
        assert_eq!(&row[..], slice);
        if i > 0 {
            joined.push(b',');
        }
        joined.extend_from_slice(&row);
    }
    assert_eq!(run.row(run.len()), None);
    assert_eq!(joined, all, "the rows joined by commas are the run's joined bytes");
}
