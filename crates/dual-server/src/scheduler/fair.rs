//! A queue fair between owners: waiters are served round-robin by owner, in arrival order within an
//! owner, so one owner's backlog delays each other owner by at most one turn per waiter ahead.

use std::collections::{HashMap, VecDeque};

use super::Owner;

/// Identifies one waiter, to take it out of the queue when it goes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WaiterId(u64);

/// Waiters grouped by owner, owners in the order they take turns.
#[derive(Debug)]
pub(super) struct FairQueue<T> {
    /// Each owner with waiters, and its waiters oldest first.
    by_owner: HashMap<Owner, VecDeque<(WaiterId, T)>>,
    /// Owners with waiters; the front one is served next.
    turns: VecDeque<Owner>,
    next_id: u64,
    len: usize,
}

impl<T> Default for FairQueue<T> {
    fn default() -> Self {
        Self {
            by_owner: HashMap::new(),
            turns: VecDeque::new(),
            next_id: 0,
            len: 0,
        }
    }
}

impl<T> FairQueue<T> {
    /// Waiters in the queue.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues `item` for `owner`, after the owner's earlier waiters; a new owner takes its turn after
    /// the owners already waiting.
    pub(super) fn push(&mut self, owner: Owner, item: T) -> WaiterId {
        let id = WaiterId(self.next_id);
        self.next_id += 1;
        let waiters = self.by_owner.entry(owner.clone()).or_default();
        if waiters.is_empty() {
            self.turns.push_back(owner);
        }
        waiters.push_back((id, item));
        self.len += 1;
        id
    }

    /// The next waiter in fair order: the oldest of the owner whose turn it is; that owner then goes
    /// to the back of the turns.
    pub(super) fn pop(&mut self) -> Option<(Owner, T)> {
        let owner = self.turns.pop_front()?;
        let waiters = self.by_owner.get_mut(&owner)?;
        let (_, item) = waiters.pop_front()?;
        if waiters.is_empty() {
            self.by_owner.remove(&owner);
        } else {
            self.turns.push_back(owner.clone());
        }
        self.len -= 1;
        Some((owner, item))
    }

    /// Takes waiter `id` out of the queue: whether it was still there.
    pub(super) fn remove(&mut self, id: WaiterId) -> bool {
        let found = self.by_owner.iter_mut().find_map(|(owner, waiters)| {
            let at = waiters.iter().position(|(waiter, _)| *waiter == id)?;
            waiters.remove(at);
            Some((owner.clone(), waiters.is_empty()))
        });
        let Some((owner, emptied)) = found else {
            return false;
        };
        if emptied {
            self.by_owner.remove(&owner);
            self.turns.retain(|turn| *turn != owner);
        }
        self.len -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn owner(name: &str) -> Owner {
        Some(Arc::from(name))
    }

    #[test]
    fn owners_take_turns_and_each_keeps_its_order() {
        let mut queue = FairQueue::default();
        for i in 0..4 {
            queue.push(owner("busy"), format!("busy {i}"));
        }
        queue.push(owner("other"), "other 0".to_owned());
        queue.push(None, "anonymous 0".to_owned());
        queue.push(owner("other"), "other 1".to_owned());
        let order: Vec<String> = std::iter::from_fn(|| queue.pop().map(|(_, item)| item)).collect();
        assert_eq!(
            order,
            [
                "busy 0",
                "other 0",
                "anonymous 0",
                "busy 1",
                "other 1",
                "busy 2",
                "busy 3"
            ]
        );
        assert!(queue.is_empty());
    }

    #[test]
    fn a_removed_waiter_is_skipped_and_its_owner_loses_its_turn_when_it_was_the_last() {
        let mut queue = FairQueue::default();
        let gone = queue.push(owner("a"), 1);
        queue.push(owner("b"), 2);
        let b_later = queue.push(owner("b"), 3);
        assert_eq!(queue.len(), 3);
        assert!(queue.remove(gone));
        assert!(!queue.remove(gone), "removed twice");
        assert_eq!(queue.pop(), Some((owner("b"), 2)));
        assert!(queue.remove(b_later));
        assert_eq!(queue.pop(), None);
        assert_eq!(queue.len(), 0);
    }
}
