use super::{RefusalCode, SqlDialect, read_only_query};

const ALL: [SqlDialect; 3] = [SqlDialect::PostgreSql, SqlDialect::MySql, SqlDialect::Sqlite];

fn refused(sql: &str, dialect: SqlDialect) -> RefusalCode {
    match read_only_query(sql, dialect) {
        Ok(accepted) => panic!("{dialect:?} accepted {sql:?} as {accepted:?}"),
        Err(refused) => {
            let message = refused.to_string();
            assert!(
                message.contains(refused.code().as_str()),
                "the message carries its code: {message}"
            );
            refused.code()
        }
    }
}

#[test]
fn queries_of_every_shape_are_accepted_in_every_dialect() {
    for dialect in ALL {
        for sql in [
            "SELECT 1",
            " select 1 ; -- end",
            "/* c */ WITH x AS (SELECT 1 AS a) SELECT * FROM x",
            "(SELECT 1 AS a)",
            "(SELECT 1) UNION (SELECT 2)",
            "SELECT a FROM t WHERE a IN (SELECT b FROM u) ORDER BY a LIMIT 5",
            "SELECT 1 UNION ALL SELECT 2 EXCEPT SELECT 3",
            "SELECT COUNT(*) AS n FROM t GROUP BY k HAVING COUNT(*) > 1",
        ] {
            if let Err(refused) = read_only_query(sql, dialect) {
                panic!("{dialect:?} refused {sql:?}: {refused}");
            }
        }
    }
}

#[test]
fn what_runs_is_the_parsed_statement_without_its_comments() {
    let sql = read_only_query("SELECT 1 AS one -- a note\n /* more */ ;", SqlDialect::PostgreSql);
    assert_eq!(sql.as_deref(), Ok("SELECT 1 AS one"));
    // `TABLE t` is the `SELECT * FROM t` it stands for.
    assert_eq!(
        read_only_query("TABLE t -- all of it", SqlDialect::PostgreSql).as_deref(),
        Ok("SELECT * FROM t")
    );
    assert_eq!(
        read_only_query("/* x */ TABLE s.t;", SqlDialect::PostgreSql).as_deref(),
        Ok("SELECT * FROM s.t")
    );
    assert_eq!(
        refused("TABLE t; DELETE FROM t", SqlDialect::PostgreSql),
        RefusalCode::SeveralStatements
    );
    assert!(read_only_query("VALUES (1), (2)", SqlDialect::PostgreSql).is_ok());
    assert!(read_only_query("VALUES (1), (2)", SqlDialect::Sqlite).is_ok());
}

#[test]
fn statements_that_are_not_queries_are_refused_naming_them() {
    for dialect in ALL {
        for sql in [
            "DELETE FROM t",
            "UPDATE t SET x = 0",
            "INSERT INTO t (x) VALUES (3)",
            "DROP TABLE t",
            "CREATE TABLE t2 (y INTEGER)",
            "BEGIN",
            "COMMIT",
        ] {
            let code = refused(sql, dialect);
            assert!(
                matches!(code, RefusalCode::NotAQuery | RefusalCode::Unparsable),
                "{dialect:?} {sql}: {code}"
            );
        }
        let message = read_only_query("DELETE FROM t", dialect)
            .err()
            .map(|r| r.to_string())
            .unwrap_or_default();
        assert!(message.contains("`DELETE FROM t`"), "names it: {message}");
        assert!(message.contains("SELECT"), "says what to send: {message}");
    }
}

#[test]
fn nothing_or_several_statements_are_refused() {
    for dialect in ALL {
        assert_eq!(refused("", dialect), RefusalCode::Empty, "{dialect:?}");
        assert_eq!(
            refused(" -- only a comment", dialect),
            RefusalCode::Empty,
            "{dialect:?}"
        );
        assert_eq!(
            refused("SELECT 1; DELETE FROM t", dialect),
            RefusalCode::SeveralStatements,
            "{dialect:?}"
        );
        assert_eq!(
            refused("SELECT 1; SELECT 2", dialect),
            RefusalCode::SeveralStatements,
            "{dialect:?}"
        );
    }
}

#[test]
fn a_statement_hidden_in_nested_comments_is_read_as_postgresql_reads_it() {
    assert_eq!(
        refused("/* /* */ SELECT */ DELETE FROM t", SqlDialect::PostgreSql),
        RefusalCode::NotAQuery
    );
}

