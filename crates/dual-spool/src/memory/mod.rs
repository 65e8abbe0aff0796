//! The embedded spool: segments in memory under a byte budget shared by all resources, spilling to
//! a local directory beyond it.

mod builder;
mod dir;
mod space;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use bytes::Bytes;
use dual_core::ResourceId;
use dual_store::id_hash::IdHashing;

pub use builder::{
    DEFAULT_FREE_SPACE_PERCENT, DEFAULT_MEMORY_BUDGET, DEFAULT_MIN_FREE_BYTES, MemorySpoolBuilder,
};
pub use dir::LOCK_FILE;
use dir::SpillDir;

use crate::metrics::{self, Tier};
use crate::{Manifest, SpoolBackend, SpoolError, SpoolQuota, SpoolUsage, Spooled};

/// Segments in memory while their total size stays within a byte budget, and in files of a spill
/// directory beyond it (one file per segment). A segment that does not fit goes to disk whole; the
/// ones in memory stay there until their resource is deleted. Reading a spilled segment loads that
/// one file, so a reader holds one segment at a time.
///
/// Two caps bound what it holds (see [`MemorySpoolBuilder`]): the bytes in memory and on disk
/// together ([`MemorySpoolBuilder::max_bytes`]), and the free space a spill must leave on disk
/// ([`MemorySpoolBuilder::min_free_bytes`]). A segment that would pass either is refused with
/// [`SpoolError::QuotaExceeded`]; nothing stored is ever evicted.
///
/// A cheap `Clone` handle. The spill directory is by default a private temporary directory
/// (mode 0700) that [`close`](SpoolBackend::close) or dropping the last handle removes; the private
/// directories of dead processes (`kill -9`) are removed when the next one is made. One process
/// owns a spill directory, through a lock on its [`LOCK_FILE`]: a given directory another live
/// process holds is refused, and at start-up it is cleared of the segment directories a crashed
/// process left behind (see [`MemorySpoolBuilder::dir`]).
#[derive(Debug, Clone)]
pub struct MemorySpool {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// A std mutex: every critical section is a few map operations, and it is never held across an
    /// `.await` (file IO happens between two short locks).
    state: Mutex<State>,
    budget: u64,
    caps: Caps,
    dir: SpillDir,
}

/// The caps of a spool, defaults resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Caps {
    /// Most bytes in memory and on disk together; `None`: no cap.
    max_bytes: Option<u64>,
    /// Free space a spill must leave.
    min_free: u64,
}

#[derive(Debug, Default)]
struct State {
    resources: HashMap<ResourceId, Entry, IdHashing>,
    in_memory: u64,
    on_disk: u64,
    /// Bytes of segment files being written (counted against the cap before they land).
    reserved: u64,
    next_generation: u64,
    closed: bool,
}

#[derive(Debug)]
struct Entry {
    /// Tells a re-created entry from the one a slow spill started for.
    generation: u64,
    segments: BTreeMap<u32, Slot>,
    manifest: Option<Manifest>,
    /// The segments stored so far, while the snapshot is written.
    partial: Option<Manifest>,
}

#[derive(Debug)]
enum Slot {
    Memory(Bytes),
    Disk(u64),
}

/// What a [`MemorySpool`] holds right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryStats {
    /// Bytes of segments in memory (at most the budget).
    pub in_memory_bytes: u64,
    /// Bytes of segments in the spill directory.
    pub on_disk_bytes: u64,
    /// Resources with something in the spool.
    pub resources: usize,
}

impl MemorySpool {
    /// A builder; the defaults are a 256 MiB budget and a private temporary spill directory.
    #[must_use]
    pub fn builder() -> MemorySpoolBuilder {
        MemorySpoolBuilder::default()
    }

    /// A spool with the default budget ([`DEFAULT_MEMORY_BUDGET`]) spilling to a new private
    /// temporary directory. Unlike [`MemorySpoolBuilder::build`] it needs no runtime.
    ///
    /// # Errors
    ///
    /// [`SpoolError::Config`] when the directory cannot be created.
    pub fn new() -> Result<Self, SpoolError> {
        let dir = SpillDir::private().map_err(|e| SpoolError::config("spill directory", Some(e.into())))?;
        let space = space::of(dir.path()).map_err(|e| {
            SpoolError::config(format!("free space of {}", dir.path().display()), Some(e.into()))
        })?;
        let caps = MemorySpoolBuilder::default().caps(space);
        Ok(Self::from_parts(DEFAULT_MEMORY_BUDGET, dir, caps))
    }

