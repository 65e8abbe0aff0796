//! Tasks, MCP sessions and listings in PostgreSQL: the statements of
//! [`TaskSql`](crate::sql::TaskSql), [`SessionSql`](crate::sql::SessionSql) and the listing
//! statements, with their parameters and rows.

use dual_core::ResourceRecord;
use dual_core::task::{TaskId, TaskRecord};
use dual_store::{Listing, StoreError};
use time::OffsetDateTime;
use tokio_postgres::Row;
use tokio_postgres::types::Json;

use crate::row::{self, micros};
use crate::shared::Shared;

/// The bound of a listing without `before`: `~` sorts after every ULID character in the C collation.
const NO_BOUND: &str = "~";

pub(crate) async fn list(
    shared: &Shared,
    listing: Listing<'_>,
    now: OffsetDateTime,
) -> Result<Vec<ResourceRecord>, StoreError> {
    let sql = &shared.sql;
    let bound = listing
        .before
        .map_or_else(|| NO_BOUND.to_owned(), |id| id.to_string());
    let limit = i64::try_from(listing.limit.get()).unwrap_or(i64::MAX);
    let now = micros(now);
    let rows = match listing.owner {
        Some(owner) => {
            shared
                .rows("list", &sql.list_owned, &[&owner, &now, &bound, &limit])
                .await?
        }
        None => {
            shared
                .rows("list", &sql.list_unowned, &[&now, &bound, &limit])
                .await?
        }
    };
    rows.iter().map(row::decode).collect()
}

pub(crate) async fn save(shared: &Shared, task: &TaskRecord) -> Result<(), StoreError> {
    let sql = &shared.sql.tasks;
    let (id, expires_at) = (task.id.to_string(), micros(task.expires_at));
    shared
        .execute(
            "save_task",
            &sql.save,
            &[&id, &Json(task), &task.cancel_requested, &expires_at],
        )
        .await
        .map(drop)
}

/// The task in a row of `task`, `run` and `cancel_requested`.
fn decode(row: &Row) -> Result<TaskRecord, StoreError> {
    let corrupt = |what: &'static str| move |e| StoreError::corrupt(what).with_source(e);
    let mut task = row
        .try_get::<_, Json<TaskRecord>>("task")
        .map_err(corrupt("column task"))?
        .0;
    if let Some(run) = row
        .try_get::<_, Option<Json<TaskRecord>>>("run")
        .map_err(corrupt("column run"))?
    {
        task.take_run(&run.0);
    }
    task.cancel_requested = row
        .try_get("cancel_requested")
        .map_err(corrupt("column cancel_requested"))?;
    Ok(task)
}

pub(crate) async fn get(
    shared: &Shared,
    id: TaskId,
    now: OffsetDateTime,
) -> Result<Option<TaskRecord>, StoreError> {
    one("get_task", shared, &shared.sql.tasks.get, id, now).await
}

/// Runs `sql` (`$1` the task's id, `$2` now) and decodes the task it answers, if any.
async fn one(
    op: &'static str,
    shared: &Shared,
    sql: &str,
    id: TaskId,
    now: OffsetDateTime,
) -> Result<Option<TaskRecord>, StoreError> {
    let rows = shared.rows(op, sql, &[&id.to_string(), &micros(now)]).await?;
    rows.first().map(decode).transpose()
}

pub(crate) async fn update(
    shared: &Shared,
    task: &TaskRecord,
    now: OffsetDateTime,
) -> Result<Option<bool>, StoreError> {
    let sql = &shared.sql.tasks;
    let rows = shared
        .rows(
            "update_task",
            &sql.update,
            &[&task.id.to_string(), &Json(task), &micros(now)],
        )
        .await?;
    rows.first()
        .map(|row| {
            row.try_get("cancel_requested")
                .map_err(|e| StoreError::corrupt("column cancel_requested").with_source(e))
        })
        .transpose()
}

pub(crate) async fn cancel(
    shared: &Shared,
    id: TaskId,
    now: OffsetDateTime,
) -> Result<Option<TaskRecord>, StoreError> {
    one("cancel_task", shared, &shared.sql.tasks.cancel, id, now).await
}

/// Forgets every task and MCP session expired at `now`.
pub(crate) async fn purge(shared: &Shared, now: OffsetDateTime) -> Result<(), StoreError> {
    let now = micros(now);
    let sql = &shared.sql;
    shared.execute("purge_tasks", &sql.tasks.purge, &[&now]).await?;
    shared
        .execute("purge_sessions", &sql.sessions.purge, &[&now])
        .await?;
    Ok(())
}

pub(crate) async fn save_session(
    shared: &Shared,
    id: &str,
    state: &str,
    expires_at: OffsetDateTime,
) -> Result<(), StoreError> {
    let sql = &shared.sql.sessions;
    let expires_at = micros(expires_at);
    shared
        .execute("save_session", &sql.save, &[&id, &state, &expires_at])
        .await
        .map(drop)
}

pub(crate) async fn load_session(
    shared: &Shared,
    id: &str,
    now: OffsetDateTime,
) -> Result<Option<String>, StoreError> {
    let sql = &shared.sql.sessions;
    let rows = shared
        .rows("load_session", &sql.load, &[&id, &micros(now)])
        .await?;
    rows.first()
        .map(|row| {
            row.try_get("state")
                .map_err(|e| StoreError::corrupt("column state").with_source(e))
        })
        .transpose()
}

pub(crate) async fn delete_session(shared: &Shared, id: &str) -> Result<bool, StoreError> {
    let sql = &shared.sql.sessions;
    Ok(shared.execute("delete_session", &sql.delete, &[&id]).await? > 0)
}