#[test]
fn data_modifying_ctes_locking_clauses_and_into_are_refused_at_any_depth() {
    let pg = SqlDialect::PostgreSql;
    assert_eq!(
        refused("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", pg),
        RefusalCode::DataModifying
    );
    assert_eq!(
        refused("WITH u AS (UPDATE t SET x = 1 RETURNING x) SELECT * FROM u", pg),
        RefusalCode::DataModifying
    );
    assert_eq!(
        refused("SELECT * FROM t FOR UPDATE", pg),
        RefusalCode::LockingClause
    );
    assert_eq!(
        refused("SELECT * FROM t FOR SHARE", pg),
        RefusalCode::LockingClause
    );
    assert_eq!(
        refused("SELECT * FROM (SELECT * FROM t FOR UPDATE) AS s", pg),
        RefusalCode::LockingClause
    );
    assert_eq!(refused("SELECT * INTO t2 FROM t", pg), RefusalCode::SelectInto);
    assert_eq!(
        refused("SELECT 1 UNION SELECT * INTO t2 FROM t", pg),
        RefusalCode::SelectInto
    );
    for sql in [
        "COPY t TO PROGRAM 'id'",
        "CALL p()",
        "SET x = 1",
        "DO $$ BEGIN END $$",
    ] {
        let code = refused(sql, pg);
        assert!(
            matches!(code, RefusalCode::NotAQuery | RefusalCode::Unparsable),
            "{sql}: {code}"
        );
    }
    let my = SqlDialect::MySql;
    let code = refused("SELECT * FROM t LOCK IN SHARE MODE", my);
    assert!(
        matches!(code, RefusalCode::LockingClause | RefusalCode::Unparsable),
        "{code}"
    );
    assert_eq!(
        refused("SELECT * FROM t FOR UPDATE", my),
        RefusalCode::LockingClause
    );
    for sql in [
        "SELECT * FROM t INTO OUTFILE '/tmp/x'",
        "SELECT * INTO DUMPFILE '/tmp/x' FROM t",
        "SELECT 1 INTO @v",
    ] {
        let code = refused(sql, my);
        assert!(
            matches!(code, RefusalCode::SelectInto | RefusalCode::Unparsable),
            "{sql}: {code}"
        );
    }
    for sql in [
        "ATTACH DATABASE 'x.db' AS x",
        "PRAGMA writable_schema = 1",
        "VACUUM INTO 'x.db'",
    ] {
        let code = refused(sql, SqlDialect::Sqlite);
        assert!(
            matches!(code, RefusalCode::NotAQuery | RefusalCode::Unparsable),
            "{sql}: {code}"
        );
    }
}

#[test]
fn a_comment_mysql_would_run_is_read_and_never_sent_as_a_comment() {
    // MySQL runs the text of `/*! … */`: the parser reads it too, so what it hides is judged, and
    // what is sent is the statement as parsed.
    assert_eq!(
        refused("SELECT 1 /*! ; DELETE FROM t */", SqlDialect::MySql),
        RefusalCode::SeveralStatements
    );
    let sent = read_only_query("SELECT 1 /*!, 2 */ AS n", SqlDialect::MySql);
    assert!(sent.as_deref().is_ok_and(|sql| !sql.contains("/*")), "{sent:?}");
}

#[test]
fn text_the_parser_cannot_read_is_refused_with_its_message() {
    for dialect in ALL {
        let refusal = read_only_query("SELEC 1", dialect).err();
        let message = refusal.as_ref().map(ToString::to_string).unwrap_or_default();
        assert_eq!(
            refusal.map(|r| r.code()),
            Some(RefusalCode::Unparsable),
            "{dialect:?}"
        );
        assert!(message.contains(dialect.as_str()), "{message}");
    }
    // Within the limits, long chains and nesting are read.
    for dialect in ALL {
        let long = format!("SELECT 1 FROM t WHERE {}", "x OR ".repeat(1_900) + "y");
        assert!(read_only_query(&long, dialect).is_ok(), "{dialect:?}");
        let unions = format!("SELECT 1 {}", "UNION SELECT 1 ".repeat(240));
        assert!(read_only_query(&unions, dialect).is_ok(), "{dialect:?}");
        let nested = format!("SELECT {}1{}", "abs(".repeat(40), ")".repeat(40));
        let read = read_only_query(&nested, dialect);
        assert!(read.is_ok(), "{dialect:?}: {read:?}");
    }
    // Past them, every shape is refused — never a stack overflow, whatever the caller's thread.
    for dialect in ALL {
        for deep in [
            format!("SELECT {}1{}", "(".repeat(500), ")".repeat(500)),
            format!("SELECT {}1{}", "(SELECT ".repeat(300), ")".repeat(300)),
            format!("SELECT {}1{}", "abs(".repeat(500), ")".repeat(500)),
            format!(
                "SELECT {}1{}",
                "CASE WHEN 1 THEN ".repeat(300),
                " END".repeat(300)
            ),
            format!(
                "SELECT * FROM {}t{}",
                "(SELECT * FROM ".repeat(300),
                ") AS s".repeat(300)
            ),
            format!("{}SELECT 1{}", "(".repeat(500), ")".repeat(500)),
            format!("SELECT 1 {}", "UNION SELECT 1 ".repeat(5_000)),
            format!("SELECT {}", "- ".repeat(5_000) + "1"),
            format!("SELECT {}", "NOT ".repeat(5_000) + "1"),
            format!("SELECT 1 FROM t WHERE {}", "a = 1 OR ".repeat(5_000) + "a = 2"),
            format!("SELECT {}", "1 + ".repeat(5_000) + "1"),
        ] {
            assert!(
                read_only_query(&deep, dialect).is_err(),
                "{dialect:?}: {}",
                &deep[..40]
            );
        }
    }
}