    fn from_parts(budget: u64, dir: SpillDir, caps: Caps) -> Self {
        metrics::limit(Tier::Memory, budget);
        if let Some(max_bytes) = caps.max_bytes {
            metrics::limit(Tier::Total, max_bytes);
        }
        tracing::debug!(
            dir = %dir.path().display(),
            memory_budget = budget,
            max_bytes = ?caps.max_bytes,
            min_free_bytes = caps.min_free,
            "spool: memory spool ready"
        );
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                budget,
                caps,
                dir,
            }),
        }
    }

    /// The spill directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        self.shared.dir.path()
    }

    /// The memory budget in bytes.
    #[must_use]
    pub fn budget(&self) -> u64 {
        self.shared.budget
    }

    /// The cap on bytes in memory and on disk together; `None` when there is none.
    #[must_use]
    pub fn max_bytes(&self) -> Option<u64> {
        self.shared.caps.max_bytes
    }

    /// The free space a spill must leave on the spill directory's file system.
    #[must_use]
    pub fn min_free_bytes(&self) -> u64 {
        self.shared.caps.min_free
    }

    /// What the spool holds right now.
    #[must_use]
    pub fn stats(&self) -> MemoryStats {
        let state = self.lock();
        MemoryStats {
            in_memory_bytes: state.in_memory,
            on_disk_bytes: state.on_disk,
            resources: state.resources.len(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic inside a critical section leaves the maps consistent (no multi-step updates).
        self.shared
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The manifest `pick` chooses of the resource `id` (the finished or the partial one), or
    /// `NotFound`.
    fn manifest_of(
        &self,
        id: ResourceId,
        pick: impl Fn(&Entry) -> Option<&Manifest>,
    ) -> Result<Manifest, SpoolError> {
        let state = self.open_state()?;
        state
            .resources
            .get(&id)
            .and_then(pick)
            .cloned()
            .ok_or(SpoolError::NotFound(id))
    }

    /// The state, or `Unavailable` once closed.
    fn open_state(&self) -> Result<MutexGuard<'_, State>, SpoolError> {
        let state = self.lock();
        if state.closed {
            return Err(SpoolError::unavailable("the memory spool is closed"));
        }
        Ok(state)
    }

    /// Refuses a segment of `len` bytes whose file would leave less free space than the floor,
    /// counting the other segment files being written (`reserved`, which includes this one).
    async fn check_free_space(&self, len: u64) -> Result<(), SpoolError> {
        let floor = self.shared.caps.min_free;
        if floor == 0 {
            return Ok(());
        }
        let Some(space) = space::of_async(self.shared.dir.path()).await? else {
            return Ok(());
        };
        let reserved = self.lock().reserved.max(len);
        if space.available < floor.saturating_add(reserved) {
            tracing::warn!(
                dir = %self.shared.dir.path().display(),
                available = space.available,
                min_free_bytes = floor,
                segment = len,
                "spool: free-space floor reached, segment refused"
            );
            return Err(SpoolError::QuotaExceeded {
                quota: SpoolQuota::FreeSpace,
                limit: floor,
                segment: len,
            });
        }
        Ok(())
    }
}

/// Bytes of a segment file being written, counted in `State::reserved` until [`settle`](Self::settle)
/// or drop (a failed or cancelled write) takes them out again.
struct Reservation<'a> {
    spool: &'a MemorySpool,
    len: u64,
    settled: bool,
}

impl Reservation<'_> {
    /// Takes the bytes out of `reserved`, under the caller's lock.
    fn settle(&mut self, state: &mut State) {
        state.reserved = state.reserved.saturating_sub(self.len);
        self.settled = true;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.settled {
            let mut state = self.spool.lock();
            state.reserved = state.reserved.saturating_sub(self.len);
        }
    }
}

impl State {
    fn entry(&mut self, id: ResourceId) -> &mut Entry {
        let generation = self.next_generation;
        let entry = self.resources.entry(id).or_insert_with(|| Entry {
            generation,
            segments: BTreeMap::new(),
            manifest: None,
            partial: None,
        });
        if entry.generation == generation {
            self.next_generation += 1;
        }
        entry
    }

    /// Takes a replaced segment out of the accounting (a backend user that stores one index twice).
    fn forget(&mut self, old: Option<Slot>) {
        old.iter().for_each(Slot::release);
        match old {
            Some(Slot::Memory(bytes)) => self.in_memory -= bytes.len() as u64,
            Some(Slot::Disk(len)) => self.on_disk -= len,
            None => {}
        }
    }

    /// Forgets a resource; whether it had spilled segments.
    fn remove(&mut self, id: ResourceId) -> bool {
        let Some(entry) = self.resources.remove(&id) else {
            return false;
        };
        let mut spilled = false;
        for slot in entry.segments.values() {
            slot.release();
            match slot {
                Slot::Memory(bytes) => self.in_memory -= bytes.len() as u64,
                Slot::Disk(len) => {
                    self.on_disk -= len;
                    spilled = true;
                }
            }
        }
        spilled
    }
}

