//! A stored [`TaskRecord`] as the tasks extension's types.

use dual_core::task::{TaskRecord, TaskState};
use dual_core::time::OffsetDateTime;
use dual_core::time::format_description::well_known::Rfc3339;
use rmcp::model::{DetailedTask, JsonObject, Task, TaskPayload, TaskStatus};
use serde_json::Value;

/// The extension's base `Task` of `task`.
pub(super) fn task(task: &TaskRecord) -> Task {
    let status = match task.state {
        TaskState::Completed => TaskStatus::Completed,
        TaskState::Failed => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
        _ => TaskStatus::Working,
    };
    let mut wire = Task::new(
        task.id.to_string(),
        status,
        time(task.created_at),
        time(task.updated_at),
    )
    .with_ttl_ms(task.ttl_ms())
    .with_poll_interval_ms(task.poll_interval_ms);
    wire.status_message.clone_from(&task.status_message);
    wire
}

/// `task` with its status's payload, for `tasks/get`.
pub(super) fn detailed(record: &TaskRecord) -> DetailedTask {
    let object = |value: Option<&Value>| match value {
        Some(Value::Object(object)) => object.clone(),
        _ => JsonObject::new(),
    };
    let payload = match record.state {
        TaskState::Completed => TaskPayload::Completed {
            result: object(record.result.as_ref()),
        },
        TaskState::Failed => TaskPayload::Failed {
            error: failed_error(record.result.as_ref()),
        },
        TaskState::Cancelled => TaskPayload::Cancelled,
        _ => TaskPayload::Working,
    };
    DetailedTask::new(task(record), payload)
}

/// A failed task's JSON-RPC error object: as stored, or an internal error when none was.
fn failed_error(stored: Option<&Value>) -> JsonObject {
    match stored {
        Some(Value::Object(error)) if error.contains_key("code") && error.contains_key("message") => {
            error.clone()
        }
        _ => {
            let mut error = JsonObject::new();
            error.insert("code".to_owned(), Value::from(-32603));
            error.insert("message".to_owned(), Value::from("the task failed"));
            error
        }
    }
}

/// An ISO 8601 timestamp (RFC 3339).
fn time(at: OffsetDateTime) -> String {
    at.format(&Rfc3339)
        .unwrap_or_else(|_| at.unix_timestamp().to_string())
}

#[cfg(test)]
mod tests {
    use dual_core::task::TaskId;
    use dual_core::time::Duration;
    use serde_json::json;

    use super::*;

    #[test]
    fn each_state_maps_to_its_payload() {
        let now = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        let mut record = TaskRecord::new(
            TaskId::from_bytes([9; 16]),
            None,
            now,
            Duration::minutes(2),
            Duration::seconds(5),
        );
        let working = serde_json::to_value(detailed(&record)).expect("json");
        assert_eq!(working["status"], "working");
        assert_eq!(working["ttlMs"], 120_000);
        assert_eq!(working["taskId"], "09".repeat(16));
        assert_eq!(working["createdAt"], "2024-10-04T00:00:00Z");
        record.state = TaskState::Completed;
        record.result = Some(json!({"content": [], "isError": false}));
        assert_eq!(
            serde_json::to_value(detailed(&record)).expect("json")["result"]["isError"],
            false
        );
        record.state = TaskState::Failed;
        record.result = Some(json!("not an error object"));
        assert_eq!(
            serde_json::to_value(detailed(&record)).expect("json")["error"]["code"],
            -32603
        );
        record.state = TaskState::Cancelled;
        assert_eq!(
            serde_json::to_value(detailed(&record)).expect("json")["status"],
            "cancelled"
        );
    }
}
