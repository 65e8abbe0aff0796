//! What the user a [`MyDb`](crate::MyDb) connects as may do beyond reading, checked once when it
//! connects (docs/SECURITY.md, "Least privilege"), and the database's own functions, which the
//! model's SQL may not call unless the operator allows them.

use mysql_async::Conn;
use mysql_async::prelude::Queryable;

use crate::error::MyError;

/// Privileges that only read: every other one is a finding.
const READING: &[&str] = &["SELECT", "SHOW VIEW", "SHOW DATABASES", "USAGE", "EXECUTE"];

/// Privileges named first, being the worst.
const WORST: &[&str] = &[
    "FILE",
    "SUPER",
    "PROCESS",
    "SHUTDOWN",
    "CREATE USER",
    "GRANT OPTION",
];

/// Most privileges one finding names.
const NAMED: usize = 8;

/// The user's grants, global, per schema and per table: `(scope, privilege)`, scope `""` for
/// global. `information_schema` shows the connected user's own grants.
const GRANTS: &str = "
SELECT '' AS scope, p.PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES p JOIN me ON p.GRANTEE = me.g
UNION ALL SELECT p.TABLE_SCHEMA, p.PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES p JOIN me ON p.GRANTEE = me.g
UNION ALL SELECT CONCAT(p.TABLE_SCHEMA, '.', p.TABLE_NAME), p.PRIVILEGE_TYPE
  FROM information_schema.TABLE_PRIVILEGES p JOIN me ON p.GRANTEE = me.g";

/// `'user'@'host'` of the connected user, as `information_schema` writes a grantee.
const ME: &str = "WITH me AS (SELECT CONCAT('''', LEFT(CURRENT_USER(), LENGTH(CURRENT_USER()) - \
LENGTH(SUBSTRING_INDEX(CURRENT_USER(), '@', -1)) - 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''') AS g)";

/// The stored functions of the database's own schemas: of unknown effect to the model's SQL.
const USER_FUNCTIONS: &str = "SELECT DISTINCT ROUTINE_NAME FROM information_schema.ROUTINES \
WHERE ROUTINE_TYPE = 'FUNCTION' AND ROUTINE_SCHEMA NOT IN ('sys', 'mysql', 'information_schema', 'performance_schema')";

/// What the user may do beyond reading: empty for a read-only user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Privileges {
    pub(crate) user: String,
    pub(crate) found: Vec<String>,
}

fn failed(error: mysql_async::Error) -> MyError {
    MyError::Connect(Box::new(error))
}

/// Checks the user `conn` is connected as.
pub(crate) async fn check(conn: &mut Conn) -> Result<Privileges, MyError> {
    let user: Option<String> = conn.query_first("SELECT CURRENT_USER()").await.map_err(failed)?;
    let grants: Vec<(String, String)> = conn.query(format!("{ME} {GRANTS}")).await.map_err(failed)?;
    let mut scopes: Vec<(String, Vec<String>)> = Vec::new();
    for (scope, privilege) in grants {
        if READING.contains(&privilege.as_str()) {
            continue;
        }
        match scopes.iter_mut().find(|(s, _)| *s == scope) {
            Some((_, privileges)) => privileges.push(privilege),
            None => scopes.push((scope, vec![privilege])),
        }
    }
    let mut found: Vec<String> = scopes
        .into_iter()
        .map(|(scope, mut privileges)| {
            privileges.sort_by_key(|p| WORST.iter().position(|w| w == p).unwrap_or(WORST.len()));
            let named = named(&privileges);
            // Names a table's owner chose: escaped, for the terminal the message reaches.
            let scope = dual_core::escape::log_safe(&scope).to_string();
            match scope.as_str() {
                "" => format!("global privileges {named}"),
                s if s.contains('.') => format!("privileges {named} on table {s}"),
                s => format!("privileges {named} on schema {s}"),
            }
        })
        .collect();
    // Global SELECT (or a grant on `mysql`) reads the password hashes.
    if conn.query_drop("SELECT 1 FROM mysql.user LIMIT 0").await.is_ok() {
        found.push("may read mysql.user (the password hashes)".to_owned());
    }
    Ok(Privileges {
        user: dual_core::escape::log_safe(&user.unwrap_or_default()).to_string(),
        found,
    })
}

/// `A, B, C and 4 more`.
fn named(privileges: &[String]) -> String {
    let mut text = privileges
        .iter()
        .take(NAMED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if privileges.len() > NAMED {
        text.push_str(&format!(" and {} more", privileges.len() - NAMED));
    }
    text
}

/// The names of the database's own functions: stored functions, and loadable ones (`mysql.func`,
/// when the user may read it).
pub(crate) async fn user_functions(conn: &mut Conn) -> Result<Vec<String>, MyError> {
    let mut names: Vec<String> = conn.query(USER_FUNCTIONS).await.map_err(failed)?;
    if let Ok(loadable) = conn.query::<String, _>("SELECT name FROM mysql.func").await {
        names.extend(loadable);
    }
    Ok(names)
}