/// What the guard accepts, and the SQL it returns to run, are one read-only query in that dialect:
/// the returned text, checked again, is never refused as anything but text the parser cannot read
/// (a statement the guard accepted never writes back as a write), and when it parses it is exactly
/// one query statement. (The same property as the `sql_guard` fuzz target.)
fn accepted_is_one_read_only_query(sql: &str, dialect: SqlDialect) {
    let Ok(out) = read_only_query(sql, dialect) else {
        return;
    };
    if let Err(refused) = read_only_query(&out, dialect) {
        assert_eq!(
            refused.code(),
            RefusalCode::Unparsable,
            "{dialect:?}: {sql:?} was accepted as {out:?}, which is refused: {refused}"
        );
    }
    if let Ok(statements) = sqlparser::parser::Parser::parse_sql(dialect.parser_dialect(), &out) {
        assert!(
            matches!(statements.as_slice(), [sqlparser::ast::Statement::Query(_)]),
            "{dialect:?}: {out:?}"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

    /// Statements made of the words and marks the bypasses above use, in any order.
    #[test]
    fn whatever_the_guard_accepts_is_one_read_only_query(
        words in proptest::collection::vec(proptest::sample::select(vec![
            "SELECT", "1", "x", "t", "FROM", "WHERE", "(", ")", ",", ";", "--", "\n", "/*", "*/", "/*!",
            "WITH", "AS", "DELETE", "UPDATE", "SET", "INSERT", "INTO", "VALUES", "UNION", "ALL", "TABLE",
            "FOR", "SHARE", "RETURNING", "*", "'", "\"", "`", "$$", "OUTFILE", "'f'", "=", "OR", "NOT",
            "CASE", "WHEN", "THEN", "END", "LOCK", "IN", "MODE", "ORDER", "BY", "LIMIT", "PRAGMA",
        ]), 0..24),
        dialect in proptest::sample::select(ALL.to_vec()),
    ) {
        accepted_is_one_read_only_query(&words.join(" "), dialect);
    }

    /// Any text at all: never a panic, and the same property.
    #[test]
    fn any_text_is_refused_or_one_read_only_query(sql in "\\PC{0,80}", dialect in proptest::sample::select(ALL.to_vec())) {
        accepted_is_one_read_only_query(&sql, dialect);
    }
}

#[test]
fn functions_that_reach_outside_the_data_are_refused_by_name() {
    let pg = SqlDialect::PostgreSql;
    for (sql, name) in [
        ("SELECT pg_read_file('/etc/hostname')", "pg_read_file"),
        ("SELECT * FROM pg_ls_dir('/')", "pg_ls_dir"),
        ("SELECT pg_reload_conf()", "pg_reload_conf"),
        ("SELECT pg_switch_wal()", "pg_switch_wal"),
        ("SELECT pg_create_restore_point('x')", "pg_create_restore_point"),
        (
            "SELECT pg_logical_emit_message(true, 'p', 'm')",
            "pg_logical_emit_message",
        ),
        ("SELECT pg_terminate_backend(1)", "pg_terminate_backend"),
        ("SELECT pg_advisory_lock(42)", "pg_advisory_lock"),
        (
            "SELECT pg_catalog.pg_read_binary_file('x')",
            "pg_catalog.pg_read_binary_file",
        ),
        (
            "SELECT x FROM t WHERE x IN (SELECT lo_import('/etc/passwd'))",
            "lo_import",
        ),
        ("SELECT query_to_xml('SELECT 1', true, true, '')", "query_to_xml"),
        ("SELECT * FROM dblink('db', 'SELECT 1') AS d(x int)", "dblink"),
        (
            "WITH s AS (SELECT set_config('a.b', 'c', false)) SELECT * FROM s",
            "set_config",
        ),
    ] {
        let refusal = read_only_query(sql, pg).err();
        assert_eq!(
            refusal.as_ref().map(|r| r.code()),
            Some(RefusalCode::FunctionRefused),
            "{sql}"
        );
        let message = refusal.map(|r| r.to_string()).unwrap_or_default();
        assert!(message.contains(&format!("`{name}`")), "{sql}: {message}");
    }
    assert_eq!(
        refused("SELECT LOAD_FILE('/etc/passwd')", SqlDialect::MySql),
        RefusalCode::FunctionRefused
    );
    assert_eq!(
        refused("SELECT GET_LOCK('a', 0)", SqlDialect::MySql),
        RefusalCode::FunctionRefused
    );
    assert_eq!(
        refused("SELECT load_extension('x')", SqlDialect::Sqlite),
        RefusalCode::FunctionRefused
    );
    // Ordinary functions, and sleep-like ones (the time limit governs them), run.
    for (sql, dialect) in [
        ("SELECT pg_sleep(1), lower('A'), count(*) FROM t", pg),
        ("SELECT pg_typeof(1), now(), generate_series(1, 3)", pg),
        ("SELECT * FROM generate_series(1, 3) AS x", pg),
        ("SELECT SLEEP(1), CONCAT('a', 'b')", SqlDialect::MySql),
        ("SELECT randomblob(4), printf('%d', 1)", SqlDialect::Sqlite),
    ] {
        assert!(read_only_query(sql, dialect).is_ok(), "{dialect:?}: {sql}");
    }
}

#[test]
fn an_operator_policy_adds_refusals_user_defined_functions_and_an_allow_list() {
    use super::{FunctionPolicy, read_only_query_with};
    let pg = SqlDialect::PostgreSql;
    let code = |sql: &str, policy: &FunctionPolicy| {
        read_only_query_with(sql, pg, policy).map_err(|refused| (refused.code(), refused.to_string()))
    };
    let policy = FunctionPolicy::new()
        .deny("notify_billing", "it calls the billing service")
        .user_defined(["Refresh_Totals", "tax_rate", "report_rows"])
        .allow("TAX_RATE");
    let Err((RefusalCode::FunctionRefused, message)) = code("SELECT 1 WHERE notify_billing(2)", &policy)
    else {
        panic!("an operator's refusal");
    };
    assert!(
        message.contains("notify_billing") && message.contains("billing service"),
        "{message}"
    );
    // Any case, any schema, in an expression or as a table.
    for sql in [
        "SELECT REFRESH_TOTALS()",
        "SELECT x FROM t WHERE x > analytics.refresh_totals()",
        "SELECT * FROM report_rows(3) AS r",
        "WITH a AS (SELECT refresh_totals() AS n) SELECT n FROM a",
    ] {
        let Err((RefusalCode::FunctionRefused, message)) = code(sql, &policy) else {
            panic!("{sql} calls a user-defined function");
        };
        assert!(
            message.contains("user-defined function of unknown effect"),
            "{message}"
        );
    }
    assert!(code("SELECT tax_rate('FR'), lower('A')", &policy).is_ok());
    // The built-in list wins over `allow`.
    assert!(code("SELECT pg_ls_dir('/')", &FunctionPolicy::new().allow("pg_ls_dir")).is_err());
    // The default policy knows no user-defined function.
    assert!(code("SELECT refresh_totals()", &FunctionPolicy::new()).is_ok());

    let only = FunctionPolicy::new()
        .allow_only(["count", "SUM"])
        .allow("coalesce");
    assert!(only.is_allow_list());
    assert!(code("SELECT count(*), sum(x), coalesce(y, 0) FROM t GROUP BY k", &only).is_ok());
    let Err((RefusalCode::FunctionRefused, message)) = code("SELECT upper(name) FROM t", &only) else {
        panic!("upper is not on the list");
    };
    assert!(
        message.contains("`upper`") && message.contains("not on the operator's list"),
        "{message}"
    );
    assert!(code("SELECT * FROM generate_series(1, 3)", &only).is_err());
    for dialect in ALL {
        let sql = match dialect {
            SqlDialect::MySql => "SELECT LOAD_FILE('/etc/passwd')",
            SqlDialect::Sqlite => "SELECT readfile('/etc/passwd')",
            _ => "SELECT pg_read_file('/etc/hostname')",
        };
        let listed = FunctionPolicy::new().allow_only(["load_file", "readfile", "pg_read_file"]);
        assert!(read_only_query_with(sql, dialect, &listed).is_err(), "{sql}");
    }
}
