//! A Redis-backed [`ResourceStore`](dual_store::ResourceStore) for dual-response deployments of
//! several server instances.
//!
//! Depend on this crate when more than one server process must serve the same resources: a resource
//! created through one instance's MCP endpoint can then be fetched, pinned and deleted through any
//! other. Single-process deployments are better served by `dual_store::MemoryStore`; deployments that
//! must keep pinned resources in durable storage may prefer `dual-store-postgres`.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use dual_store::ResourceStore;
//! use dual_store_redis::RedisStore;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), dual_store_redis::ConnectError> {
//! let store = RedisStore::builder("redis://127.0.0.1:6379")
//!     .key_prefix("myapp:dual:")
//!     .operation_timeout(Duration::from_secs(2))
//!     .connect()
//!     .await?;
//! let purged = store.purge_expired(time::OffsetDateTime::now_utc()).await?;
//! # let _ = purged;
//! # Ok(()) }
//! ```
//!
//! # How records are kept
//!
//! Each record is one hash, `{prefix}r:{id}`, holding the record as JSON (`rec`, as saved) plus the
//! fields that change after creation and supersede parts of it when present: the access counter (`n`,
//! bumped with `HINCRBY`, so concurrent reads never lose a count), the last access time (`la`), the
//! expiry split into whole microseconds and the nanoseconds past them so Lua compares it exactly
//! (`eu`, `en`; absent once pinned), the owner (`o`: `-` for a record without one, else `=` and the
//! owner, so `record_access` checks who may see the record in its script without decoding the JSON;
//! a record saved before this field existed has none, and only then does the script read the owner
//! out of `rec` with `cjson`), and the query's part (`q`): the JSON of `status`, `total_count`,
//! `columns`, `sample`, `consistency`, `lease_expires_at` and `failure`, which `update_query` writes
//! with one `HSET` when the record is there (expired or not), leaving the key's TTL, the saved JSON and
//! every other field alone. A save deletes the key first, so no field of an earlier record survives
//! it. No script re-encodes the JSON (Lua's `cjson` would round big integers and reorder keys): they pass
//! `rec` and `q` through as strings, and the store decodes them preserving key order. Records saved
//! before statuses existed carry none in their JSON and read as `ready`. Every operation is one round
//! trip: a `MULTI` pipeline or a Lua script that checks expiry and updates in one step.
//!
//! Redis's own TTL drives expiry: a save sets `PEXPIRE` to the time left until `expires_at` plus a
//! grace window (one hour by default, [`RedisStoreBuilder::grace`]) and a pin `PERSIST`s the key. During
//! the grace window the store still answers [`Lookup::Expired`](dual_store::Lookup::Expired), so the
//! REST API can tell "expired" from "not found"; after it Redis drops the key by itself and the store
//! answers `Missing`. The record's own `expires_at` decides expiry, never the TTL. A sorted set
//! `{prefix}expiry` (score: `expires_at` in microseconds) indexes unpinned records, so
//! `find_expired` and `purge_expired` cost what has expired, not what is stored; the sweeper mostly
//! trims index entries whose keys Redis already dropped. A set `{prefix}pinned` holds the ids of pinned
//! records: a save without expiry, and a pin, add the id (and take it out of the index), a save with
//! an expiry and a delete remove it, and purges never touch it. `live_count` is one read-only script:
//! the size of the pinned set plus the index entries scored after `now`'s microsecond, with the entries
//! scored within that microsecond checked against their record to the nanosecond. Keys Redis drops by
//! itself do not skew it: their records expired a grace window before the current time, so their
//! leftover index entries score before any current `now`. A `maxmemory-policy` that evicts keys would
//! make it count evicted records (until their expiry, or for pinned ones until deleted).
//!
//! Listings, tasks and MCP sessions: a sorted set `{prefix}o` + the owner field (`-`, or `=` and the
//! owner) holds each owner's record ids at score 0, so `ZRANGE … BYLEX REV` lists them newest first
//! (ULIDs sort by creation as text); a save adds the id and trims the set to its newest 100,000, a
//! delete and a purge remove it, and a listing removes the ids of keys Redis dropped by itself. A
//! task is a hash `{prefix}t:{id}`: the task as saved (`t`), the running instance's last renewal
//! (`r`, of which only its part is read), the cancellation mark (`c`, which a renewal never
//! touches) and its expiry (`eu`, `en`), renewed and cancelled by Lua scripts that check the expiry
//! in the same step. An MCP session is a string `{prefix}m:{id}`, its expiry then its state. Both
//! carry a TTL of their expiry plus the grace window.
//!
//! Timestamps round-trip exactly (nanoseconds). Redis Cluster is not supported: scripts touch the
//! record key and the index in one call, which needs them in one slot (a prefix with a hash tag,
//! such as `{dual}:`, would put them there).
//!
//! # Failures
//!
//! Every call is bounded by the operation timeout. Connection problems and timeouts become
//! [`StoreError::Unavailable`](dual_store::StoreError::Unavailable); the store reconnects by itself
//! (through `redis`'s `ConnectionManager`, and by replacing a connection that stopped answering), so the
//! same store value works again once Redis is back. Logs never contain record contents or the
//! password of the URL.
//!
//! # Environment
//!
//! The store reads no environment variables; pass the URL yourself. This crate's tests that need a
//! server run with its feature `services` (`cargo test -p dual-store-redis --features services`; the
//! library is the same with or without it) and read:
//!
//! | variable | default | used for |
//! |---|---|---|
//! | `DUAL_TEST_REDIS_URL` | `redis://127.0.0.1:6379` | the Redis server the conformance suite and the outage test run against |
//!
//! Tests write only keys under a fresh random prefix (`dual-test:{random}:`) and delete them when done;
//! they fail, rather than skip, when Redis is unreachable (`bash .ci/services` starts it).

mod builder;
mod connection;
mod fields;
mod listing;
mod scripts;
mod sessions;
mod shared;
mod store;
mod tasks;

pub use builder::RedisStoreBuilder;
pub use dual_store::ConnectError;
pub use store::RedisStore;
