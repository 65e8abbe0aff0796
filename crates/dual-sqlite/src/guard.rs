//! Accepting only one read-only query.

use dual_sql::sql_guard::{FunctionPolicy, SqlDialect, read_only_query_with};
use rusqlite::Connection;

/// Why a SQL text was refused, in words for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused(pub(crate) String);

/// Checks that `sql` is exactly one read-only query and returns the statement to run, ready to be
/// wrapped as a subquery.
///
/// Three locks, any of which alone refuses a write: dual-sql's `sql_guard` parses it as SQLite and
/// accepts one query that only reads (`SELECT`, `WITH … SELECT`, `VALUES`, set operations), written
/// back without comments or `;`; SQLite must compile that to exactly one statement that
/// `sqlite3_stmt_readonly` calls read-only; and the connection it later runs on is opened read-only
/// with `PRAGMA query_only`.
pub(crate) fn check_select(conn: &Connection, sql: &str, policy: &FunctionPolicy) -> Result<String, Refused> {
    let sql = read_only_query_with(sql, SqlDialect::Sqlite, policy)
        .map_err(|refused| Refused(refused.to_string()))?;
    let stmt = conn.prepare_cached(&sql).map_err(|error| match error {
        rusqlite::Error::MultipleStatement => {
            Refused("Only one statement is allowed: remove everything after the first ';'.".to_owned())
        }
        other => Refused(sqlite_message(&other)),
    })?;
    if !stmt.readonly() {
        return Err(Refused(
            "Only read-only queries are allowed: this statement would modify the database.".to_owned(),
        ));
    }
    Ok(sql)
}

/// SQLite's own message for `error` (what the model needs to correct its SQL).
pub(crate) fn sqlite_message(error: &rusqlite::Error) -> String {
    match error {
        rusqlite::Error::SqliteFailure(code, message) => {
            if code.code == rusqlite::ErrorCode::OperationInterrupted {
                "interrupted".to_owned()
            } else {
                message.clone().unwrap_or_else(|| code.to_string())
            }
        }
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        rusqlite::Error::InvalidParameterName(name) => {
            format!(
                "the SQL has no parameter `{name}`: name parameters in the SQL as :{name}, @{name} or ${name}"
            )
        }
        rusqlite::Error::InvalidParameterCount(given, wanted) => format!(
            "the SQL has {wanted} parameter(s), each to be bound exactly once; {given} value(s) were given"
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let conn = Connection::open_in_memory().expect("in-memory db");
        conn.execute_batch("CREATE TABLE t (id INTEGER, name TEXT); INSERT INTO t VALUES (1, 'a');")
            .expect("schema");
        conn
    }

    #[test]
    fn accepts_queries_and_runs_them_as_parsed() {
        let conn = db();
        for (sql, want) in [
            ("SELECT * FROM t", "SELECT * FROM t"),
            ("  select id from t ;  ", "SELECT id FROM t"),
            ("SELECT 1; -- trailing comment", "SELECT 1"),
            (
                "-- leading\nWITH x AS (SELECT 1) SELECT * FROM x;",
                "WITH x AS (SELECT 1) SELECT * FROM x",
            ),
            ("SELECT 1 -- no newline", "SELECT 1"),
            ("(SELECT 1 AS a)", "SELECT * FROM (SELECT 1 AS a) AS dual_member"),
            (
                "(SELECT 1) UNION (SELECT 2) ORDER BY 1",
                "SELECT * FROM (SELECT 1) AS dual_member UNION SELECT * FROM (SELECT 2) AS dual_member ORDER BY 1",
            ),
            ("VALUES (1), (2)", "VALUES (1), (2)"),
        ] {
            assert_eq!(
                check_select(&conn, sql, &FunctionPolicy::new()).as_deref(),
                Ok(want),
                "{sql}"
            );
        }
    }

    #[test]
    fn keeps_parameters_as_written() {
        let conn = db();
        for (sql, want) in [
            ("SELECT * FROM t WHERE id = ?", "SELECT * FROM t WHERE id = ?"),
            (
                "SELECT * FROM t WHERE id = :id ; -- end\n",
                "SELECT * FROM t WHERE id = :id",
            ),
            ("SELECT ';' || ? AS v", "SELECT ';' || ? AS v"),
            ("SELECT ? /* ; */", "SELECT ?"),
            (
                "SELECT * FROM t WHERE id = ?1 OR id = @n OR id = $m",
                "SELECT * FROM t WHERE id = ?1 OR id = @n OR id = $m",
            ),
        ] {
            assert_eq!(
                check_select(&conn, sql, &FunctionPolicy::new()).as_deref(),
                Ok(want),
                "{sql}"
            );
        }
    }

    #[test]
    fn refuses_writes_and_several_statements() {
        let conn = db();
        for sql in [
            "DELETE FROM t",
            "DROP TABLE t",
            "INSERT INTO t VALUES (2, 'b')",
            "UPDATE t SET name = 'x'",
            "WITH x AS (SELECT 1) DELETE FROM t",
            "SELECT 1; DELETE FROM t",
            "SELECT 1; SELECT 2",
            "PRAGMA writable_schema = 1",
            "ATTACH ':memory:' AS other",
            "/* hi */ VACUUM",
            "",
            "   ;",
            "SELECT * FROM t WHERE id = ?; DELETE FROM t",
        ] {
            assert!(check_select(&conn, sql, &FunctionPolicy::new()).is_err(), "{sql}");
        }
        let count: i64 = conn
            .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
            .unwrap_or_default();
        assert_eq!(count, 1);
    }

    #[test]
    fn carries_sqlites_message() {
        let conn = db();
        let Err(Refused(message)) = check_select(&conn, "SELECT nope FROM t", &FunctionPolicy::new()) else {
            panic!("expected a refusal");
        };
        assert_eq!(message, "no such column: nope");
        let Err(Refused(message)) = check_select(&conn, "SELECT 1; DELETE FROM t", &FunctionPolicy::new())
        else {
            panic!("expected a refusal");
        };
        assert!(
            message.contains("2 statements") && message.contains("sql_several_statements"),
            "{message}"
        );
    }
}
