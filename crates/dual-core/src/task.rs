//! Durable MCP tasks (the `io.modelcontextprotocol/tasks` extension): a tool call that runs in the
//! background, kept as a [`TaskRecord`] in the resource store so that `tasks/get` and `tasks/cancel`
//! work on any instance (docs/DESIGN.md §8).
//!
//! ```
//! use dual_core::task::{TaskId, TaskRecord, TaskState};
//! use dual_core::time::{Duration, OffsetDateTime};
//!
//! let id = TaskId::from_bytes([7; 16]);
//! assert_eq!(id.to_string().len(), 32);
//! assert_eq!(id.to_string().parse::<TaskId>(), Ok(id));
//! assert!("not-a-task".parse::<TaskId>().is_err());
//!
//! let now = OffsetDateTime::UNIX_EPOCH;
//! let task = TaskRecord::new(id, Some("alice".into()), now, Duration::minutes(5), Duration::seconds(10));
//! assert_eq!(task.state, TaskState::Working);
//! assert!(!task.lapsed_at(now + Duration::seconds(9)));
//! assert!(task.lapsed_at(now + Duration::seconds(10)));
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use time::{Duration, OffsetDateTime};

use crate::ResourceId;

/// A task's id: 128 random bits, written as 32 lowercase hexadecimal digits. Unguessable when the
/// bits come from a cryptographic generator (the server's do), so knowing one task's id tells
/// nothing of another's.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId([u8; 16]);

impl TaskId {
    /// The id with these bits.
    #[must_use]
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Self(bytes)
    }

    /// Its bits.
    #[must_use]
    pub const fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TaskId({self})")
    }
}

/// The text given to [`TaskId::from_str`] is not a task id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed task id: expected 32 lowercase hexadecimal digits")]
pub struct InvalidTaskId;

impl FromStr for TaskId {
    type Err = InvalidTaskId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let digits = s.as_bytes();
        if digits.len() != 32 {
            return Err(InvalidTaskId);
        }
        let mut bytes = [0; 16];
        for (byte, pair) in bytes.iter_mut().zip(digits.chunks_exact(2)) {
            *byte = (hex(pair[0])? << 4) | hex(pair[1])?;
        }
        Ok(Self(bytes))
    }
}

/// One lowercase hexadecimal digit's value (one spelling per id, so ids compare as text).
fn hex(digit: u8) -> Result<u8, InvalidTaskId> {
    match digit {
        b'0'..=b'9' => Ok(digit - b'0'),
        b'a'..=b'f' => Ok(digit - b'a' + 10),
        _ => Err(InvalidTaskId),
    }
}

impl Serialize for TaskId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Where a task is in its life (the extension's statuses a dual-response task can have: it never
/// asks the client for input).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskState {
    /// The tool call is running.
    #[default]
    Working,
    /// It ended with a tool result (an `isError` result included): [`TaskRecord::result`].
    Completed,
    /// It ended with a JSON-RPC error: [`TaskRecord::result`] holds the error object.
    Failed,
    /// It was cancelled.
    Cancelled,
}

impl TaskState {
    /// Whether the task has ended.
    #[must_use]
    pub const fn is_terminal(self) -> bool {
        !matches!(self, Self::Working)
    }
}

/// A task as the store keeps it. The instance running the call writes it before `tools/call`
/// answers and renews its lease while it works; any instance reads it for `tasks/get` and marks it
/// for cancellation for `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// Its id.
    pub id: TaskId,
    /// The principal that created it: only that principal reads or cancels it (`None`: an
    /// anonymous caller, and then only anonymous callers do).
    pub owner: Option<String>,
    /// Where it is.
    pub state: TaskState,
    /// The resource the call produced, once `create_response` has returned.
    #[serde(default)]
    pub resource: Option<ResourceId>,
    /// Rows the query has produced so far (progress).
    #[serde(default)]
    pub rows_so_far: u64,
    /// A short message for the person, e.g. `running the query: 1200 rows so far`.
    #[serde(default)]
    pub status_message: Option<String>,
    /// When it was created.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When it last changed.
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
    /// When it is forgotten: `created_at` plus its time to live.
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    /// The poll interval suggested to the client, in milliseconds.
    pub poll_interval_ms: u64,
    /// While working: until when the instance running it has promised to renew it. A working task
    /// past its lease lost its instance and reads as failed.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub lease_expires_at: Option<OffsetDateTime>,
    /// Whether a `tasks/cancel` asked it to stop (on any instance); the running instance sees it at
    /// its next renewal.
    #[serde(default)]
    pub cancel_requested: bool,
    /// The final result: the `CallToolResult` when completed, the JSON-RPC error object when failed.
    #[serde(default)]
    pub result: Option<Value>,
}

