//! dual-sql's `sql_guard` on any text, in the PostgreSQL, MySQL and SQLite dialects: it never
//! panics or overflows a stack, and what it accepts writes back as SQL that the guard never refuses
//! as anything but unreadable (a statement it accepted is never sent as one it would refuse).

#![no_main]

use dual_sql::sql_guard::{RefusalCode, SqlDialect, read_only_query};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for dialect in [SqlDialect::PostgreSql, SqlDialect::MySql, SqlDialect::Sqlite] {
        let Ok(out) = read_only_query(text, dialect) else {
            continue;
        };
        if let Err(refused) = read_only_query(&out, dialect) {
            assert_eq!(
                refused.code(),
                RefusalCode::Unparsable,
                "{dialect:?}: {text:?} was accepted as {out:?}, which is refused: {refused}"
            );
        }
    }
});
