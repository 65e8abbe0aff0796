//! The SQL of one store, written once for its table.

use crate::ident::Ident;

/// Every column of the table, in the order [`Sql::save`] binds them.
const COLUMNS: &str = "id, name, query, columns, total_count, sample, created_at, expires_at, \
                       access_count, last_accessed_at, owner, metadata, consistency, status, \
                       lease_expires_at, failure, spooled_rows";

/// Columns later releases added, with their definitions: the migration adds each one missing from a
/// table an earlier release created. Their defaults read the old rows as they were meant: every
/// record stored before snapshots is live, and every one stored before statuses is ready.
const ADDED_COLUMNS: [(&str, &str); 5] = [
    ("consistency", "text NOT NULL DEFAULT 'live'"),
    ("status", "text NOT NULL DEFAULT 'ready'"),
    ("lease_expires_at", "timestamptz"),
    ("failure", "json"),
    ("spooled_rows", "bigint"),
];

/// The statements of a store over one table.
#[derive(Debug)]
pub(crate) struct Sql {
    /// The table, schema-qualified when a schema was given, quoted.
    pub(crate) table: String,
    /// Creates the schema, table and index when missing; safe to run concurrently and repeatedly.
    pub(crate) migrate: String,
    pub(crate) save: String,
    pub(crate) get: String,
    pub(crate) record_access: String,
    pub(crate) pin: String,
    pub(crate) update_query: String,
    pub(crate) delete: String,
    pub(crate) find_expired: String,
    pub(crate) purge_batch: String,
    pub(crate) live_count: String,
    /// One owner's live records below an id, newest first (`$1` owner, `$2` now, `$3` the id bound,
    /// `~` for none: it sorts after every ULID, `$4` limit).
    pub(crate) list_owned: String,
    /// The same for the records created without an owner (`$1` now, `$2` bound, `$3` limit).
    pub(crate) list_unowned: String,
    /// The statements on the tasks table.
    pub(crate) tasks: TaskSql,
    /// The statements on the MCP sessions table, `{table}_sessions`.
    pub(crate) sessions: SessionSql,
}

/// The statements on the MCP sessions table: the state text and its expiry.
#[derive(Debug)]
pub(crate) struct SessionSql {
    pub(crate) save: String,
    pub(crate) load: String,
    pub(crate) delete: String,
    pub(crate) purge: String,
}

impl SessionSql {
    fn new(sessions: &str) -> Self {
        Self {
            save: format!(
                "INSERT INTO {sessions} (id, state, expires_at) VALUES ($1, $2, $3)
ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, expires_at = EXCLUDED.expires_at"
            ),
            load: format!("SELECT state FROM {sessions} WHERE id = $1 AND expires_at > $2"),
            delete: format!("DELETE FROM {sessions} WHERE id = $1"),
            purge: format!("DELETE FROM {sessions} WHERE expires_at <= $1"),
        }
    }
}

/// The statements on the tasks table, `{table}_tasks`: the task as saved (`task`), the running
/// instance's last renewal (`run`), the cancellation mark and the expiry.
#[derive(Debug)]
pub(crate) struct TaskSql {
    pub(crate) save: String,
    pub(crate) get: String,
    pub(crate) update: String,
    pub(crate) cancel: String,
    pub(crate) purge: String,
}

impl TaskSql {
    fn new(tasks: &str) -> Self {
        Self {
            save: format!(
                "INSERT INTO {tasks} (id, task, run, cancel_requested, expires_at) VALUES ($1, $2, NULL, $3, $4)
ON CONFLICT (id) DO UPDATE SET task = EXCLUDED.task, run = NULL,
    cancel_requested = EXCLUDED.cancel_requested, expires_at = EXCLUDED.expires_at"
            ),
            get: format!("SELECT task, run, cancel_requested FROM {tasks} WHERE id = $1 AND expires_at > $2"),
            update: format!(
                "UPDATE {tasks} SET run = $2 WHERE id = $1 AND expires_at > $3 RETURNING cancel_requested"
            ),
            cancel: format!(
                "UPDATE {tasks} SET cancel_requested = TRUE WHERE id = $1 AND expires_at > $2
RETURNING task, run, cancel_requested"
            ),
            purge: format!("DELETE FROM {tasks} WHERE expires_at <= $1"),
        }
    }
}

