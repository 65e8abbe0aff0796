//! Tasks: one hash per task, `{prefix}t:{id}`, holding the task as saved (`t`, JSON), the running
//! instance's last renewal (`r`, the JSON of the whole task, of which only its part is read), the
//! cancellation mark (`c`) and the expiry split as for records (`eu`, `en`). The key's TTL drops it
//! a grace window after its expiry; reads check the expiry exactly.

use std::sync::LazyLock;

use dual_core::task::{TaskId, TaskRecord};
use dual_store::StoreError;
use redis::Script;
use time::OffsetDateTime;

use crate::fields::SplitTime;
use crate::scripts::lua;
use crate::shared::Shared;

/// `KEYS[1]` the task; `ARGV[3]` the renewal's JSON. Answers -1 when there is no live task, else
/// writes `r` and answers 1 when the task is marked for cancellation, 0 when not.
static UPDATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(lua!(
        r"
local v = redis.call('HMGET', KEYS[1], 't', 'eu', 'en', 'c')
if not v[1] or expired(v[2], v[3]) then return -1 end
redis.call('HSET', KEYS[1], 'r', ARGV[3])
if v[4] then return 1 end
return 0
"
    ))
});

/// `KEYS[1]` the task. Marks a live task for cancellation and answers `{t, r}`; nothing (nil) when
/// there is no live task.
static CANCEL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(lua!(
        r"
local v = redis.call('HMGET', KEYS[1], 't', 'eu', 'en', 'r')
if not v[1] or expired(v[2], v[3]) then return false end
redis.call('HSET', KEYS[1], 'c', '1')
return {v[1], v[4] or ''}
"
    ))
});

fn encode(task: &TaskRecord) -> Result<String, StoreError> {
    serde_json::to_string(task).map_err(|e| StoreError::backend("cannot encode task").with_source(e))
}

/// The task saved as `saved`, renewed as `run` (empty: never), marked for cancellation or not.
fn decode(saved: &str, run: Option<&str>, cancelled: bool) -> Result<TaskRecord, StoreError> {
    let mut task: TaskRecord =
        serde_json::from_str(saved).map_err(|e| StoreError::corrupt("task JSON").with_source(e))?;
    if let Some(run) = run.filter(|run| !run.is_empty()) {
        let run: TaskRecord =
            serde_json::from_str(run).map_err(|e| StoreError::corrupt("task renewal JSON").with_source(e))?;
        task.take_run(&run);
    }
    task.cancel_requested |= cancelled;
    Ok(task)
}

pub(crate) async fn save(shared: &Shared, task: &TaskRecord) -> Result<(), StoreError> {
    let key = shared.keys.task(task.id);
    let split = SplitTime::new(task.expires_at);
    let mut pipe = redis::pipe();
    pipe.atomic()
        .cmd("DEL")
        .arg(&key)
        .ignore()
        .cmd("HSET")
        .arg(&key)
        .arg("t")
        .arg(encode(task)?)
        .arg("eu")
        .arg(split.micros)
        .arg("en")
        .arg(split.nanos)
        .ignore()
        .cmd("PEXPIRE")
        .arg(&key)
        .arg(shared.ttl_millis(task.expires_at))
        .ignore();
    if task.cancel_requested {
        pipe.cmd("HSET").arg(&key).arg("c").arg("1").ignore();
    }
    shared
        .connection
        .run("save_task", move |mut con| async move {
            pipe.query_async::<()>(&mut con).await
        })
        .await
}

pub(crate) async fn get(
    shared: &Shared,
    id: TaskId,
    now: OffsetDateTime,
) -> Result<Option<TaskRecord>, StoreError> {
    let key = shared.keys.task(id);
    let (saved, run, cancelled): (Option<String>, Option<String>, Option<String>) = shared
        .connection
        .run("get_task", move |mut con| async move {
            redis::cmd("HMGET")
                .arg(key)
                .arg("t")
                .arg("r")
                .arg("c")
                .query_async(&mut con)
                .await
        })
        .await?;
    let Some(saved) = saved else {
        return Ok(None);
    };
    let task = decode(&saved, run.as_deref(), cancelled.is_some())?;
    Ok((!task.is_expired_at(now)).then_some(task))
}

pub(crate) async fn update(
    shared: &Shared,
    task: &TaskRecord,
    now: OffsetDateTime,
) -> Result<Option<bool>, StoreError> {
    let key = shared.keys.task(task.id);
    let run = encode(task)?;
    let split = SplitTime::new(now);
    let answer: i64 = shared
        .connection
        .run("update_task", move |mut con| async move {
            UPDATE
                .key(key)
                .arg(split.micros)
                .arg(split.nanos)
                .arg(run)
                .invoke_async(&mut con)
                .await
        })
        .await?;
    Ok(match answer {
        -1 => None,
        marked => Some(marked == 1),
    })
}

pub(crate) async fn cancel(
    shared: &Shared,
    id: TaskId,
    now: OffsetDateTime,
) -> Result<Option<TaskRecord>, StoreError> {
    let key = shared.keys.task(id);
    let split = SplitTime::new(now);
    let answer: Option<(String, String)> = shared
        .connection
        .run("cancel_task", move |mut con| async move {
            CANCEL
                .key(key)
                .arg(split.micros)
                .arg(split.nanos)
                .invoke_async(&mut con)
                .await
        })
        .await?;
    answer
        .map(|(saved, run)| decode(&saved, Some(&run), true))
        .transpose()
}
