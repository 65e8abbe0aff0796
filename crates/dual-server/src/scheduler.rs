//! One scheduler for the server's own query work (docs/DESIGN.md §8, "Scheduling").
//!
//! Work comes in two classes. **Foreground** is what a caller waits for: a tool call until it has its
//! sample and count. **Background** is what goes on after the caller was answered: the rest of a
//! snapshot, a recount of a result that went over the snapshot cap. Each class has its own slots
//! (work running at once) and its own queue, so foreground work never waits behind background work.
//! A queue is fair between owners: its waiters are served round-robin by owner (one owner's backlog
//! cannot hold what others wait for), in arrival order within an owner.
//!
//! A background place is **reserved** when `create_response` starts ([`Scheduler::reserve`]), before
//! the query runs, so the only refusal is at that moment (the retryable `OVERLOADED`, naming the
//! queue): a result already announced to the model always has its place and is never refused later.

mod budget;
mod fair;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::{ExecutorError, ServerError};
pub(crate) use budget::TimeBudget;
use fair::{FairQueue, WaiterId};

/// Default foreground slots: tool calls computing their sample and count at once.
pub const DEFAULT_FOREGROUND_SLOTS: usize = 8;
/// Default background slots: snapshots written (or results recounted) at once after their answer.
/// One, so that on a small machine a core stays for the foreground.
pub const DEFAULT_BACKGROUND_SLOTS: usize = 1;
/// Default most results waiting for (or holding) a background slot; a tool call past it is refused
/// with the retryable `OVERLOADED`.
pub const DEFAULT_BACKGROUND_QUEUE: usize = 256;
/// The longest a background writer gives way to foreground work before its next batch.
pub(crate) const GIVE_WAY: Duration = Duration::from_millis(250);
/// How long a refusal for a full queue asks the caller to wait before retrying.
pub const SCHEDULER_RETRY_AFTER: Duration = Duration::from_secs(5);

/// The scheduler's limits (see [`DualResponseServerBuilder::scheduler_limits`](crate::DualResponseServerBuilder::scheduler_limits)).
///
/// ```
/// let limits = dual_server::SchedulerLimits::default().background_slots(2);
/// assert_eq!(limits.background_slots, 2);
/// assert_eq!(limits.foreground_slots, dual_server::DEFAULT_FOREGROUND_SLOTS);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchedulerLimits {
    /// Foreground work running at once ([`DEFAULT_FOREGROUND_SLOTS`]); more waits its turn, fairly by
    /// owner, under the query time limit.
    pub foreground_slots: usize,
    /// Background work running at once ([`DEFAULT_BACKGROUND_SLOTS`]); more waits its turn, fairly by
    /// owner. A waiting snapshot keeps its database snapshot and reads no further rows.
    pub background_slots: usize,
    /// Most results holding a background place, running or waiting ([`DEFAULT_BACKGROUND_QUEUE`]).
    pub background_queue: usize,
}

impl Default for SchedulerLimits {
    fn default() -> Self {
        Self {
            foreground_slots: DEFAULT_FOREGROUND_SLOTS,
            background_slots: DEFAULT_BACKGROUND_SLOTS,
            background_queue: DEFAULT_BACKGROUND_QUEUE,
        }
    }
}

impl SchedulerLimits {
    /// Sets [`SchedulerLimits::foreground_slots`].
    #[must_use]
    pub fn foreground_slots(mut self, slots: usize) -> Self {
        self.foreground_slots = slots;
        self
    }

    /// Sets [`SchedulerLimits::background_slots`].
    #[must_use]
    pub fn background_slots(mut self, slots: usize) -> Self {
        self.background_slots = slots;
        self
    }

    /// Sets [`SchedulerLimits::background_queue`].
    #[must_use]
    pub fn background_queue(mut self, places: usize) -> Self {
        self.background_queue = places;
        self
    }
}

/// The class of a piece of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WorkClass {
    /// A caller waits for it.
    Foreground,
    /// The caller was answered; it finishes what was announced.
    Background,
}

impl WorkClass {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Foreground => "foreground",
            Self::Background => "background",
        }
    }
}

/// An owner as the scheduler sees it: the authenticated principal, or `None` for every anonymous
/// caller together.
pub(crate) type Owner = Option<Arc<str>>;

/// The two classes' slots and queues.
#[derive(Debug)]
pub(crate) struct Scheduler {
    foreground: Class,
    background: Class,
    background_places: usize,
    /// Notified whenever the last foreground slot is given back.
    foreground_idle: tokio::sync::Notify,
}