impl TaskRecord {
    /// A working task created at `now` by `owner`, forgotten `ttl` after `now`, whose instance
    /// renews it within `lease`.
    #[must_use]
    pub fn new(
        id: TaskId,
        owner: Option<String>,
        now: OffsetDateTime,
        ttl: Duration,
        lease: Duration,
    ) -> Self {
        Self {
            id,
            owner,
            state: TaskState::Working,
            resource: None,
            rows_so_far: 0,
            status_message: None,
            created_at: now,
            updated_at: now,
            expires_at: now + ttl,
            poll_interval_ms: 500,
            lease_expires_at: Some(now + lease),
            cancel_requested: false,
            result: None,
        }
    }

    /// Whether the task is forgotten at `now` (`expires_at <= now`).
    #[must_use]
    pub fn is_expired_at(&self, now: OffsetDateTime) -> bool {
        self.expires_at <= now
    }

    /// Whether the task is working but its instance stopped renewing it before `now`.
    #[must_use]
    pub fn lapsed_at(&self, now: OffsetDateTime) -> bool {
        self.state == TaskState::Working && self.lease_expires_at.is_some_and(|lease| lease <= now)
    }

    /// Takes the running instance's part of `run`: `state`, `resource`, `rows_so_far`,
    /// `status_message`, `updated_at`, `poll_interval_ms`, `lease_expires_at` and `result` (what a
    /// store's `update_task` overwrites); the owner, the times of creation and expiry and
    /// `cancel_requested` stay.
    pub fn take_run(&mut self, run: &Self) {
        self.state = run.state;
        self.resource = run.resource;
        self.rows_so_far = run.rows_so_far;
        self.status_message.clone_from(&run.status_message);
        self.updated_at = run.updated_at;
        self.poll_interval_ms = run.poll_interval_ms;
        self.lease_expires_at = run.lease_expires_at;
        self.result.clone_from(&run.result);
    }

    /// Its time to live in milliseconds, as `tasks/get` states it.
    #[must_use]
    pub fn ttl_ms(&self) -> u64 {
        u64::try_from((self.expires_at - self.created_at).whole_milliseconds()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unowned task made at `now`, living a minute, polled every `poll`.
    fn unowned(id_byte: u8, now: OffsetDateTime, poll: Duration) -> TaskRecord {
        TaskRecord::new(
            TaskId::from_bytes([id_byte; 16]),
            None,
            now,
            Duration::minutes(1),
            poll,
        )
    }

    #[test]
    fn ids_round_trip_and_reject_other_spellings() {
        let id = TaskId::from_bytes([0xab; 16]);
        assert_eq!(id.to_string(), "ab".repeat(16));
        assert_eq!(id.to_string().parse(), Ok(id));
        let json = serde_json::to_string(&id).expect("json");
        assert_eq!(serde_json::from_str::<TaskId>(&json).expect("parse"), id);
        for bad in [
            "",
            "AB".repeat(16).as_str(),
            &"ab".repeat(15),
            &"ab".repeat(17),
            &"zz".repeat(16),
        ] {
            assert_eq!(bad.parse::<TaskId>(), Err(InvalidTaskId), "{bad}");
        }
    }

    #[test]
    fn a_record_round_trips_through_json() {
        let now = OffsetDateTime::UNIX_EPOCH + Duration::days(20_000);
        let mut task = unowned(1, now, Duration::seconds(5));
        task.resource = Some(ResourceId::new());
        task.result = Some(serde_json::json!({"content": [], "isError": true}));
        let json = serde_json::to_string(&task).expect("json");
        assert_eq!(serde_json::from_str::<TaskRecord>(&json).expect("parse"), task);
        assert_eq!(task.ttl_ms(), 60_000);
        assert!(task.is_expired_at(now + Duration::minutes(1)) && !task.is_expired_at(now));
    }

    #[test]
    fn only_a_working_task_lapses() {
        let now = OffsetDateTime::UNIX_EPOCH;
        let mut task = unowned(2, now, Duration::seconds(1));
        assert!(task.lapsed_at(now + Duration::seconds(1)));
        task.state = TaskState::Completed;
        assert!(!task.lapsed_at(now + Duration::seconds(1)));
    }
}