impl Sql {
    pub(crate) fn new(schema: Option<&Ident>, table: &Ident) -> Self {
        let qualified = match schema {
            Some(schema) => format!("{schema}.{table}"),
            None => table.to_string(),
        };
        let in_schema = |name: &Ident| match schema {
            Some(schema) => format!("{schema}.{name}"),
            None => name.to_string(),
        };
        let index = Ident::index_of(table);
        let qualified_index = in_schema(&index);
        let owner_index = Ident::owner_index_of(table);
        let qualified_owner_index = in_schema(&owner_index);
        let qualified_tasks = in_schema(&Ident::tasks_of(table));
        let qualified_sessions = in_schema(&Ident::sessions_of(table));
        let tasks_index = Ident::expiry_index_of(table, 't');
        let qualified_tasks_index = in_schema(&tasks_index);
        let sessions_index = Ident::expiry_index_of(table, 's');
        let qualified_sessions_index = in_schema(&sessions_index);
        let create_schema = schema.map_or_else(String::new, |schema| {
            format!(
                "IF NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = '{}') THEN \
                     CREATE SCHEMA {schema}; \
                 END IF;",
                schema.as_str()
            )
        });
        let lock_key = lock_key(&qualified);
        let add_columns: String = ADDED_COLUMNS
            .iter()
            .map(|(name, definition)| {
                format!(
                    "
    IF NOT EXISTS (
        SELECT 1 FROM pg_attribute
        WHERE attrelid = to_regclass('{qualified}') AND attname = '{name}' AND NOT attisdropped
    ) THEN
        ALTER TABLE {qualified} ADD COLUMN IF NOT EXISTS {name} {definition};
    END IF;"
                )
            })
            .collect();
        // A `DO` block checks existence before creating, so a role that may use but not create the
        // objects (a DBA created them) still starts; the advisory lock serialises instances starting
        // together. One simple query runs as one transaction, so the lock lasts until the end.
        let migrate = format!(
            "SELECT pg_advisory_xact_lock({lock_key});
DO $migrate$
BEGIN
    {create_schema}
    IF to_regclass('{qualified}') IS NULL THEN
        CREATE TABLE {qualified} (
            id text PRIMARY KEY,
            name text NOT NULL,
            query json NOT NULL,
            columns json NOT NULL,
            total_count bigint NOT NULL,
            sample json NOT NULL,
            created_at timestamptz NOT NULL,
            expires_at timestamptz,
            access_count bigint NOT NULL DEFAULT 0,
            last_accessed_at timestamptz,
            owner text,
            metadata json NOT NULL,
            consistency text NOT NULL DEFAULT 'live',
            status text NOT NULL DEFAULT 'ready',
            lease_expires_at timestamptz,
            failure json,
            spooled_rows bigint
        );
    END IF;
    -- Tables created before snapshots lack `consistency`, before statuses `status`,
    -- `lease_expires_at` and `failure`, and before answers at the first sample `spooled_rows`. Each is checked first, like the table, so a role that may
    -- not alter a table that is already current starts.{add_columns}
    IF to_regclass('{qualified_index}') IS NULL THEN
        CREATE INDEX {index} ON {qualified} (expires_at) WHERE expires_at IS NOT NULL;
    END IF;
    -- Listings (`resources/list`) and tasks arrived after the table.
    IF to_regclass('{qualified_owner_index}') IS NULL THEN
        CREATE INDEX {owner_index} ON {qualified} (owner, id COLLATE \"C\");
    END IF;
    IF to_regclass('{qualified_tasks}') IS NULL THEN
        CREATE TABLE {qualified_tasks} (
            id text PRIMARY KEY,
            task json NOT NULL,
            run json,
            cancel_requested boolean NOT NULL DEFAULT FALSE,
            expires_at timestamptz NOT NULL
        );
    END IF;
    IF to_regclass('{qualified_sessions}') IS NULL THEN
        CREATE TABLE {qualified_sessions} (
            id text PRIMARY KEY,
            state text NOT NULL,
            expires_at timestamptz NOT NULL
        );
    END IF;
    -- The purges of expired tasks and sessions cost what expires.
    IF to_regclass('{qualified_tasks_index}') IS NULL THEN
        CREATE INDEX {tasks_index} ON {qualified_tasks} (expires_at);
    END IF;
    IF to_regclass('{qualified_sessions_index}') IS NULL THEN
        CREATE INDEX {sessions_index} ON {qualified_sessions} (expires_at);
    END IF;
END
$migrate$;"
        );
        // Answers one row: the updated record (all NULL when nothing matched) and whether the id
        // exists at all, which tells `Expired` from `Missing` in the same round trip.
        let update_live = |set: &str| {
            format!(
                "WITH hit AS (
    UPDATE {qualified} SET {set}
    WHERE id = $1 AND (expires_at IS NULL OR expires_at > $2)
    RETURNING {COLUMNS}
)
SELECT hit.*, EXISTS (SELECT 1 FROM {qualified} WHERE id = $1) AS present
FROM (VALUES (1)) AS one (x) LEFT JOIN hit ON TRUE"
            )
        };
        Self {
            migrate,
            save: format!(
                "INSERT INTO {qualified} ({COLUMNS})
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, query = EXCLUDED.query,
    columns = EXCLUDED.columns, total_count = EXCLUDED.total_count, sample = EXCLUDED.sample,
    created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
    access_count = EXCLUDED.access_count, last_accessed_at = EXCLUDED.last_accessed_at,
    owner = EXCLUDED.owner, metadata = EXCLUDED.metadata, consistency = EXCLUDED.consistency,
    status = EXCLUDED.status, lease_expires_at = EXCLUDED.lease_expires_at, failure = EXCLUDED.failure,
    spooled_rows = EXCLUDED.spooled_rows"
            ),
            get: format!("SELECT {COLUMNS} FROM {qualified} WHERE id = $1"),
            // One statement checks liveness and who may see the record ($3 the viewer's filter:
            // `any`, `unowned`, `owner` with $4 the owner, or `none`) and counts. When nothing
            // matched, `expired` tells the rest apart from the row as it was: NULL when there is no
            // row, true when it expired, false when it is live but not the viewer's.
            record_access: format!(
                "WITH hit AS (
    UPDATE {qualified} SET access_count = access_count + 1, last_accessed_at = $2
    WHERE id = $1 AND (expires_at IS NULL OR expires_at > $2)
        AND CASE $3::text WHEN 'any' THEN TRUE WHEN 'none' THEN FALSE
            ELSE owner IS NULL OR ($3::text = 'owner' AND owner = $4::text) END
    RETURNING {COLUMNS}
)
SELECT hit.*, (SELECT expires_at IS NOT NULL AND expires_at <= $2 FROM {qualified} WHERE id = $1) AS expired
FROM (VALUES (1)) AS one (x) LEFT JOIN hit ON TRUE"
            ),
            pin: update_live("expires_at = NULL"),
            // Expired or not: only the query's columns, so a concurrent access or pin is kept.
            update_query: format!(
                "UPDATE {qualified} SET status = $2, total_count = $3, columns = $4, sample = $5,
    consistency = $6, lease_expires_at = $7, failure = $8, spooled_rows = $9
WHERE id = $1"
            ),
            delete: format!("DELETE FROM {qualified} WHERE id = $1"),
            find_expired: format!(
                "SELECT id FROM {qualified} WHERE expires_at <= $1 ORDER BY expires_at, id LIMIT $2"
            ),
            // SKIP LOCKED lets several instances purge at once without waiting on each other; each
            // row is deleted, and counted, by exactly one of them.
            purge_batch: format!(
                "DELETE FROM {qualified} WHERE id IN (
    SELECT id FROM {qualified} WHERE expires_at <= $1
    ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
)"
            ),
            // All records minus the expired ones, rather than `WHERE expires_at IS NULL OR expires_at >
            // $1`: pinned rows are in no index, so that form scans the whole table, while this one counts
            // the narrow primary-key index and the expired end of the expiry index with index-only scans
            // (3-5 times faster on a local table of 200,000 records). Both subqueries see one snapshot.
            live_count: format!(
                "SELECT (SELECT count(*) FROM {qualified})
    - (SELECT count(*) FROM {qualified} WHERE expires_at <= $1)"
            ),
            list_owned: format!(
                "SELECT {COLUMNS} FROM {qualified}
WHERE owner = $1 AND (expires_at IS NULL OR expires_at > $2) AND id COLLATE \"C\" < $3
ORDER BY id COLLATE \"C\" DESC LIMIT $4"
            ),
            list_unowned: format!(
                "SELECT {COLUMNS} FROM {qualified}
WHERE owner IS NULL AND (expires_at IS NULL OR expires_at > $1) AND id COLLATE \"C\" < $2
ORDER BY id COLLATE \"C\" DESC LIMIT $3"
            ),
            tasks: TaskSql::new(&qualified_tasks),
            sessions: SessionSql::new(&qualified_sessions),
            table: qualified,
        }
    }
}

/// A stable advisory-lock key for `table` (FNV-1a), so instances migrating the same table take the
/// same lock and instances of different tables do not wait on each other.
fn lock_key(table: &str) -> i64 {
    let hash = format!("dual-response:{table}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    i64::from_ne_bytes(hash.to_ne_bytes())
}
