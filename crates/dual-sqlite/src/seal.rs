//! The seal of a refinement's connections (dual-sqlite's `SqliteRefiner`): the one table its SQL
//! may read, and SQLite's authorizer that allows nothing else. A leaf of the crate's module graph, so
//! that the pool applies it without depending on the refiner.

use rusqlite::Connection;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};

/// The one table a refinement's SQL reads.
pub const RESULT_TABLE: &str = "result";

/// Seals a reading connection of a refinement: only `result` is readable, and the page cache is
/// `cache_kib` KiB.
pub(crate) fn seal(conn: &mut Connection, cache_kib: u32) -> rusqlite::Result<()> {
    conn.pragma_update(None, "cache_size", -i64::from(cache_kib))?;
    conn.authorizer(Some(authorize))
}

/// What a refinement's connection may do: read `result`, run its query, nothing else.
fn authorize(context: AuthContext<'_>) -> Authorization {
    match context.action {
        AuthAction::Read { table_name, .. } if table_name == RESULT_TABLE => Authorization::Allow,
        AuthAction::Select
        | AuthAction::Function { .. }
        | AuthAction::Recursive
        | AuthAction::Transaction { .. } => Authorization::Allow,
        _ => Authorization::Deny,
    }
}
