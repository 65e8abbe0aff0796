//! Every value readable (issue 42, item 5): the types without a binary decoder come as PostgreSQL's
//! own text, in the snapshot's stream and in live pages alike (docs/TYPES.md).

use std::sync::Arc;

use dual_core::{ColumnType, Sort, SortOrder};
use dual_postgres::PgOptions;
use dual_server::{QueryExecutor, RowWindow};
use serde_json::{Value, json};

use crate::{Db, created, run};

/// Each expression, and the JSON a person reads for it.
const CASES: &[(&str, &str, &str)] = &[
    ("lsn", "'16/B374D848'::pg_lsn", r#""16/B374D848""#),
    ("rec", "ROW(1, 'a b', NULL)", r#""(1,\"a b\",)""#),
    ("nothing", "pg_sleep(0)", "null"),
    ("no_void", "NULL::void", "null"),
    ("r4", "'[1,5)'::int4range", r#""[1,5)""#),
    ("r_empty", "'empty'::int8range", r#""empty""#),
    ("r_num", "numrange(1.5, NULL)", r#""[1.5,)""#),
    (
        "r_date",
        "daterange('2024-01-01', '2024-02-01')",
        r#""[2024-01-01,2024-02-01)""#,
    ),
    (
        "r_tz",
        "tstzrange('2024-01-01 00:00+00', '2024-01-02 00:00+00')",
        r#""[\"2024-01-01 00:00:00+00\",\"2024-01-02 00:00:00+00\")""#,
    ),
    ("multi", "'{[1,3), [5,7)}'::int4multirange", r#""{[1,3),[5,7)}""#),
    ("iv", "'1 day 02:00'::interval", r#""P1DT2H""#),
    ("cash", "'12.34'::money", r#""$12.34""#),
    ("ip", "'192.168.0.1/24'::inet", r#""192.168.0.1/24""#),
    ("net", "'10.0.0.0/8'::cidr", r#""10.0.0.0/8""#),
    ("mac", "'08:00:2b:01:02:03'::macaddr", r#""08:00:2b:01:02:03""#),
    (
        "mac8",
        "'08:00:2b:01:02:03:04:05'::macaddr8",
        r#""08:00:2b:01:02:03:04:05""#,
    ),
    ("bits", "B'101'", r#""101""#),
    ("varbits", "B'1100'::varbit(8)", r#""1100""#),
    ("doc", "'<a>x &amp; y</a>'::xml", r#""<a>x &amp; y</a>""#),
    ("tsv", "to_tsvector('english', 'the cats')", r#""'cat':2""#),
    (
        "tsq",
        "to_tsquery('english', 'cats & dogs')",
        r#""'cat' & 'dog'""#,
    ),
    ("pt", "point(1, 2)", r#""(1,2)""#),
    ("ln", "line(point(0, 0), point(1, 1))", r#""{1,-1,0}""#),
    ("seg", "lseg(point(0, 0), point(1, 1))", r#""[(0,0),(1,1)]""#),
    ("bx", "box(point(1, 1), point(0, 0))", r#""(1,1),(0,0)""#),
    ("pth", "'[(0,0),(1,1)]'::path", r#""[(0,0),(1,1)]""#),
    (
        "poly",
        "'((0,0),(1,0),(1,1))'::polygon",
        r#""((0,0),(1,0),(1,1))""#,
    ),
    ("circ", "circle(point(0, 0), 2)", r#""<(0,0),2>""#),
    (
        "id",
        "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
        r#""a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11""#,
    ),
    ("bin", "'\\xdeadbeef'::bytea", r#""base64:3q2+7w==""#),
    ("kind", "'r'::\"char\"", r#""r""#),
    ("rel", "'pg_class'::regclass", r#""pg_class""#),
    (
        "ranges",
        "ARRAY['[1,2)'::int4range, NULL, 'empty']",
        r#"["[1,2)", null, "empty"]"#,
    ),
    (
        "points",
        "ARRAY[[point(1, 2)], [point(3, 4)]]",
        r#"[["(1,2)"], ["(3,4)"]]"#,
    ),
    ("recs", "ARRAY[ROW(1, 'a')]", r#"["(1,a)"]"#),
    (
        "ids",
        "ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid]",
        r#"["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"]"#,
    ),
];

/// One `SELECT` of every case, and the row it must read as.
fn select_all() -> (String, Value) {
    let columns: Vec<String> = CASES
        .iter()
        .map(|(name, sql, _)| format!("{sql} AS {name}"))
        .collect();
    let want = CASES
        .iter()
        .map(|(name, _, json)| {
            let value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{name}: {e}"));
            ((*name).to_owned(), value)
        })
        .collect();
    (format!("SELECT {}", columns.join(", ")), Value::Object(want))
}

#[tokio::test]
async fn every_type_reads_as_text_or_json_a_person_can_read() {
    let db = Db::new().await;
    let pg = db.pg(PgOptions::default()).await;
    let (sql, want) = select_all();
    let (rows, count) = run(&pg, &sql, Value::Null).await;
    let rows = rows.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(count, Some(1));
    let got = Value::Object(rows[0].clone());
    for (name, _, _) in CASES {
        assert_eq!(got[name], want[name], "{name}");
    }
    assert_eq!(got, want);

    // The same values in a live page, and the columns' types from the statement that ran.
    let executor = Arc::new(pg.sql_executor());
    let live = executor.live().unwrap_or_else(|| panic!("pages live"));
    let page = live
        .fetch(&json!({ "sql": sql }), RowWindow::new(0, 5))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page.first().map(|r| Value::Object(r.clone())), Some(want));
    let (_, response) = created(
        &pg,
        "SELECT '[1,5)'::int4range AS r, ARRAY[point(1, 2)] AS ps".to_owned(),
    )
    .await;
    let types: Vec<ColumnType> = response.columns.iter().map(|c| c.column_type).collect();
    assert_eq!(types, [ColumnType::String, ColumnType::Json]);
}

#[tokio::test]
async fn the_wal_position_and_catalog_rows_are_text() {
    let db = Db::new().await;
    let pg = db.pg(PgOptions::default()).await;
    let (rows, _) = run(
        &pg,
        "SELECT pg_current_wal_lsn() AS lsn, relkind, oid::regclass AS rel, relacl \
         FROM pg_class WHERE relname = 'pg_class'",
        Value::Null,
    )
    .await;
    let row = rows.unwrap_or_else(|e| panic!("{e}")).remove(0);
    let lsn = row["lsn"].as_str().unwrap_or_default();
    let (high, low) = lsn.split_once('/').unwrap_or_default();
    assert!(
        !high.is_empty()
            && [high, low]
                .iter()
                .all(|part| part.chars().all(|c| c.is_ascii_hexdigit())),
        "{lsn:?}"
    );
    assert_eq!((&row["relkind"], &row["rel"]), (&json!("r"), &json!("pg_class")));
    assert!(
        row["relacl"].is_null()
            || row["relacl"]
                .as_array()
                .is_some_and(|acl| acl.iter().all(Value::is_string)),
        "aclitem[] as text[]: {:?}",
        row["relacl"]
    );
}

#[tokio::test]
async fn a_live_page_sorts_by_the_value_not_by_its_text() {
    let db = Db::new().await;
    let t = db.table("spans");
    db.exec(&format!(
        "CREATE TABLE {t} (id int, span int4range, at point);
         INSERT INTO {t} VALUES (1, '[10,20)', '(1,1)'), (2, '[9,10)', '(2,2)'), (3, '[100,101)', NULL);"
    ))
    .await;
    let pg = db.pg(PgOptions::default()).await;
    let executor = Arc::new(pg.sql_executor());
    let live = executor.live().unwrap_or_else(|| panic!("pages live"));
    let sort = Sort::new("span", SortOrder::Asc);
    let page = live
        .fetch(
            &json!({ "sql": format!("SELECT * FROM {t}") }),
            RowWindow::new(0, 10).sorted(Some(&sort)),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let spans: Vec<&Value> = page.iter().map(|r| &r["span"]).collect();
    // As text, "[100,101)" would sort before "[9,10)".
    assert_eq!(spans, [&json!("[9,10)"), &json!("[10,20)"), &json!("[100,101)")]);
    assert_eq!(page[2]["at"], Value::Null);
    assert_eq!(page[1]["at"], json!("(1,1)"));
}
