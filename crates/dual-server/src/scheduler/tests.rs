use std::sync::Arc;
use std::time::Duration;

use super::*;

fn owner(name: &str) -> Owner {
    Some(Arc::from(name))
}

fn limits(foreground: usize, background: usize, queue: usize) -> SchedulerLimits {
    SchedulerLimits::default()
        .foreground_slots(foreground)
        .background_slots(background)
        .background_queue(queue)
}

/// Polls `future` once: its output when ready.
fn now_or_never<F: Future>(future: F) -> Option<F::Output> {
    futures_util::FutureExt::now_or_never(future)
}

#[tokio::test]
async fn work_past_the_slots_waits_and_gets_the_slot_given_back() {
    let scheduler = Scheduler::new(limits(1, 1, 8));
    let first = scheduler.slot(WorkClass::Background, &None).await;
    let mut second = Box::pin(scheduler.slot(WorkClass::Background, &None));
    assert!(now_or_never(second.as_mut()).is_none(), "the one slot is taken");
    assert_eq!(scheduler.load(WorkClass::Background), (1, 1));
    drop(first);
    let second = now_or_never(second.as_mut()).expect("the slot passed on");
    assert_eq!(scheduler.load(WorkClass::Background), (1, 0));
    drop(second);
    assert_eq!(scheduler.load(WorkClass::Background), (0, 0));
}

#[tokio::test]
async fn foreground_never_waits_for_background() {
    let scheduler = Scheduler::new(limits(2, 1, 8));
    let _running = scheduler.slot(WorkClass::Background, &None).await;
    let mut queued: Vec<_> = (0..5)
        .map(|_| Box::pin(scheduler.slot(WorkClass::Background, &None)))
        .collect();
    for waiter in &mut queued {
        assert!(now_or_never(waiter.as_mut()).is_none());
    }
    let a = now_or_never(scheduler.slot(WorkClass::Foreground, &None)).expect("foreground at once");
    let b = now_or_never(scheduler.slot(WorkClass::Foreground, &None)).expect("foreground at once");
    assert_eq!(scheduler.load(WorkClass::Foreground), (2, 0));
    drop((a, b));
    assert_eq!(scheduler.load(WorkClass::Background), (1, 5));
}

#[tokio::test]
async fn a_busy_owner_does_not_hold_back_the_others() {
    let scheduler = Scheduler::new(limits(1, 1, 64));
    let running = scheduler.slot(WorkClass::Background, &owner("busy")).await;
    let served = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tasks = tokio::task::JoinSet::new();
    let mut queue = |name: &'static str| {
        let (scheduler, served) = (Arc::clone(&scheduler), Arc::clone(&served));
        tasks.spawn(async move {
            let slot = scheduler.slot(WorkClass::Background, &owner(name)).await;
            served.lock().unwrap_or_else(PoisonError::into_inner).push(name);
            tokio::task::yield_now().await;
            drop(slot);
        });
    };
    for _ in 0..10 {
        queue("busy");
    }
    queue("quiet");
    // Every waiter queued before the slot is given back.
    while scheduler.load(WorkClass::Background).1 < 11 {
        tokio::task::yield_now().await;
    }
    drop(running);
    while tasks.join_next().await.is_some() {}
    let served = served.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let quiet = served.iter().position(|name| *name == "quiet");
    assert_eq!(
        quiet,
        Some(1),
        "the quiet owner's turn comes after one of the busy owner's: {served:?}"
    );
    assert_eq!(served.len(), 11);
}

#[tokio::test]
async fn a_waiter_that_goes_away_leaves_the_queue_and_loses_no_slot() {
    let scheduler = Scheduler::new(limits(1, 1, 8));
    let running = scheduler.slot(WorkClass::Background, &None).await;
    let mut gone = Box::pin(scheduler.slot(WorkClass::Background, &None));
    assert!(now_or_never(gone.as_mut()).is_none());
    let mut next = Box::pin(scheduler.slot(WorkClass::Background, &None));
    assert!(now_or_never(next.as_mut()).is_none());
    drop(gone);
    assert_eq!(scheduler.load(WorkClass::Background), (1, 1));
    drop(running);
    let next = now_or_never(next.as_mut()).expect("the remaining waiter got the slot");
    drop(next);
    assert_eq!(scheduler.load(WorkClass::Background), (0, 0));
}

#[tokio::test]
async fn a_slot_granted_to_a_waiter_that_is_dropped_before_it_looks_passes_on() {
    let scheduler = Scheduler::new(limits(1, 1, 8));
    let running = scheduler.slot(WorkClass::Background, &None).await;
    let mut granted_unseen = Box::pin(scheduler.slot(WorkClass::Background, &None));
    assert!(now_or_never(granted_unseen.as_mut()).is_none());
    let mut after = Box::pin(scheduler.slot(WorkClass::Background, &None));
    assert!(now_or_never(after.as_mut()).is_none());
    // The slot goes to the first waiter's channel, and that waiter is dropped without polling.
    drop(running);
    drop(granted_unseen);
    assert!(
        now_or_never(after.as_mut()).is_some(),
        "the slot reached the next waiter"
    );
}

#[tokio::test]
async fn a_full_background_queue_refuses_new_work_and_names_the_limit() {
    let scheduler = Scheduler::new(limits(1, 1, 2));
    let first = scheduler.reserve(owner("a")).expect("a place");
    let _second = scheduler.reserve(None).expect("a place");
    let Err(refused) = scheduler.reserve(owner("b")) else {
        panic!("a third place was given past background_queue = 2");
    };
    assert!(matches!(refused, ServerError::Overloaded(_)));
    assert!(refused.is_retryable());
    assert_eq!(refused.retry_after(), Some(SCHEDULER_RETRY_AFTER));
    let message = dual_core::error::Report::new(&refused).to_string();
    assert!(message.contains("background_queue = 2"), "{message}");
    drop(first);
    let again = scheduler.reserve(owner("b")).expect("a place was given back");
    let slot = tokio::time::timeout(Duration::from_secs(1), again.slot(WorkClass::Background))
        .await
        .expect("a free slot is given at once");
    drop(slot);
}
