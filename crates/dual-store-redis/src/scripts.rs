//! The Lua scripts that make a check and an update one atomic round trip.
//!
//! Times arrive as two arguments, whole microseconds since the Unix epoch and the nanoseconds past
//! them (see [`SplitTime`](crate::fields::SplitTime)), so the expiry test is exact: a record whose
//! `expires_at` is at or before `now` is expired. Scripts that read or write a record answer
//! `{status, json, query, count, last_access, pinned}` with status 0 = missing, 1 = expired,
//! 2 = found, 3 = not visible to the viewer and 4 = a record whose owner cannot be read (both
//! `record_access` only), and `query` the query's part
//! (`''` when never updated).
//!
//! No script decodes or re-encodes the record's JSON: Lua's `cjson` would round integers beyond 2^53
//! and reorder object keys. Scripts pass the `rec` and `q` fields through as opaque strings.

use std::sync::LazyLock;

use redis::Script;

/// Shared prologue: `expired(eu, en)` against `now` in `ARGV[1]` (micros) and `ARGV[2]` (nanos).
macro_rules! lua {
    ($body:literal) => {
        concat!(
            "local now_u = tonumber(ARGV[1])\n",
            "local now_n = tonumber(ARGV[2])\n",
            "local function expired(eu, en)\n",
            "  local u = tonumber(eu)\n",
            "  return u < now_u or (u == now_u and tonumber(en) <= now_n)\n",
            "end\n",
            $body
        )
    };
}
pub(crate) use lua;

/// `KEYS[1]` record (the index and pinned-set keys follow, unused); `ARGV[3]` the access time (RFC
/// 3339), `ARGV[4]` the viewer's filter (`any`, `unowned`, `owner` or `none`, see
/// [`OwnerFilter`](dual_store::OwnerFilter)) and `ARGV[5]` the viewer's owner (`''` unless `owner`).
/// Counts an access of a live record the viewer may see: `HINCRBY` the counter and set the last
/// access. A live record the viewer may not see answers status 3 and is left untouched.
///
/// The owner comes from the `o` field (`-` or `=` and the owner); a record saved before that field
/// existed has none, and then only its owner is read out of the JSON with `cjson` (a string decodes
/// exactly; the JSON itself is passed through untouched as everywhere else). JSON `cjson` cannot
/// read answers status 4, which the store reports as a corrupt record.
pub(crate) static RECORD_ACCESS: LazyLock<Script> = LazyLock::new(|| {
    Script::new(lua!(
        r"
local v = redis.call('HMGET', KEYS[1], 'rec', 'eu', 'en', 'q', 'o')
if not v[1] then return {0, '', '', 0, '', 0} end
if v[2] and expired(v[2], v[3]) then return {1, '', '', 0, '', 0} end
local filter = ARGV[4]
if filter ~= 'any' then
  if filter == 'none' then return {3, '', '', 0, '', 0} end
  local owner = nil
  if v[5] then
    if v[5] ~= '-' then owner = string.sub(v[5], 2) end
  else
    local ok, saved = pcall(cjson.decode, v[1])
    if not ok or type(saved) ~= 'table' then return {4, '', '', 0, '', 0} end
    if type(saved.owner) == 'string' then owner = saved.owner end
  end
  if owner and (filter ~= 'owner' or owner ~= ARGV[5]) then return {3, '', '', 0, '', 0} end
end
local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('HSET', KEYS[1], 'la', ARGV[3])
local pinned = 0
if not v[2] then pinned = 1 end
return {2, v[1], v[4] or '', n, ARGV[3], pinned}
"
    ))
});

/// `KEYS[1]` record, `KEYS[2]` expiry index, `KEYS[3]` pinned set; `ARGV[3]` the id. Pins a live
/// record: drops its expiry fields, its TTL and its index entry, and adds it to the pinned set (also
/// when it was pinned already, which is harmless).
pub(crate) static PIN: LazyLock<Script> = LazyLock::new(|| {
    Script::new(lua!(
        r"
local v = redis.call('HMGET', KEYS[1], 'rec', 'eu', 'en', 'n', 'la', 'q')
if not v[1] then return {0, '', '', 0, '', 0} end
if v[2] and expired(v[2], v[3]) then return {1, '', '', 0, '', 0} end
if v[2] then
  redis.call('HDEL', KEYS[1], 'eu', 'en')
  redis.call('PERSIST', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[3])
end
redis.call('SADD', KEYS[3], ARGV[3])
return {2, v[1], v[6] or '', tonumber(v[4]) or 0, v[5] or '', 1}
"
    ))
});

