//! The working-memory budget of the sorted orders being derived: each derivation reserves the
//! memory of its keys before it allocates it, and gives it back when it ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A byte budget shared by every derivation of one server.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    max: u64,
    used: AtomicU64,
}

/// Why a reservation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BudgetError {
    /// This derivation alone would need more than the whole budget: it can never fit.
    Alone {
        /// The budget.
        max: u64,
    },
    /// Other derivations hold the room it needs: it may fit later.
    Busy {
        /// The budget.
        max: u64,
    },
}

impl MemoryBudget {
    pub(crate) fn new(max: u64) -> Arc<Self> {
        Arc::new(Self {
            max,
            used: AtomicU64::new(0),
        })
    }

    /// Bytes reserved right now, by every derivation.
    #[cfg(test)]
    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }

    /// An empty reservation, grown with [`Reservation::grow`].
    pub(crate) fn reservation(self: &Arc<Self>) -> Reservation {
        Reservation {
            budget: Arc::clone(self),
            bytes: 0,
        }
    }
}

/// Bytes one derivation holds of the budget; given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    budget: Arc<MemoryBudget>,
    bytes: u64,
}

impl Reservation {
    /// Bytes held.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Holds `more` bytes more, or nothing more when the budget has no room for them.
    pub(crate) fn grow(&mut self, more: u64) -> Result<(), BudgetError> {
        let max = self.budget.max;
        if self.bytes.saturating_add(more) > max {
            return Err(BudgetError::Alone { max });
        }
        self.budget
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(more).filter(|total| *total <= max)
            })
            .map_err(|_| BudgetError::Busy { max })?;
        self.bytes += more;
        Ok(())
    }

    /// Holds at least `total` bytes in all.
    pub(crate) fn cover(&mut self, total: u64) -> Result<(), BudgetError> {
        match total.checked_sub(self.bytes) {
            Some(more) if more > 0 => self.grow(more),
            _ => Ok(()),
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_share_the_budget_and_give_it_back() {
        let budget = MemoryBudget::new(100);
        let mut a = budget.reservation();
        a.grow(60).expect("fits");
        let mut b = budget.reservation();
        assert_eq!(b.grow(50), Err(BudgetError::Busy { max: 100 }));
        assert_eq!(b.bytes(), 0, "a refused growth holds nothing");
        assert_eq!(b.grow(101), Err(BudgetError::Alone { max: 100 }));
        b.grow(40).expect("fits exactly");
        assert_eq!(budget.used(), 100);
        drop(a);
        assert_eq!(budget.used(), 40);
        b.cover(30).expect("already covered");
        b.cover(90).expect("grows by 50");
        assert_eq!((b.bytes(), budget.used()), (90, 90));
        drop(b);
        assert_eq!(budget.used(), 0);
    }
}
