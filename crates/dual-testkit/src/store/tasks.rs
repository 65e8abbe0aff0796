//! Cases: tasks are kept whole, renewed without losing a cancellation, and forgotten at expiry.

use dual_core::ResourceId;
use dual_core::task::{TaskId, TaskRecord, TaskState};
use serde_json::json;
use time::Duration;

use super::support::{OrPanic, base_now, with_micros};
use dual_store::ResourceStore;

fn task_id(seed: u8) -> TaskId {
    let mut bytes = [seed; 16];
    bytes[0] = rand_byte();
    TaskId::from_bytes(bytes)
}

/// A byte that differs between runs, so a shared backend's leftovers never collide.
fn rand_byte() -> u8 {
    ResourceId::new().as_ulid().random().to_le_bytes()[0]
}

/// A task round-trips every field (an owner in any script, a result of any JSON shape, microsecond
/// times); `update_task` overwrites only the running instance's part and answers the stored
/// cancellation; `cancel_task` sets it and answers the task; both answer `None` for an unknown or
/// expired task; `get_task` answers `None` at and after `expires_at`.
pub async fn tasks_round_trip_renew_and_cancel(store: &dyn ResourceStore) {
    let now = with_micros(base_now(), 123_456);
    let mut task = TaskRecord::new(
        task_id(1),
        Some("名前 tenant".to_owned()),
        now,
        Duration::minutes(10),
        Duration::seconds(10),
    );
    task.status_message = Some("running the query".to_owned());
    store.save_task(&task).await.or_panic("save_task");
    assert_eq!(
        store.get_task(task.id, now).await.or_panic("get_task"),
        Some(task.clone())
    );
    assert_eq!(
        store.get_task(task_id(2), now).await.or_panic("get_task"),
        None,
        "an unknown task"
    );

    // The running instance renews it: its part changes, the owner and creation time do not.
    let mut renewed = task.clone();
    renewed.owner = Some("someone else".to_owned());
    renewed.created_at = now + Duration::seconds(3);
    renewed.resource = Some(ResourceId::new());
    renewed.rows_so_far = u64::MAX;
    renewed.status_message = Some("1200 rows so far".to_owned());
    renewed.updated_at = with_micros(now + Duration::seconds(2), 7);
    renewed.lease_expires_at = Some(now + Duration::seconds(12));
    renewed.cancel_requested = true;
    let cancelled = store.update_task(&renewed, now).await.or_panic("update_task");
    assert_eq!(cancelled, Some(false), "nobody asked to cancel it");
    let mut want = renewed.clone();
    want.owner.clone_from(&task.owner);
    want.created_at = task.created_at;
    want.cancel_requested = false;
    assert_eq!(
        store.get_task(task.id, now).await.or_panic("get_task"),
        Some(want.clone())
    );

    // Another instance cancels it; the next renewal learns of it and does not undo it.
    let marked = store.cancel_task(task.id, now).await.or_panic("cancel_task");
    want.cancel_requested = true;
    assert_eq!(marked, Some(want.clone()));
    let mut done = want.clone();
    done.state = TaskState::Cancelled;
    done.cancel_requested = false;
    done.lease_expires_at = None;
    done.result = Some(
        json!({"content": [{"type": "text", "text": "x\u{0}\"é"}], "n": 18_446_744_073_709_551_615_u64}),
    );
    assert_eq!(
        store.update_task(&done, now).await.or_panic("update_task"),
        Some(true)
    );
    let stored = store.get_task(task.id, now).await.or_panic("get_task");
    assert_eq!(
        stored.as_ref().map(|t| (t.state, t.cancel_requested)),
        Some((TaskState::Cancelled, true))
    );
    assert_eq!(stored.and_then(|t| t.result), done.result);

    // Expiry: found just before, gone at the instant, and neither renewed nor cancelled after.
    let expiry = task.expires_at;
    assert!(
        store
            .get_task(task.id, expiry - Duration::microseconds(1))
            .await
            .or_panic("get_task")
            .is_some()
    );
    assert_eq!(store.get_task(task.id, expiry).await.or_panic("get_task"), None);
    assert_eq!(
        store.update_task(&done, expiry).await.or_panic("update_task"),
        None
    );
    assert_eq!(
        store.cancel_task(task.id, expiry).await.or_panic("cancel_task"),
        None
    );
    let unknown = TaskRecord::new(task_id(3), None, now, Duration::minutes(1), Duration::seconds(1));
    assert_eq!(
        store.update_task(&unknown, now).await.or_panic("update_task"),
        None,
        "never saved"
    );
    assert_eq!(
        store.cancel_task(unknown.id, now).await.or_panic("cancel_task"),
        None
    );
    // An anonymous task keeps its missing owner.
    store.save_task(&unknown).await.or_panic("save_task");
    let anonymous = store.get_task(unknown.id, now).await.or_panic("get_task");
    assert_eq!(anonymous.map(|t| t.owner), Some(None));
}

/// An MCP session's state round-trips as text (any script, newlines), is replaced by a later
/// save, is gone at its `expires_at` and after a delete, and sessions never see each other.
pub async fn sessions_round_trip_expire_and_delete(store: &dyn ResourceStore) {
    let now = with_micros(base_now(), 250);
    let expires = now + Duration::minutes(10);
    let id = format!("session-{}", ResourceId::new());
    let other = format!("{id}-2");
    let state = "{\"protocolVersion\":\"2025-11-25\",\"clientInfo\":{\"name\":\"名前\\n x\"}}\nline two";
    let load = async |id: &str, at| store.load_session(id, at).await.or_panic("load_session");
    store
        .save_session(&id, state, expires)
        .await
        .or_panic("save_session");
    assert_eq!(load(&id, now).await.as_deref(), Some(state));
    assert_eq!(load(&other, now).await, None);
    store
        .save_session(&id, "replaced", expires)
        .await
        .or_panic("save_session");
    assert_eq!(load(&id, now).await.as_deref(), Some("replaced"));
    let before = expires - Duration::microseconds(1);
    assert!(load(&id, before).await.is_some());
    assert_eq!(load(&id, expires).await, None, "gone at expires_at");
    assert!(store.delete_session(&id).await.or_panic("delete_session"));
    assert!(
        !store.delete_session(&id).await.or_panic("delete_session"),
        "deleted once"
    );
    assert_eq!(load(&id, now).await, None);
}