#[async_trait]
impl SpoolBackend for MemorySpool {
    async fn put_segment(&self, id: ResourceId, index: u32, segment: Bytes) -> Result<(), SpoolError> {
        let len = segment.len() as u64;
        let generation = {
            let mut state = self.open_state()?;
            if let Some(max) = self.shared.caps.max_bytes {
                let held = state.in_memory + state.on_disk + state.reserved;
                if held.saturating_add(len) > max {
                    tracing::warn!(%id, held, max_bytes = max, segment = len, "spool: byte cap reached, segment refused");
                    return Err(SpoolError::QuotaExceeded {
                        quota: SpoolQuota::Bytes,
                        limit: max,
                        segment: len,
                    });
                }
            }
            let fits = state.in_memory + len <= self.shared.budget;
            if fits {
                state.in_memory += len;
                metrics::stored(Tier::Memory, len);
            }
            if fits {
                let old = state.entry(id).segments.insert(index, Slot::Memory(segment));
                state.forget(old);
                return Ok(());
            }
            state.reserved += len;
            state.entry(id).generation
        };
        let mut reservation = Reservation {
            spool: self,
            len,
            settled: false,
        };
        self.check_free_space(len).await?;
        self.shared.dir.write(id, index, &segment).await?;
        let stale = {
            let mut state = self.lock();
            reservation.settle(&mut state);
            let current = state.resources.get(&id).map(|e| e.generation) == Some(generation);
            if current {
                state.on_disk += len;
                metrics::stored(Tier::Disk, len);
                let old = state.entry(id).segments.insert(index, Slot::Disk(len));
                state.forget(old);
            }
            !current
        };
        if stale {
            // Deleted while the file was written.
            self.shared.dir.remove(id).await?;
        }
        Ok(())
    }

    async fn get_segment(&self, id: ResourceId, index: u32) -> Result<Bytes, SpoolError> {
        {
            let state = self.open_state()?;
            match state.resources.get(&id).and_then(|e| e.segments.get(&index)) {
                None => return Err(SpoolError::NotFound(id)),
                Some(Slot::Memory(bytes)) => return Ok(bytes.clone()),
                Some(Slot::Disk(_)) => {}
            }
        }
        match tokio::fs::read(self.shared.dir.segment(id, index)).await {
            Ok(bytes) => Ok(Bytes::from(bytes)),
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound && !self.lock().resources.contains_key(&id) =>
            {
                Err(SpoolError::NotFound(id))
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn put_manifest(&self, manifest: &Manifest) -> Result<(), SpoolError> {
        let mut state = self.open_state()?;
        state.entry(manifest.id()).manifest = Some(manifest.clone());
        Ok(())
    }

    async fn get_manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError> {
        self.manifest_of(id, |entry| entry.manifest.as_ref())
    }

    /// Kept with the resource's segments; a resource with none (deleted meanwhile) keeps nothing.
    async fn put_partial_manifest(&self, manifest: &Manifest) -> Result<(), SpoolError> {
        let mut state = self.open_state()?;
        if let Some(entry) = state.resources.get_mut(&manifest.id()) {
            entry.partial = Some(manifest.clone());
        }
        Ok(())
    }

    async fn get_partial_manifest(&self, id: ResourceId) -> Result<Manifest, SpoolError> {
        self.manifest_of(id, |entry| entry.partial.as_ref())
    }

    async fn delete(&self, id: ResourceId) -> Result<(), SpoolError> {
        let spilled = self.open_state()?.remove(id);
        if spilled {
            self.shared.dir.remove(id).await?;
        }
        Ok(())
    }

    fn usage(&self) -> Option<SpoolUsage> {
        let state = self.lock();
        Some(SpoolUsage {
            memory_bytes: state.in_memory,
            memory_budget: self.shared.budget,
            disk_bytes: state.on_disk + state.reserved,
            max_bytes: self.shared.caps.max_bytes,
            min_free_bytes: self.shared.caps.min_free,
        })
    }

    async fn list(&self) -> Result<Vec<Spooled>, SpoolError> {
        let state = self.open_state()?;
        Ok(state
            .resources
            .iter()
            .map(|(id, entry)| Spooled {
                id: *id,
                finished: entry.manifest.is_some(),
            })
            .collect())
    }

    async fn close(&self) -> Result<(), SpoolError> {
        let ids: Vec<ResourceId> = {
            let mut state = self.lock();
            state.closed = true;
            let ids = state.resources.keys().copied().collect();
            state.release_all();
            *state = State {
                closed: true,
                // Writes in flight still take their reservations out.
                reserved: state.reserved,
                ..State::default()
            };
            ids
        };
        self.shared.dir.close(ids).await?;
        Ok(())
    }
}

impl Slot {
    /// Takes the slot's bytes out of the spool's metrics.
    fn release(&self) {
        match self {
            Self::Memory(bytes) => metrics::released(Tier::Memory, bytes.len() as u64),
            Self::Disk(len) => metrics::released(Tier::Disk, *len),
        }
    }
}

impl State {
    /// Takes every byte the spool holds out of the metrics (closed or dropped).
    fn release_all(&self) {
        metrics::released(Tier::Memory, self.in_memory);
        metrics::released(Tier::Disk, self.on_disk);
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let state = self
            .state
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.release_all();
    }
}
