//! A PostgreSQL-backed [`ResourceStore`](dual_store::ResourceStore) for dual-response deployments of
//! several server instances.
//!
//! Depend on this crate when several server processes must serve the same resources and pinned
//! resources must outlive restarts of all of them. `dual-store-redis` is the lighter choice when
//! Redis is already at hand; `dual_store::MemoryStore` serves single-process deployments.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use dual_store::ResourceStore;
//! use dual_store_postgres::PostgresStore;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), dual_store_postgres::ConnectError> {
//! let store = PostgresStore::builder("postgres://app@127.0.0.1:5432/app")
//!     .schema("dual")
//!     .pool_size(8)
//!     .operation_timeout(Duration::from_secs(2))
//!     .connect()
//!     .await?;
//! let purged = store.purge_expired(time::OffsetDateTime::now_utc()).await?;
//! # let _ = purged;
//! # Ok(()) }
//! ```
//!
//! # The table
//!
//! One table (default `dual_resources`, optionally in a schema of its own), created at start-up by an
//! idempotent migration (existence checks under an advisory lock, so instances starting together do not
//! race, and a role that may not create tables starts fine once a DBA has created them):
//!
//! ```sql
//! CREATE TABLE dual_resources (
//!     id text PRIMARY KEY,              -- the ULID
//!     name text NOT NULL,
//!     query json NOT NULL,              -- json, not jsonb: object keys keep their order
//!     columns json NOT NULL,
//!     total_count bigint NOT NULL,
//!     sample json NOT NULL,
//!     created_at timestamptz NOT NULL,
//!     expires_at timestamptz,           -- NULL once pinned
//!     access_count bigint NOT NULL DEFAULT 0,
//!     last_accessed_at timestamptz,
//!     owner text,
//!     metadata json NOT NULL,
//!     consistency text NOT NULL DEFAULT 'live', -- snapshot | live
//!     status text NOT NULL DEFAULT 'ready',     -- pending | ready | failed
//!     lease_expires_at timestamptz,             -- while pending or spooling
//!     failure json,                             -- {"code": …, "message": …} once failed
//!     spooled_rows bigint                       -- while a ready resource's snapshot is written
//! );
//! CREATE INDEX dual_resources_expires_at_idx ON dual_resources (expires_at) WHERE expires_at IS NOT NULL;
//! -- `list`: one owner's records newest first (ULIDs compared bytewise)
//! CREATE INDEX dual_resources_owner_idx ON dual_resources (owner, id COLLATE "C");
//! -- durable MCP tasks: the task as saved, the running instance's renewal, the cancellation mark
//! CREATE TABLE dual_resources_tasks (id text PRIMARY KEY, task json NOT NULL, run json,
//!     cancel_requested boolean NOT NULL DEFAULT FALSE, expires_at timestamptz NOT NULL);
//! -- MCP session state, restorable on any instance
//! CREATE TABLE dual_resources_sessions (id text PRIMARY KEY, state text NOT NULL, expires_at timestamptz NOT NULL);
//! CREATE INDEX dual_resources_t_exp_idx ON dual_resources_tasks (expires_at);
//! CREATE INDEX dual_resources_s_exp_idx ON dual_resources_sessions (expires_at);
//! ```
//!
//! A renewal of a task (`update_task`) writes `run` only, so a cancellation set meanwhile stays;
//! expired tasks and sessions go with the purge of expired records.
//!
//! The migration also brings a table of an earlier release up to date: it adds each of `consistency`,
//! `status`, `lease_expires_at`, `failure` and `spooled_rows` that is missing (`ADD COLUMN IF NOT EXISTS`), so the
//! records already there read as live and ready, without lease or failure. An unknown `consistency`,
//! `status` or failure code read back is [`StoreError::Corrupt`](dual_store::StoreError::Corrupt)
//! naming its column.
//!
//! `update_query` is one `UPDATE … SET status, total_count, columns, sample, consistency,
//! lease_expires_at, failure, spooled_rows WHERE id = $1`: expired or not, and never touching the access count, the
//! last access or the expiry, so a concurrent access or pin is kept.
//!
//! Accesses are counted by one `UPDATE … SET access_count = access_count + 1 … WHERE id = $1 AND
//! (expires_at IS NULL OR expires_at > $2) RETURNING …`, which also reports in the same round trip
//! whether a non-matching id is expired or missing. Purges delete in batches (`purge_batch`, default
//! 1,000) with `FOR UPDATE SKIP LOCKED`, so several instances can sweep at once and each record is
//! counted once; the partial index makes a purge cost what has expired. `live_count` is all rows minus
//! the expired ones, counted with index-only scans of the primary key and the partial index: it reads
//! an index entry per stored record (PostgreSQL keeps no row count), but the table itself only for
//! pages changed since they were last vacuumed.
//!
//! Timestamps are kept to the microsecond, PostgreSQL's resolution: the store truncates every
//! timestamp it writes and every `now` it compares to whole microseconds, so expiry is decided exactly
//! at that resolution.
//!
//! # Failures
//!
//! Connections come from a `deadpool-postgres` pool. Waiting for or opening a connection is bounded by
//! the connect timeout, every statement by the operation timeout (on the client, and as the server's
//! `statement_timeout`). Unreachable servers, broken connections and timeouts become
//! [`StoreError::Unavailable`](dual_store::StoreError::Unavailable); a connection that broke or timed
//! out is discarded, so the same store works again by itself once the database is back. TLS is not
//! supported yet (connect over a trusted network or a local socket). Logs never contain record
//! contents, SQL parameters or the password.
//!
//! # Environment
//!
//! The store reads no environment variables; pass the URL yourself. This crate's tests that need a
//! server run with its feature `services` (`cargo test -p dual-store-postgres --features services`;
//! the library is the same with or without it) and read:
//!
//! | variable | default | used for |
//! |---|---|---|
//! | `DUAL_TEST_POSTGRES_URL` | `postgres://postgres@127.0.0.1:5432/test` | the database the conformance suite and the outage test run against |
//!
//! Tests create a fresh schema `dual_test_{random}` (one table per store inside it), drop it when done,
//! and fail, rather than skip, when PostgreSQL is unreachable (`bash .ci/services` starts it).

mod builder;
mod error;
mod ident;
mod row;
mod shared;
mod sql;
mod store;
mod tasks;

pub use builder::PostgresStoreBuilder;
pub use dual_store::ConnectError;
pub use store::PostgresStore;