impl Scheduler {
    pub(crate) fn new(limits: SchedulerLimits) -> Arc<Self> {
        Arc::new(Self {
            foreground: Class::new(limits.foreground_slots),
            background: Class::new(limits.background_slots),
            background_places: limits.background_queue,
            foreground_idle: tokio::sync::Notify::new(),
        })
    }

    fn class(&self, class: WorkClass) -> &Class {
        match class {
            WorkClass::Foreground => &self.foreground,
            WorkClass::Background => &self.background,
        }
    }

    /// Reserves a background place for the work of `owner` about to start: refused (the retryable
    /// `OVERLOADED`, naming the queue) when every place is held.
    pub(crate) fn reserve(self: &Arc<Self>, owner: Owner) -> Result<Reservation, ServerError> {
        {
            let mut state = self.background.lock();
            if state.reserved >= self.background_places {
                drop(state);
                crate::metrics::scheduler_refused(WorkClass::Background.as_str(), owner.is_some());
                return Err(ServerError::Overloaded(ExecutorError::overloaded(
                    format!(
                        "the server is busy: {} results are waiting to be written (the background queue, \
                         background_queue = {}); retry in {} s",
                        self.background_places,
                        self.background_places,
                        SCHEDULER_RETRY_AFTER.as_secs()
                    ),
                    SCHEDULER_RETRY_AFTER,
                )));
            }
            state.reserved += 1;
        }
        crate::metrics::scheduler_places(self.background.lock().reserved);
        Ok(Reservation {
            scheduler: Arc::clone(self),
            owner,
        })
    }

    /// A slot of `class` for `owner`: at once when one is free and nobody waits, else in turn.
    pub(crate) async fn slot(self: &Arc<Self>, class: WorkClass, owner: &Owner) -> Slot {
        let queued_at = Instant::now();
        let receiver = {
            let mut state = self.class(class).lock();
            if state.running < self.class(class).slots && state.waiting.is_empty() {
                state.running += 1;
                drop(state);
                crate::metrics::scheduler_admitted(class.as_str(), owner.is_some(), Duration::ZERO, false);
                return self.granted(class);
            }
            let (sender, receiver) = oneshot::channel();
            let id = state.waiting.push(owner.clone(), sender);
            crate::metrics::scheduler_queue(class.as_str(), state.waiting.len());
            (id, receiver)
        };
        let (id, receiver) = receiver;
        let mut waiter = Waiter {
            scheduler: self,
            class,
            id: Some(id),
        };
        // The sender is only dropped after a grant (which sends) or by `Waiter::drop`, which is this
        // future's own: the receiver always gets a slot.
        let slot = receiver.await;
        waiter.id = None;
        crate::metrics::scheduler_admitted(class.as_str(), owner.is_some(), queued_at.elapsed(), true);
        match slot {
            Ok(slot) => slot,
            // Unreachable by the invariant above; a slot of its own keeps the books right anyway.
            Err(_) => self.granted_after_loss(class),
        }
    }

    fn granted(self: &Arc<Self>, class: WorkClass) -> Slot {
        crate::metrics::scheduler_running(class.as_str(), self.class(class).lock().running);
        Slot {
            scheduler: Arc::clone(self),
            class,
            since: Instant::now(),
        }
    }

    fn granted_after_loss(self: &Arc<Self>, class: WorkClass) -> Slot {
        self.class(class).lock().running += 1;
        self.granted(class)
    }

    /// Gives back a slot of `class`: the next waiter in fair order gets it.
    fn release(self: &Arc<Self>, class: WorkClass) {
        let next = {
            let mut state = self.class(class).lock();
            let next = state.waiting.pop().map(|(_owner, sender)| sender);
            if next.is_none() {
                state.running = state.running.saturating_sub(1);
            }
            crate::metrics::scheduler_queue(class.as_str(), state.waiting.len());
            crate::metrics::scheduler_running(class.as_str(), state.running);
            next
        };
        if class == WorkClass::Foreground && self.foreground.lock().running == 0 {
            self.foreground_idle.notify_waiters();
        }
        if let Some(sender) = next {
            // The slot passes on without `running` changing. A waiter that went away between its
            // pop and now hands the slot back: its drop releases it again, to the next waiter.
            let _ = sender.send(Slot {
                scheduler: Arc::clone(self),
                class,
                since: Instant::now(),
            });
        }
    }

