//! Least privilege at start-up and the function policy (issue 42, items 2, 3 and 10): a user that
//! may do more than read is refused at connect, naming what it may do, unless allowed; the functions
//! that reach outside the data are refused before they reach MariaDB, whatever the user; the
//! database's own functions are refused as of unknown effect unless allowed.

use std::sync::Arc;

use dual_mysql::{MyDb, MyOptions};
use dual_server::{QueryExecutor, QueryStart};
use futures_util::StreamExt;
use mysql_async::prelude::Queryable;
use serde_json::json;

use crate::{READER, Scratch, admin};

/// What a tester tried as `root` (issue 42), each with the refusal's code.
const ATTACKS: &[(&str, &str)] = &[
    ("SELECT LOAD_FILE('/etc/passwd')", "sql_function_refused"),
    ("SELECT GET_LOCK('x', 1)", "sql_function_refused"),
    ("SELECT RELEASE_ALL_LOCKS()", "sql_function_refused"),
    // The parser does not read MySQL's file forms of INTO at all.
    ("SELECT 1 INTO OUTFILE '/tmp/dual_out'", "sql_unparsable"),
    ("SELECT 1 INTO DUMPFILE '/tmp/dual_out'", "sql_unparsable"),
    ("SELECT 1 INTO @a", "sql_select_into"),
    ("SELECT * FROM t FOR UPDATE", "sql_locking_clause"),
    ("SELECT * FROM t LOCK IN SHARE MODE", "sql_unparsable"),
    ("SELECT 1; DELETE FROM t", "sql_several_statements"),
    ("DELETE FROM t", "sql_not_a_query"),
    ("SET @a = 1", "sql_not_a_query"),
];

/// Each attack is refused with its code before it reaches `db`, and parenthesized queries run.
async fn attacks_are_refused(db: &MyDb) {
    let executor = Arc::new(db.sql_executor());
    for (sql, code) in ATTACKS {
        let error = rows_of(&executor, sql)
            .await
            .err()
            .unwrap_or_else(|| panic!("ran: {sql}"));
        assert!(error.message().contains(code), "{sql}: {}", error.message());
    }
    let rows = rows_of(&executor, "(SELECT 1 AS a) UNION (SELECT 2) ORDER BY a")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        rows.iter().map(|r| r["a"].clone()).collect::<Vec<_>>(),
        [json!(1), json!(2)]
    );
}

/// Every row of the model's `sql`, or the first error.
async fn rows_of(
    executor: &Arc<dual_mysql::MyExecutor>,
    sql: &str,
) -> Result<Vec<dual_core::Row>, dual_server::ExecutorError> {
    let mut stream = Arc::clone(executor).stream(json!({ "sql": sql }), QueryStart::detached());
    let mut rows = Vec::new();
    while let Some(batch) = stream.next().await {
        rows.extend(batch?.into_rows()?);
    }
    Ok(rows)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_privileged_user_is_refused_at_connect_naming_what_it_may_do() {
    let scratch = Scratch::new().await;
    let Err(refused) = MyDb::connect(&scratch.url_as(None), MyOptions::default()).await else {
        panic!("connected as root without allow_privileged_role");
    };
    assert_eq!(refused.code(), "privileged_role");
    let message = refused.to_string();
    for part in [
        "global privileges FILE, SUPER",
        "may read mysql.user",
        "CREATE USER 'reporter'",
        "--allow-privileged-role",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    // A user whose only excess is writing one table.
    let writer = "dual_test_writer";
    let mut admin = admin(&scratch.url).await;
    for sql in [
        format!("CREATE TABLE {}.t (x INT)", scratch.name),
        format!("CREATE USER IF NOT EXISTS '{writer}'@'%'"),
        format!("GRANT SELECT ON {}.* TO '{writer}'@'%'", scratch.name),
        format!("GRANT INSERT, DELETE ON {}.t TO '{writer}'@'%'", scratch.name),
    ] {
        admin.query_drop(sql).await.unwrap_or_else(|e| panic!("{e}"));
    }
    let refused = MyDb::connect(&scratch.url_as(Some(writer)), MyOptions::default()).await;
    for sql in [
        format!("REVOKE ALL PRIVILEGES ON {}.t FROM '{writer}'@'%'", scratch.name),
        format!("REVOKE ALL PRIVILEGES ON {}.* FROM '{writer}'@'%'", scratch.name),
    ] {
        admin.query_drop(sql).await.unwrap_or_else(|e| panic!("{e}"));
    }
    match refused {
        Err(dual_mysql::MyError::PrivilegedRole { user, found }) => {
            assert!(user.starts_with(writer), "{user}");
            let mut found = found;
            found.sort();
            let table = format!("{}.t", scratch.name);
            assert!(
                found == [format!("privileges INSERT, DELETE on table {table}")]
                    || found == [format!("privileges DELETE, INSERT on table {table}")],
                "{found:?}"
            );
        }
        other => panic!("a user that may write: {other:?}"),
    }
    // The read-only user starts.
    assert!(
        MyDb::connect(&scratch.url_as(Some(READER)), MyOptions::default())
            .await
            .is_ok()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_attacks_are_refused_before_mariadb_as_a_read_only_user_and_as_root() {
    let mut scratch = Scratch::new().await;
    attacks_are_refused(&scratch.db(MyOptions::default()).await).await;
    scratch.privileged = true;
    attacks_are_refused(&scratch.db(MyOptions::default()).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_databases_own_functions_are_refused_unless_the_operator_allows_them() {
    let scratch = Scratch::new().await;
    let mut admin = admin(&scratch.url_as(None)).await;
    admin
        .query_drop(
            "CREATE FUNCTION tax_rate(country VARCHAR(2)) RETURNS DECIMAL(3,2) DETERMINISTIC \
                     RETURN IF(country = 'FR', 0.2, 0.1)",
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    admin
        .query_drop(format!("GRANT EXECUTE ON {}.* TO '{READER}'@'%'", scratch.name))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let db = scratch.db(MyOptions::default()).await;
    let sql = "SELECT tax_rate('FR') AS r";
    let error = rows_of(&Arc::new(db.sql_executor()), sql)
        .await
        .err()
        .unwrap_or_else(|| panic!("ran: {sql}"));
    dual_testkit::database::assert_user_function_refused(&error);
    let allowed = Arc::new(db.sql_executor_with(dual_mysql::FunctionPolicy::new().allow("TAX_RATE")));
    let rows = rows_of(&allowed, sql).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.first().map(|r| r["r"].clone()), Some(json!("0.20")));
    let only = Arc::new(db.sql_executor_with(dual_mysql::FunctionPolicy::new().allow_only(["count"])));
    let error = rows_of(&only, "SELECT LOWER('A') AS a")
        .await
        .err()
        .unwrap_or_else(|| panic!("ran"));
    assert!(
        error.message().contains("not on the operator's list"),
        "{}",
        error.message()
    );
}
