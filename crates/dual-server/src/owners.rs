//! Per-owner quotas: live bytes, live resources, running queries and pins of each owner, counted by
//! this instance (a ledger in memory; anonymous callers are one owner).
//!
//! The ledger counts what this instance created, ran and pinned. Several instances sharing a store
//! each keep their own, so N instances allow an owner up to N times each quota (docs/SECURITY.md).
//! An entry leaves at its resource's expiry (lazily, on the next check), when the resource is
//! deleted here, or when its creation fails; a resource deleted on another instance stays counted
//! here until it would have expired (a pinned one, until this instance restarts).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use dual_core::ResourceId;
use time::OffsetDateTime;

use crate::{Quota, ServerError};

/// Default cap on the snapshot bytes of one owner's live resources: 4 GiB.
pub const DEFAULT_OWNER_MAX_BYTES: u64 = 4 << 30;
/// Default cap on one owner's live resources: 10,000.
pub const DEFAULT_OWNER_MAX_RESOURCES: u64 = 10_000;
/// Default cap on one owner's queries running at once: 64.
pub const DEFAULT_OWNER_MAX_QUERIES: u64 = 64;
/// Default cap on one owner's pinned resources: 100.
pub const DEFAULT_OWNER_MAX_PINS: u64 = 100;

/// How many bytes a snapshot writer asks the ledger for at a time, so that it locks the ledger once
/// per this many bytes rather than once per row; what it does not use is given back.
const BYTES_CHUNK: u64 = 1 << 20;

/// The per-owner quotas (see [`DualResponseServerBuilder`](crate::DualResponseServerBuilder)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OwnerQuotas {
    /// Most snapshot bytes of one owner's live resources.
    pub max_bytes: u64,
    /// Most live resources of one owner.
    pub max_resources: u64,
    /// Most queries of one owner running at once (pending ones included).
    pub max_queries: u64,
    /// Most pinned resources of one owner.
    pub max_pins: u64,
    /// Whether anonymous callers may pin (as one owner, under `max_pins`).
    pub anonymous_pins: bool,
}

impl Default for OwnerQuotas {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_OWNER_MAX_BYTES,
            max_resources: DEFAULT_OWNER_MAX_RESOURCES,
            max_queries: DEFAULT_OWNER_MAX_QUERIES,
            max_pins: DEFAULT_OWNER_MAX_PINS,
            anonymous_pins: true,
        }
    }
}

/// An owner: the authenticated principal, or `None` for every anonymous caller together.
type Owner = Option<String>;

/// What one owner holds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Usage {
    bytes: u64,
    resources: u64,
    queries: u64,
    pins: u64,
}

