//! The embedded spool: segments in memory under a byte budget shared by all resources, spilling to
//! a local directory beyond it.

mod builder;
mod dir;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use bytes::Bytes;
use dual_core::ResourceId;

pub use builder::{DEFAULT_MEMORY_BUDGET, MemorySpoolBuilder};
use dir::SpillDir;

use crate::metrics::{self, Tier};
use crate::{Manifest, SpoolBackend, SpoolError, Spooled};

/// Segments in memory while their total size stays within a byte budget, and in files of a spill
/// directory beyond it (one file per segment). A segment that does not fit goes to disk whole; the
/// ones in memory stay there until their resource is deleted. Reading a spilled segment loads that
/// one file, so a reader holds one segment at a time.
///
/// A cheap `Clone` handle. The spill directory is by default a private temporary directory
/// (mode 0700) that [`close`](SpoolBackend::close) or dropping the last handle removes. One process
/// owns a spill directory: at start-up a given directory is cleared of the segment directories a
/// crashed process left behind (see [`MemorySpoolBuilder::dir`]).
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
    dir: SpillDir,
}

#[derive(Debug, Default)]
struct State {
    resources: HashMap<ResourceId, Entry>,
    in_memory: u64,
    on_disk: u64,
    next_generation: u64,
    closed: bool,
}

#[derive(Debug)]
struct Entry {
    /// Tells a re-created entry from the one a slow spill started for.
    generation: u64,
    segments: BTreeMap<u32, Slot>,
    manifest: Option<Manifest>,
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
        Ok(Self::from_parts(DEFAULT_MEMORY_BUDGET, dir))
    }

    fn from_parts(budget: u64, dir: SpillDir) -> Self {
        metrics::limit(Tier::Memory, budget);
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                budget,
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

    /// The state, or `Unavailable` once closed.
    fn open_state(&self) -> Result<MutexGuard<'_, State>, SpoolError> {
        let state = self.lock();
        if state.closed {
            return Err(SpoolError::unavailable("the memory spool is closed"));
        }
        Ok(state)
    }
}

impl State {
    fn entry(&mut self, id: ResourceId) -> &mut Entry {
        let generation = self.next_generation;
        let entry = self.resources.entry(id).or_insert_with(|| Entry {
            generation,
            segments: BTreeMap::new(),
            manifest: None,
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
            state.entry(id).generation
        };
        self.shared.dir.write(id, index, &segment).await?;
        let stale = {
            let mut state = self.lock();
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
        let state = self.open_state()?;
        state
            .resources
            .get(&id)
            .and_then(|e| e.manifest.clone())
            .ok_or(SpoolError::NotFound(id))
    }

    async fn delete(&self, id: ResourceId) -> Result<(), SpoolError> {
        let spilled = self.open_state()?.remove(id);
        if spilled {
            self.shared.dir.remove(id).await?;
        }
        Ok(())
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
