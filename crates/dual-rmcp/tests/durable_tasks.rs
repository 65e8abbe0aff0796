//! Durable tasks across instances: two servers sharing one store and one spool, as behind a load
//! balancer. A task started on A is read, and cancelled, on B; only its owner sees it; a task
//! whose instance died reads failed after its lease.

use std::sync::Arc;
use std::time::{Duration, Instant};

use dual_core::mcp::{ProtocolVersion, RenderOptions};
use dual_rmcp::DualTasks;
use dual_rmcp::tasks::SpawnOptions;
use dual_server::{Caller, CreateResponse, DualResponseServer, QueryExecutor};
use dual_testkit::executor::Numbers;
use dual_testkit::wait::until;
use rmcp::model::{ErrorCode, TaskStatus};
use serde_json::Value;

const KIND: &str = "numbers";
/// The servers' lease: a task not renewed for this long reads as failed.
const LEASE: Duration = Duration::from_millis(600);

/// Two instances over one store and one spool, running `executor`.
fn two_instances(executor: &Arc<Numbers>) -> (DualResponseServer, DualResponseServer) {
    dual_testkit::instances::two(|builder| {
        builder
            .shared_executor(KIND, Arc::clone(executor) as Arc<dyn QueryExecutor>)
            .pending_after(Duration::from_millis(30))
            .progress_interval(Duration::from_millis(100), LEASE)
    })
}

/// Starts a task of the caller `alice`, for a result she owns, on `tasks`: its id.
async fn alices_task(tasks: &DualTasks) -> String {
    let request = CreateResponse::new(KIND, Value::Null).owner("alice");
    let created = tasks
        .spawn(Caller::owner("alice"), request, &render(), None)
        .await
        .unwrap_or_else(|e| panic!("spawn: {e:?}"));
    created.task.task_id
}

fn render() -> SpawnOptions {
    SpawnOptions::new(RenderOptions::new(ProtocolVersion::V2025_11_25))
}