/// `KEYS[1]` record; `ARGV[1]` the query's part as JSON. Writes it into the record's `q` field when
/// the record is there (expired or not) and answers 1, else 0 without creating the key. `HSET` keeps
/// the key's TTL, and nothing else of the record is touched, so a concurrent access or pin is kept.
/// Takes no `now`: an expired record is updated too.
pub(crate) static UPDATE_QUERY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HEXISTS', KEYS[1], 'rec') == 0 then return 0 end
redis.call('HSET', KEYS[1], 'q', ARGV[1])
return 1
",
    )
});

/// `KEYS[1]` expiry index; `ARGV[3]` the record key prefix, `ARGV[4]` the limit. Ids of expired
/// records, earliest first. Index entries whose record is gone (Redis dropped it after the grace
/// window) are removed on the way.
pub(crate) static FIND_EXPIRED: LazyLock<Script> = LazyLock::new(|| {
    Script::new(lua!(
        r"
local limit = tonumber(ARGV[4])
local out = {}
local offset = 0
while #out < limit do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', offset, limit)
  if #ids == 0 then break end
  local dropped = 0
  for _, id in ipairs(ids) do
    local f = redis.call('HMGET', ARGV[3] .. id, 'eu', 'en')
    if not f[1] then
      redis.call('ZREM', KEYS[1], id)
      dropped = dropped + 1
    elseif expired(f[1], f[2]) and #out < limit then
      out[#out + 1] = id
    end
  end
  if #ids < limit then break end
  offset = offset + #ids - dropped
end
return out
"
    ))
});

/// `KEYS[1]` expiry index; `ARGV[3]` the record key prefix, `ARGV[4]` the batch size, `ARGV[5]` the
/// owner index prefix (each deleted record leaves its owner's listing too). Deletes one
/// batch of expired records and answers `{deleted, scanned}`; the caller repeats while
/// `scanned == batch`. Records expiring within the same microsecond as `now` are checked to the
/// nanosecond in the last batch.
pub(crate) static PURGE_BATCH: LazyLock<Script> = LazyLock::new(|| {
    Script::new(lua!(
        r"
local batch = tonumber(ARGV[4])
local deleted = 0
local function unlist(key, id)
  local o = redis.call('HGET', key, 'o')
  if o then redis.call('ZREM', ARGV[5] .. o, id) end
end
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1], 'LIMIT', 0, batch)
for _, id in ipairs(ids) do
  local key = ARGV[3] .. id
  if redis.call('HEXISTS', key, 'eu') == 1 then
    unlist(key, id)
    deleted = deleted + redis.call('DEL', key)
  end
  redis.call('ZREM', KEYS[1], id)
end
if #ids < batch then
  local ties = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1])
  for _, id in ipairs(ties) do
    local key = ARGV[3] .. id
    local f = redis.call('HMGET', key, 'eu', 'en')
    if not f[1] then
      redis.call('ZREM', KEYS[1], id)
    elseif expired(f[1], f[2]) then
      unlist(key, id)
      deleted = deleted + redis.call('DEL', key)
      redis.call('ZREM', KEYS[1], id)
    end
  end
end
return {deleted, #ids}
"
    ))
});

/// `KEYS[1]` expiry index, `KEYS[2]` pinned set; `ARGV[3]` the record key prefix. How many records are
/// live at `now`: the pinned ones, the indexed ones expiring after `now`'s microsecond, and those
/// expiring within that microsecond checked to the nanosecond. Reads only.
pub(crate) static LIVE_COUNT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(lua!(
        r"
local live = redis.call('SCARD', KEYS[2]) + redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[1], '+inf')
local ties = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1])
for _, id in ipairs(ties) do
  local f = redis.call('HMGET', ARGV[3] .. id, 'eu', 'en')
  if f[1] and not expired(f[1], f[2]) then
    live = live + 1
  end
end
return live
"
    ))
});
