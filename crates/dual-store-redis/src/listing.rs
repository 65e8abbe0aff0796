//! `list`: one owner's live records, newest first, from the owner's sorted set of ids.
//!
//! A save adds the record's id to `{prefix}o{owner field}` (score 0, so the set sorts its ULIDs as
//! text, which is creation order) and trims the set to its newest [`MAX_LISTED`]; a delete and a
//! purge remove it. A record Redis dropped by itself (its key's TTL, past the grace window) leaves its
//! id behind until a listing meets it and removes it.

use std::sync::LazyLock;

use dual_core::ResourceRecord;
use dual_store::{Listing, StoreError};
use redis::Script;
use time::OffsetDateTime;

use crate::fields::{self, ScriptRecord, SplitTime, Stored};
use crate::scripts::lua;
use crate::shared::Shared;

/// At most this many ids stay in one owner's listing: the oldest go when a save adds one more.
pub(crate) const MAX_LISTED: i64 = 100_000;

/// `KEYS[1]` the owner's listing; `ARGV[3]` the record key prefix, `ARGV[4]` the upper bound
/// (`(id`, exclusive, or `+`), `ARGV[5]` the limit, `ARGV[6]` the owner field the listing is of.
/// Answers up to `limit` live records below the bound, newest first, each as
/// `{rec, q, n, la, pinned}`. An id whose record is gone, expired (an expired record is never
/// listed again) or of another owner leaves the listing as it is met, so no id is scanned twice.
static LIST: LazyLock<Script> = LazyLock::new(|| {
    Script::new(lua!(
        r"
local limit = tonumber(ARGV[5])
local out = {}
local bound = ARGV[4]
while #out < limit do
  local ids = redis.call('ZRANGE', KEYS[1], bound, '-', 'BYLEX', 'REV', 'LIMIT', 0, limit)
  if #ids == 0 then break end
  for _, id in ipairs(ids) do
    local v = redis.call('HMGET', ARGV[3] .. id, 'rec', 'q', 'n', 'la', 'eu', 'en', 'o')
    if not v[1] or v[7] ~= ARGV[6] or (v[5] and expired(v[5], v[6])) then
      redis.call('ZREM', KEYS[1], id)
    elseif #out < limit then
      local pinned = 0
      if not v[5] then pinned = 1 end
      out[#out + 1] = {v[1], v[2] or '', tonumber(v[3]) or 0, v[4] or '', pinned}
    end
  end
  if #ids < limit then break end
  bound = '(' .. ids[#ids]
end
return out
"
    ))
});

pub(crate) async fn list(
    shared: &Shared,
    page: Listing<'_>,
    now: OffsetDateTime,
) -> Result<Vec<ResourceRecord>, StoreError> {
    let owner_field = fields::owner_value(page.owner);
    let listing = shared.keys.owner_listing(&owner_field);
    let records = shared.keys.records().to_owned();
    let bound = page.before.map_or_else(|| "+".to_owned(), |id| format!("({id}"));
    let limit = page.limit.get().min(i32::MAX as usize);
    let split = SplitTime::new(now);
    let listed: Vec<ScriptRecord> = shared
        .connection
        .run("list", move |mut con| async move {
            LIST.key(listing)
                .arg(split.micros)
                .arg(split.nanos)
                .arg(records)
                .arg(bound)
                .arg(limit)
                .arg(owner_field)
                .invoke_async(&mut con)
                .await
        })
        .await?;
    listed.into_iter().map(Stored::decode_script).collect()
}