impl Usage {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// One resource this instance counts.
#[derive(Debug)]
struct Held {
    owner: Owner,
    bytes: u64,
    expires_at: Option<OffsetDateTime>,
}

#[derive(Debug, Default)]
struct State {
    owners: HashMap<Owner, Usage>,
    resources: HashMap<ResourceId, Held>,
    /// The counted resources that expire, earliest first.
    expiries: BTreeSet<(OffsetDateTime, ResourceId)>,
    /// Pinned resources, by the owner who pinned them.
    pins: HashMap<ResourceId, Owner>,
}

/// The per-owner ledger of one server instance.
#[derive(Debug)]
pub(crate) struct OwnerLedger {
    quotas: OwnerQuotas,
    /// A std mutex: every critical section is a few map operations, never across an `.await`.
    state: Mutex<State>,
}

impl OwnerLedger {
    pub(crate) fn new(quotas: OwnerQuotas) -> Self {
        Self {
            quotas,
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update leaves the maps consistent before the next one starts.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Admits the creation of resource `id` for `owner`: refused when the owner runs its most
    /// queries, holds its most resources (those being created included) or its most bytes.
    /// Counts the resource and the query from now on.
    pub(crate) fn admit(
        self: &Arc<Self>,
        owner: Option<&str>,
        id: ResourceId,
        expires_at: Option<OffsetDateTime>,
        now: OffsetDateTime,
    ) -> Result<(Admission, QuerySlot), ServerError> {
        let owner: Owner = owner.map(str::to_owned);
        let mut state = self.lock();
        state.prune(now);
        let usage = state.owners.get(&owner).copied().unwrap_or_default();
        let quotas = self.quotas;
        let refused = if usage.queries >= quotas.max_queries {
            Some((Quota::OwnerQueries, quotas.max_queries))
        } else if usage.resources >= quotas.max_resources {
            Some((Quota::OwnerResources, quotas.max_resources))
        } else if usage.bytes >= quotas.max_bytes {
            Some((Quota::OwnerBytes, quotas.max_bytes))
        } else {
            None
        };
        if let Some((quota, limit)) = refused {
            tracing::info!(%quota, limit, anonymous = owner.is_none(), "owner quota reached: creation refused");
            return Err(ServerError::QuotaExceeded { quota, limit });
        }
        let usage = state.owners.entry(owner.clone()).or_default();
        usage.resources += 1;
        usage.queries += 1;
        state.resources.insert(
            id,
            Held {
                owner: owner.clone(),
                bytes: 0,
                expires_at,
            },
        );
        if let Some(at) = expires_at {
            state.expiries.insert((at, id));
        }
        Ok((
            Admission {
                ledger: Arc::clone(self),
                id,
                kept: false,
            },
            QuerySlot {
                ledger: Arc::clone(self),
                owner,
            },
        ))
    }

    /// A meter of the snapshot bytes of resource `id`, charged to its owner.
    pub(crate) fn meter(self: &Arc<Self>, id: ResourceId) -> BytesMeter {
        BytesMeter {
            ledger: Arc::clone(self),
            id,
            granted: 0,
        }
    }

    /// Grants up to `wanted` (at least `needed`) more bytes to resource `id`'s owner; how many.
    fn grant(&self, id: ResourceId, needed: u64, wanted: u64) -> Result<u64, ServerError> {
        let max = self.quotas.max_bytes;
        let mut state = self.lock();
        let State {
            owners, resources, ..
        } = &mut *state;
        // Forgotten meanwhile (deleted, failed): nothing to charge, the writer is about to stop.
        let Some(held) = resources.get_mut(&id) else {
            return Ok(wanted);
        };
        let usage = owners.entry(held.owner.clone()).or_default();
        let room = max.saturating_sub(usage.bytes);
        if room < needed {
            tracing::info!(%id, limit = max, anonymous = held.owner.is_none(), "owner byte quota reached: snapshot refused");
            return Err(ServerError::QuotaExceeded {
                quota: Quota::OwnerBytes,
                limit: max,
            });
        }
        let granted = wanted.min(room).max(needed);
        usage.bytes += granted;
        held.bytes += granted;
        Ok(granted)
    }

    /// Gives back `bytes` granted to resource `id` and not used.
    fn give_back(&self, id: ResourceId, bytes: u64) {
        let mut state = self.lock();
        let State {
            owners, resources, ..
        } = &mut *state;
        if let Some(held) = resources.get_mut(&id) {
            let bytes = bytes.min(held.bytes);
            held.bytes -= bytes;
            if let Some(usage) = owners.get_mut(&held.owner) {
                usage.bytes = usage.bytes.saturating_sub(bytes);
            }
        }
    }

    /// The snapshot of `id` is gone (a failed query, over the snapshot cap): its bytes no longer
    /// count, the resource still does.
    pub(crate) fn release_bytes(&self, id: ResourceId) {
        let bytes = self.lock().resources.get(&id).map_or(0, |held| held.bytes);
        self.give_back(id, bytes);
    }

    /// Resource `id` is gone (deleted, or its creation failed): nothing of it counts any more.
    pub(crate) fn forget(&self, id: ResourceId) {
        let mut state = self.lock();
        state.remove(id);
        if let Some(owner) = state.pins.remove(&id) {
            state.usage_of(&owner, |usage| usage.pins = usage.pins.saturating_sub(1));
        }
    }

    /// Refuses to pin `id` for `owner` when anonymous pins are off, or the owner holds its most
    /// pins; a resource pinned already is fine (pinning is idempotent).
    pub(crate) fn check_pin(&self, owner: Option<&str>, id: ResourceId) -> Result<(), ServerError> {
        let refused = |limit| {
            tracing::info!(%id, limit, anonymous = owner.is_none(), "owner pin quota reached: pin refused");
            Err(ServerError::QuotaExceeded {
                quota: Quota::OwnerPins,
                limit,
            })
        };
        if owner.is_none() && !self.quotas.anonymous_pins {
            return refused(0);
        }
        let state = self.lock();
        if state.pins.contains_key(&id) {
            return Ok(());
        }
        let key: Owner = owner.map(str::to_owned);
        let pins = state.owners.get(&key).map_or(0, |usage| usage.pins);
        if pins >= self.quotas.max_pins {
            return refused(self.quotas.max_pins);
        }
        Ok(())
    }

    /// `owner` pinned `id`: one more pin, and the resource no longer expires.
    pub(crate) fn pinned(&self, owner: Option<&str>, id: ResourceId) {
        let mut state = self.lock();
        let owner: Owner = owner.map(str::to_owned);
        if state.pins.insert(id, owner.clone()).is_none() {
            state.owners.entry(owner).or_default().pins += 1;
        }
        if let Some(at) = state
            .resources
            .get_mut(&id)
            .and_then(|held| held.expires_at.take())
        {
            state.expiries.remove(&(at, id));
        }
    }
}

impl State {
    /// Forgets the counted resources expired at `now`.
    fn prune(&mut self, now: OffsetDateTime) {
        while let Some(&(at, id)) = self.expiries.first() {
            if at > now {
                break;
            }
            self.expiries.pop_first();
            self.remove(id);
        }
    }

    /// Takes resource `id` out of the counts.
    fn remove(&mut self, id: ResourceId) {
        let Some(held) = self.resources.remove(&id) else {
            return;
        };
        if let Some(at) = held.expires_at {
            self.expiries.remove(&(at, id));
        }
        self.usage_of(&held.owner, |usage| {
            usage.resources = usage.resources.saturating_sub(1);
            usage.bytes = usage.bytes.saturating_sub(held.bytes);
        });
    }

    /// Changes `owner`'s usage, dropping an owner that holds nothing any more.
    fn usage_of(&mut self, owner: &Owner, change: impl FnOnce(&mut Usage)) {
        if let Some(usage) = self.owners.get_mut(owner) {
            change(usage);
            if usage.is_empty() {
                self.owners.remove(owner);
            }
        }
    }
}

/// A resource being created, counted against its owner's quotas: forgotten when dropped unless
/// [`keep`](Self::keep) says its record was saved.
#[derive(Debug)]
pub(crate) struct Admission {
    ledger: Arc<OwnerLedger>,
    id: ResourceId,
    kept: bool,
}

impl Admission {
    /// The record is saved: the resource counts until it expires or is deleted.
    pub(crate) fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        if !self.kept {
            self.ledger.forget(self.id);
        }
    }
}

/// A query of an owner running: counted until dropped (the query ended, failed or was cancelled).
#[derive(Debug)]
pub(crate) struct QuerySlot {
    ledger: Arc<OwnerLedger>,
    owner: Owner,
}

impl Drop for QuerySlot {
    fn drop(&mut self) {
        let mut state = self.ledger.lock();
        state.usage_of(&self.owner, |usage| {
            usage.queries = usage.queries.saturating_sub(1)
        });
    }
}

/// What a snapshot writer holds for its owner: the running query's slot and the bytes meter.
#[derive(Debug)]
pub(crate) struct SnapshotCharge {
    /// Dropped when the writer ends.
    pub(crate) slot: QuerySlot,
    /// Charges each row's bytes.
    pub(crate) meter: BytesMeter,
}

/// Charges the bytes of a snapshot being written to its owner, a chunk at a time; what it was
/// granted and did not use is given back when it is dropped.
#[derive(Debug)]
pub(crate) struct BytesMeter {
    ledger: Arc<OwnerLedger>,
    id: ResourceId,
    /// Granted and not used yet.
    granted: u64,
}

impl BytesMeter {
    /// Charges `bytes` more.
    ///
    /// # Errors
    /// `QUOTA_EXCEEDED` (`owner_bytes`) when the owner has no room for them.
    pub(crate) fn charge(&mut self, bytes: u64) -> Result<(), ServerError> {
        if self.granted < bytes {
            let needed = bytes - self.granted;
            self.granted += self.ledger.grant(self.id, needed, needed.max(BYTES_CHUNK))?;
        }
        self.granted -= bytes;
        Ok(())
    }
}

impl BytesMeter {
    /// The snapshot was dropped (over the snapshot cap): none of its bytes count any more.
    pub(crate) fn release_all(mut self) {
        self.granted = 0;
        self.ledger.release_bytes(self.id);
    }
}

impl Drop for BytesMeter {
    fn drop(&mut self) {
        if self.granted > 0 {
            self.ledger.give_back(self.id, self.granted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quotas() -> OwnerQuotas {
        OwnerQuotas {
            max_bytes: 3 << 20,
            max_resources: 3,
            max_queries: 2,
            max_pins: 1,
            anonymous_pins: true,
        }
    }

    fn quota_of(result: Result<impl std::fmt::Debug, ServerError>) -> (Quota, u64) {
        match result {
            Err(ServerError::QuotaExceeded { quota, limit }) => (quota, limit),
            other => panic!("expected a quota error, got {other:?}"),
        }
    }

    #[test]
    fn queries_resources_and_bytes_are_counted_per_owner_and_freed() {
        let ledger = Arc::new(OwnerLedger::new(quotas()));
        let now = OffsetDateTime::UNIX_EPOCH;
        let later = Some(now + time::Duration::minutes(15));
        // A new resource of alice's, expiring in 15 minutes.
        let alice = || ledger.admit(Some("alice"), ResourceId::new(), later, now);
        let (a, slot_a) = alice().unwrap();
        let (b, slot_b) = alice().unwrap();
        assert_eq!(quota_of(alice()), (Quota::OwnerQueries, 2));
        // Another owner, and anonymous callers, are counted apart.
        let (c, slot_c) = ledger.admit(None, ResourceId::new(), later, now).unwrap();
        drop((slot_a, slot_b, slot_c));
        a.keep();
        b.keep();
        c.keep();
        let (d, slot_d) = alice().unwrap();
        assert_eq!(quota_of(alice()), (Quota::OwnerResources, 3));
        drop((d, slot_d));
        let (e, slot_e) = alice().unwrap();
        drop(slot_e);
        let mut meter = ledger.meter(e.id);
        meter.charge(2 << 20).unwrap();
        assert_eq!(quota_of(meter.charge(2 << 20)), (Quota::OwnerBytes, 3 << 20));
        meter.charge(1 << 20).unwrap();
        drop(meter);
        e.keep();
        // At the byte quota, a new creation is refused before it runs; after expiry it is free.
        assert_eq!(quota_of(alice()), (Quota::OwnerResources, 3));
        let expired = now + time::Duration::minutes(16);
        assert!(
            ledger
                .admit(Some("alice"), ResourceId::new(), later, expired)
                .is_ok()
        );
        assert!(
            ledger
                .lock()
                .owners
                .get(&Some("alice".to_owned()))
                .is_none_or(|u| u.bytes == 0)
        );
    }

    #[test]
    fn unused_bytes_are_given_back_and_a_forgotten_resource_frees_everything() {
        let ledger = Arc::new(OwnerLedger::new(quotas()));
        let now = OffsetDateTime::UNIX_EPOCH;
        let id = ResourceId::new();
        let (admission, slot) = ledger.admit(None, id, None, now).unwrap();
        let mut meter = ledger.meter(id);
        meter.charge(10).unwrap();
        drop(meter);
        assert_eq!(
            ledger.lock().owners[&None].bytes,
            10,
            "the chunk's rest came back"
        );
        drop(slot);
        drop(admission);
        assert!(
            ledger.lock().owners.is_empty(),
            "a failed creation leaves nothing"
        );
    }

    #[test]
    fn pins_are_counted_per_owner_and_anonymous_ones_can_be_off() {
        let ledger = OwnerLedger::new(quotas());
        let (first, second) = (ResourceId::new(), ResourceId::new());
        ledger.check_pin(None, first).unwrap();
        ledger.pinned(None, first);
        ledger
            .check_pin(None, first)
            .expect("pinning again is idempotent");
        assert_eq!(quota_of(ledger.check_pin(None, second)), (Quota::OwnerPins, 1));
        ledger.check_pin(Some("bob"), second).expect("another owner");
        ledger.forget(first);
        ledger.check_pin(None, second).expect("room after a delete");

        let off = OwnerLedger::new(OwnerQuotas {
            anonymous_pins: false,
            ..quotas()
        });
        assert_eq!(quota_of(off.check_pin(None, first)), (Quota::OwnerPins, 0));
        off.check_pin(Some("bob"), first)
            .expect("authenticated owners may pin");
    }
}