    /// Work of `class` running and waiting now (for tests and the metrics).
    #[cfg(test)]
    pub(crate) fn load(&self, class: WorkClass) -> (usize, usize) {
        let state = self.class(class).lock();
        (state.running, state.waiting.len())
    }
}

impl Scheduler {
    /// Whether foreground work runs now.
    fn foreground_busy(&self) -> bool {
        self.foreground.lock().running > 0
    }

    /// Waits until no foreground work runs, at most `at_most`.
    async fn foreground_idle(&self, at_most: Duration) {
        let idle = async {
            loop {
                let notified = self.foreground_idle.notified();
                tokio::pin!(notified);
                // Registered before the count is read: a release in between still wakes it.
                notified.as_mut().enable();
                if !self.foreground_busy() {
                    return;
                }
                notified.await;
            }
        };
        let _ = tokio::time::timeout(at_most, idle).await;
    }
}

/// One class: its slots, what runs, who waits.
#[derive(Debug)]
struct Class {
    slots: usize,
    /// A std mutex: every critical section is a few counter and queue operations, never across an
    /// `.await`.
    state: Mutex<ClassState>,
}

#[derive(Debug, Default)]
struct ClassState {
    running: usize,
    waiting: FairQueue<oneshot::Sender<Slot>>,
    /// Background places reserved (running, waiting, or still in the foreground).
    reserved: usize,
}

impl Class {
    fn new(slots: usize) -> Self {
        Self {
            slots: slots.max(1),
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ClassState> {
        // Every update leaves the state consistent before the next one starts.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A waiter in a class's queue; removed from it when its future is dropped before its turn.
struct Waiter<'a> {
    scheduler: &'a Arc<Scheduler>,
    class: WorkClass,
    id: Option<WaiterId>,
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let class = self.scheduler.class(self.class);
            let mut state = class.lock();
            if state.waiting.remove(id) {
                crate::metrics::scheduler_queue(self.class.as_str(), state.waiting.len());
            } else {
                // Granted meanwhile: the slot sits in the channel and is dropped with it, which
                // releases it.
            }
        }
    }
}

/// A running slot of one class; the next waiter gets it when this is dropped.
#[derive(Debug)]
#[must_use = "the slot is given back when dropped"]
pub(crate) struct Slot {
    scheduler: Arc<Scheduler>,
    class: WorkClass,
    since: Instant,
}

impl Drop for Slot {
    fn drop(&mut self) {
        crate::metrics::scheduler_ran(self.class.as_str(), self.since.elapsed());
        self.scheduler.release(self.class);
    }
}

/// A background place held from the start of a `create_response` to the end of its work.
#[derive(Debug)]
#[must_use = "the place is given back when dropped"]
pub(crate) struct Reservation {
    scheduler: Arc<Scheduler>,
    owner: Owner,
}

impl Reservation {
    /// A slot of `class` for this reservation's owner.
    pub(crate) async fn slot(&self, class: WorkClass) -> Slot {
        self.scheduler.slot(class, &self.owner).await
    }

    /// Where this reservation's work takes its slots, for the task that does the work.
    pub(crate) fn slots(&self) -> Slots {
        Slots {
            scheduler: Arc::clone(&self.scheduler),
            owner: self.owner.clone(),
        }
    }
}

/// Where one owner's work takes its slots (a snapshot writer keeps one).
#[derive(Debug, Clone)]
pub(crate) struct Slots {
    scheduler: Arc<Scheduler>,
    owner: Owner,
}

impl Slots {
    /// A slot of `class` for the owner.
    pub(crate) async fn slot(&self, class: WorkClass) -> Slot {
        self.scheduler.slot(class, &self.owner).await
    }

    /// Whether foreground work runs now: background work gives way to it.
    pub(crate) fn foreground_busy(&self) -> bool {
        self.scheduler.foreground_busy()
    }

    /// Waits until no foreground work runs, at most `at_most` (so that background work always
    /// progresses, if slowly).
    pub(crate) async fn foreground_idle(&self, at_most: Duration) {
        self.scheduler.foreground_idle(at_most).await;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let reserved = {
            let mut state = self.scheduler.background.lock();
            state.reserved = state.reserved.saturating_sub(1);
            state.reserved
        };
        crate::metrics::scheduler_places(reserved);
    }
}

#[cfg(test)]
mod tests;
