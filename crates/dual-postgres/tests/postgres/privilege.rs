//! Least privilege at start-up and the function policy (issue 42, items 2, 3 and 10): a role that
//! may do more than read is refused at connect, naming what it may do, unless allowed; the
//! functions that reach outside the data are refused before they reach PostgreSQL, whatever the
//! role; the database's own functions are refused as of unknown effect unless allowed.

use dual_postgres::{FunctionPolicy, PgDb, PgError, PgOptions};
use dual_server::QueryExecutor;
use serde_json::{Value, json};

use crate::{Db, READER, role, run};

/// What a tester tried as `postgres` (issue 42), each with the refusal's code.
const ATTACKS: &[(&str, &str)] = &[
    ("SELECT pg_read_file('/etc/hostname')", "sql_function_refused"),
    ("SELECT * FROM pg_ls_dir('/')", "sql_function_refused"),
    ("SELECT pg_reload_conf()", "sql_function_refused"),
    ("SELECT pg_switch_wal()", "sql_function_refused"),
    ("SELECT pg_create_restore_point('x')", "sql_function_refused"),
    (
        "SELECT pg_logical_emit_message(true, 'p', 'm')",
        "sql_function_refused",
    ),
    (
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity",
        "sql_function_refused",
    ),
    ("SELECT pg_advisory_lock(42)", "sql_function_refused"),
    ("SELECT lo_import('/etc/hostname')", "sql_function_refused"),
    (
        "SELECT set_config('statement_timeout', '0', false)",
        "sql_function_refused",
    ),
    (
        "SELECT * FROM dblink('host=x', 'SELECT 1') AS t(a int)",
        "sql_function_refused",
    ),
    ("/* /* */ SELECT */ DELETE FROM t", "sql_not_a_query"),
    (
        "SELECT 1; SELECT pg_read_file('/etc/passwd')",
        "sql_several_statements",
    ),
    (
        "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
        "sql_data_modifying",
    ),
    ("SELECT * FROM pg_class FOR UPDATE", "sql_locking_clause"),
    ("SELECT 1 INTO copy_of_t", "sql_select_into"),
    ("COPY (SELECT 1) TO PROGRAM 'id'", "sql_not_a_query"),
];

/// Each attack is refused with its code before it reaches `pg`, and `(SELECT 1 AS a)` runs.
async fn attacks_are_refused(pg: &PgDb) {
    for (sql, code) in ATTACKS {
        let (rows, _) = run(pg, sql, Value::Null).await;
        let error = rows.err().unwrap_or_else(|| panic!("ran: {sql}"));
        assert!(error.message().contains(code), "{sql}: {}", error.message());
    }
    let (rows, _) = run(pg, "(SELECT 1 AS a) UNION (SELECT 2) ORDER BY a", Value::Null).await;
    let rows = rows.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        rows.iter().map(|r| r["a"].clone()).collect::<Vec<_>>(),
        [json!(1), json!(2)]
    );
}

#[tokio::test]
async fn a_privileged_role_is_refused_at_connect_naming_what_it_may_do() {
    let db = Db::new().await;
    let Err(refused) = PgDb::connect(db.scratch.url(), PgOptions::default()).await else {
        panic!("connected as a superuser without allow_privileged_role");
    };
    assert_eq!(refused.code(), "privileged_role");
    let message = refused.to_string();
    for part in [
        "superuser",
        "CREATE ROLE reporter",
        "GRANT SELECT",
        "--allow-privileged-role",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }

    // A role whose only excess is a membership, and the same role with writes in its search path.
    let member = role(&db.admin, "dual_test_file_reader").await;
    db.exec(&format!("GRANT pg_read_server_files TO {member}")).await;
    match PgDb::connect(&db.url_as(member), PgOptions::default()).await {
        Err(PgError::PrivilegedRole { role, found }) => {
            assert_eq!(role, member);
            assert_eq!(found, ["member of pg_read_server_files"]);
        }
        other => panic!("a member of pg_read_server_files: {other:?}"),
    }
    let t = db.table("writable");
    db.exec(&format!(
        "CREATE TABLE {t} (x int); GRANT INSERT ON {t} TO {READER}; GRANT CREATE ON SCHEMA {} TO {READER}",
        db.scratch.name()
    ))
    .await;
    let in_scratch = format!(
        "{}?options=-csearch_path%3D{}",
        db.url_as(READER),
        db.scratch.name()
    );
    match PgDb::connect(&in_scratch, PgOptions::default()).await {
        Err(PgError::PrivilegedRole { found, .. }) => assert_eq!(
            found,
            [
                format!("may write to {t}"),
                format!("may create objects in schema {}", db.scratch.name())
            ]
        ),
        other => panic!("a role that may write: {other:?}"),
    }
    // Its own search path holds nothing it may write: it starts.
    assert!(
        PgDb::connect(&db.url_as(READER), PgOptions::default())
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn the_attacks_are_refused_before_postgres_as_a_read_only_role_and_as_a_superuser() {
    let db = Db::new().await;
    attacks_are_refused(&db.pg(PgOptions::default()).await).await;
    attacks_are_refused(&db.pg_privileged(PgOptions::default()).await).await;
}

#[tokio::test]
async fn the_databases_own_functions_are_refused_unless_the_operator_allows_them() {
    let db = Db::new().await;
    let schema = db.scratch.name();
    db.exec(&format!(
        "CREATE FUNCTION {schema}.tax_rate(country text) RETURNS numeric LANGUAGE sql IMMUTABLE
           AS $$ SELECT CASE WHEN country = 'FR' THEN 0.2 ELSE 0.1 END $$;
         CREATE FUNCTION {schema}.Refresh_Totals() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;"
    ))
    .await;
    let pg = db.pg(PgOptions::default()).await;
    for sql in [
        format!("SELECT {schema}.tax_rate('FR') AS r"),
        format!("SELECT x FROM (VALUES (1)) v(x) WHERE {schema}.refresh_totals() = 1"),
    ] {
        let (rows, _) = run(&pg, &sql, Value::Null).await;
        let error = rows.err().unwrap_or_else(|| panic!("ran: {sql}"));
        dual_testkit::database::assert_user_function_refused(&error);
    }

    let allowed = std::sync::Arc::new(pg.sql_executor_with(FunctionPolicy::new().allow("tax_rate")));
    let (start, _announced) = crate::start_channel();
    let sql = format!("SELECT {schema}.tax_rate('FR') AS r");
    let rows = crate::collect(allowed.stream(json!({ "sql": sql }), start))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rows.first().map(|r| r["r"].clone()), Some(json!("0.2")));

    let only = std::sync::Arc::new(pg.sql_executor_with(FunctionPolicy::new().allow_only(["count"])));
    let (start, _announced) = crate::start_channel();
    let refused = crate::collect(only.stream(json!({"sql": "SELECT lower('A') AS a"}), start)).await;
    let error = refused
        .err()
        .unwrap_or_else(|| panic!("lower ran outside the allow list"));
    assert!(
        error.message().contains("not on the operator's list"),
        "{}",
        error.message()
    );
}