async fn status(tasks: &DualTasks, id: &str, caller: &Caller) -> TaskStatus {
    tasks
        .get_task(id, caller)
        .await
        .unwrap_or_else(|e| panic!("tasks/get: {e:?}"))
        .task
        .status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_started_on_one_instance_is_read_on_another_by_its_owner_only() {
    let executor = Arc::new(Numbers::new().steps([5, 10]));
    let (a, b) = two_instances(&executor);
    let (on_a, on_b) = (DualTasks::new(a), DualTasks::new(b.clone()));
    let alice = Caller::owner("alice");
    let id = alices_task(&on_a).await;
    assert_eq!(id.len(), 32, "128 random bits in hex: {id}");
    // Durable before the answer: B reads it at once.
    assert_eq!(status(&on_b, &id, &alice).await, TaskStatus::Working);

    // Nobody else reads, updates or cancels it, and they cannot tell it from an unknown id.
    for stranger in [Caller::owner("bob"), Caller::anonymous(), Caller::owner("alice2")] {
        for error in [
            on_b.get_task(&id, &stranger).await.err(),
            on_b.update_task(&id, &stranger).await.err(),
            on_b.cancel_task(&id, &stranger).await.err(),
        ] {
            let error = error.unwrap_or_else(|| panic!("{stranger:?} reached alice's task"));
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}");
            assert_eq!(error.message, format!("unknown task: {id}"));
        }
    }
    for bad in ["", "0123", &"zz".repeat(16), &"A".repeat(10_000)] {
        let error = on_b
            .get_task(bad, &alice)
            .await
            .err()
            .unwrap_or_else(|| panic!("{bad:?} found"));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(
            error.message.len() < 100,
            "the echo is cut: {}",
            error.message.len()
        );
    }

    executor.open();
    until("B sees the task completed", async || {
        status(&on_b, &id, &alice).await == TaskStatus::Completed
    })
    .await;
    let done = on_b
        .get_task(&id, &alice)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    let json = serde_json::to_value(&done).unwrap_or_default();
    assert_eq!(
        json["result"]["structuredContent"]["metadata"]["total_count"], 15,
        "{json}"
    );
    assert_eq!(json["result"]["isError"], false, "{json}");
    assert_eq!(json["pollIntervalMs"], 500);
    assert!(json["ttlMs"].as_u64().is_some_and(|ttl| ttl >= 60_000), "{json}");
    on_b.update_task(&id, &alice)
        .await
        .unwrap_or_else(|e| panic!("tasks/update: {e:?}"));
    // Cancelling a finished task keeps it as it ended.
    on_b.cancel_task(&id, &alice)
        .await
        .unwrap_or_else(|e| panic!("tasks/cancel: {e:?}"));
    assert_eq!(status(&on_a, &id, &alice).await, TaskStatus::Completed);
    assert_eq!(on_a.running_here(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_on_another_instance_stops_the_query_within_two_seconds() {
    let executor = Arc::new(Numbers::new().steps([5, 10]));
    let (a, b) = two_instances(&executor);
    let (on_a, on_b) = (DualTasks::new(a.clone()), DualTasks::new(b.clone()));
    let alice = Caller::owner("alice");
    let id = alices_task(&on_a).await;
    let task_id = id.parse().unwrap_or_else(|e| panic!("{e}"));
    until("the task has its pending resource", async || {
        b.task(task_id, &alice)
            .await
            .is_ok_and(|task| task.resource.is_some())
    })
    .await;
    assert_eq!(executor.alive(), 1, "the query runs on A");
    let resource = b.task(task_id, &alice).await.ok().and_then(|task| task.resource);

    let asked = Instant::now();
    on_b.cancel_task(&id, &alice)
        .await
        .unwrap_or_else(|e| panic!("tasks/cancel: {e:?}"));
    until("the query on A stops", async || executor.alive() == 0).await;
    let stopped = asked.elapsed();
    assert!(stopped < Duration::from_secs(2), "stopped after {stopped:?}");
    until("the task ends cancelled", async || {
        status(&on_b, &id, &alice).await == TaskStatus::Cancelled
    })
    .await;
    let resource = resource.unwrap_or_else(|| panic!("a resource"));
    let gone = a.get_resource(resource, &alice).await.err();
    assert!(gone.is_some(), "the resource is deleted");
    until("A forgets the run", async || on_a.running_here() == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_instance_died_reads_failed_after_its_lease() {
    let executor = Arc::new(Numbers::new());
    let (a, b) = two_instances(&executor);
    let alice = Caller::owner("alice");
    // A wrote the task and then died: nothing renews it.
    let task = a
        .create_task(&alice, Duration::from_secs(60), Duration::from_millis(500))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let on_b = DualTasks::new(b);
    let id = task.id.to_string();
    assert_eq!(status(&on_b, &id, &alice).await, TaskStatus::Working);
    tokio::time::sleep(LEASE + Duration::from_millis(50)).await;
    let failed = on_b
        .get_task(&id, &alice)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    let json = serde_json::to_value(&failed).unwrap_or_default();
    assert_eq!(json["status"], "failed", "{json}");
    assert_eq!(json["error"]["code"], -32603, "{json}");
    // The instance wakes up (a long pause, a store outage) and renews: the task stays failed, and the
    // renewal tells it to stop (a terminal state never changes back).
    let mut woken = task.clone();
    woken.rows_so_far = 99;
    assert_eq!(
        a.renew_task(&mut woken).await.unwrap_or_else(|e| panic!("{e}")),
        None,
        "stop"
    );
    assert_eq!(woken.state, dual_core::task::TaskState::Failed);
    assert_eq!(
        status(&on_b, &id, &alice).await,
        TaskStatus::Failed,
        "still failed"
    );
    // An anonymous caller's task is only anonymous callers' to read.
    let anonymous = a
        .create_task(
            &Caller::anonymous(),
            Duration::from_secs(60),
            Duration::from_millis(500),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let id = anonymous.id.to_string();
    assert_eq!(
        status(&on_b, &id, &Caller::anonymous()).await,
        TaskStatus::Working
    );
    assert!(
        on_b.get_task(&id, &alice).await.is_err(),
        "alice does not see an anonymous task"
    );
}
