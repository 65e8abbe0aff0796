//! MCP sessions: one string key per session, `{prefix}m:{id}`, holding the expiry (whole
//! microseconds and nanoseconds, `u.n`) and the state after a newline; the key's TTL drops it a
//! grace window after its expiry, and reads check the expiry exactly.

use dual_store::StoreError;
use time::OffsetDateTime;

use crate::fields::SplitTime;
use crate::shared::Shared;

pub(crate) async fn save(
    shared: &Shared,
    id: &str,
    state: &str,
    expires_at: OffsetDateTime,
) -> Result<(), StoreError> {
    let key = shared.keys.session(id);
    let split = SplitTime::new(expires_at);
    let value = format!("{}.{}\n{state}", split.micros, split.nanos);
    let ttl = shared.ttl_millis(expires_at);
    shared
        .connection
        .run("save_session", move |mut con| async move {
            redis::cmd("SET")
                .arg(key)
                .arg(value)
                .arg("PX")
                .arg(ttl)
                .query_async::<()>(&mut con)
                .await
        })
        .await
}

pub(crate) async fn load(
    shared: &Shared,
    id: &str,
    now: OffsetDateTime,
) -> Result<Option<String>, StoreError> {
    let key = shared.keys.session(id);
    let value: Option<String> = shared
        .connection
        .run("load_session", move |mut con| async move {
            redis::cmd("GET").arg(key).query_async(&mut con).await
        })
        .await?;
    let Some(value) = value else {
        return Ok(None);
    };
    let corrupt = || StoreError::corrupt("session value: no expiry before the state");
    let (expiry, state) = value.split_once('\n').ok_or_else(corrupt)?;
    let (micros, nanos) = expiry.split_once('.').ok_or_else(corrupt)?;
    let expires = SplitTime {
        micros: micros.parse().map_err(|_| corrupt())?,
        nanos: nanos.parse().map_err(|_| corrupt())?,
    };
    let now = SplitTime::new(now);
    let live = (expires.micros, expires.nanos) > (now.micros, now.nanos);
    Ok(live.then(|| state.to_owned()))
}

pub(crate) async fn delete(shared: &Shared, id: &str) -> Result<bool, StoreError> {
    let key = shared.keys.session(id);
    let deleted: i64 = shared
        .connection
        .run("delete_session", move |mut con| async move {
            redis::cmd("DEL").arg(key).query_async(&mut con).await
        })
        .await?;
    Ok(deleted > 0)
}
