//! What the role a [`PgDb`](crate::PgDb) connects as may do beyond reading, checked once when it
//! connects (docs/SECURITY.md, "Least privilege"), and the database's own functions, which the
//! model's SQL may not call unless the operator allows them.

use tokio_postgres::Client;

use crate::error::PgError;

/// Most tables and schemas a finding names.
const NAMED: i64 = 5;

/// Role attributes and memberships beyond reading, and what writes the role may do in the schemas
/// it searches: one row, every part a list of findings.
const CHECK: &str = "
SELECT current_user::text,
  array_remove(ARRAY[
    CASE WHEN r.rolsuper THEN 'superuser' END,
    CASE WHEN r.rolcreaterole THEN 'CREATEROLE' END,
    CASE WHEN r.rolcreatedb THEN 'CREATEDB' END,
    CASE WHEN r.rolreplication THEN 'REPLICATION' END,
    CASE WHEN r.rolbypassrls THEN 'BYPASSRLS' END], NULL),
  ARRAY(SELECT g.rolname::text FROM pg_roles g
        WHERE g.rolname IN ('pg_read_server_files', 'pg_write_server_files', 'pg_execute_server_program',
                            'pg_signal_backend', 'pg_write_all_data', 'pg_checkpoint')
          AND pg_has_role(current_user, g.oid, 'MEMBER') ORDER BY 1),
  ARRAY(SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ANY (current_schemas(false)) AND c.relkind IN ('r', 'p', 'v', 'f')
          AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE') ORDER BY 1 LIMIT $1),
  (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ANY (current_schemas(false)) AND c.relkind IN ('r', 'p', 'v', 'f')
          AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')),
  ARRAY(SELECT n.nspname::text FROM pg_namespace n
        WHERE n.nspname = ANY (current_schemas(false)) AND has_schema_privilege(n.oid, 'CREATE') ORDER BY 1)
FROM pg_roles r WHERE r.rolname = current_user";

/// The functions of the database's own schemas (not the catalog's, not an extension's): of unknown
/// effect to the model's SQL.
const USER_FUNCTIONS: &str = "
SELECT DISTINCT p.proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'
  AND n.nspname NOT LIKE 'pg\\_temp\\_%' AND p.prokind <> 'p'
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                  AND d.deptype = 'e')";

/// What the role may do beyond reading: empty for a read-only role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Privileges {
    pub(crate) role: String,
    pub(crate) found: Vec<String>,
}

/// Checks the role `client` is connected as.
pub(crate) async fn check(client: &Client) -> Result<Privileges, PgError> {
    let row = client
        .query_one(CHECK, &[&NAMED])
        .await
        .map_err(|e| PgError::Connect(Box::new(e)))?;
    let failed = |e| PgError::Connect(Box::new(e));
    let role: String = row.try_get(0).map_err(failed)?;
    let attributes: Vec<String> = row.try_get(1).map_err(failed)?;
    let memberships: Vec<String> = row.try_get(2).map_err(failed)?;
    let tables: Vec<String> = row.try_get(3).map_err(failed)?;
    let writable: i64 = row.try_get(4).map_err(failed)?;
    let schemas: Vec<String> = row.try_get(5).map_err(failed)?;
    // Names a table's owner chose: escaped, for the terminal the message reaches.
    let safe = |names: Vec<String>| -> Vec<String> {
        names
            .iter()
            .map(|n| dual_core::escape::log_safe(n).to_string())
            .collect()
    };
    let (tables, schemas) = (safe(tables), safe(schemas));
    let role = dual_core::escape::log_safe(&role).to_string();
    let mut found = attributes;
    if !memberships.is_empty() {
        found.push(format!("member of {}", memberships.join(", ")));
    }
    if !tables.is_empty() {
        let more = writable - i64::try_from(tables.len()).unwrap_or(writable);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        found.push(format!("may write to {}{more}", tables.join(", ")));
    }
    if !schemas.is_empty() {
        found.push(format!("may create objects in schema {}", schemas.join(", ")));
    }
    Ok(Privileges { role, found })
}

/// The names of the database's own functions.
pub(crate) async fn user_functions(client: &Client) -> Result<Vec<String>, PgError> {
    let rows = client
        .query(USER_FUNCTIONS, &[])
        .await
        .map_err(|e| PgError::Connect(Box::new(e)))?;
    rows.iter()
        .map(|row| row.try_get(0).map_err(|e| PgError::Connect(Box::new(e))))
        .collect()
}
