//! An agent's burst through the PostgreSQL executor (issue 41, item 8; figures in docs/PERFORMANCE.md,
//! "An agent's burst on PostgreSQL and MariaDB"), against the PostgreSQL of `DUAL_TEST_POSTGRES_URL`
//! (`bash .ci/services` starts one), beside the same statements run whole by `psql`:
//!
//! ```text
//! cargo bench -p dual-postgres --features services --bench burst
//! ```
//!
//! The mix of the SQLite burst (2 rows, ~5,000 rows, 269,000 rows, a `GROUP BY` over them, a
//! ~10,000,000-row cross join), made with `generate_series` so no table is needed. A server with the
//! library's defaults (`pending_after` 2 s, the scheduler's defaults) over `PgOptions::default()`.
//! `BENCH_BACK_TO_BACK` (12), `BENCH_AT_ONCE` (10) and `BENCH_ROUNDS` (5) change the counts.

use std::process::Command;

use dual_postgres::{PgDb, PgOptions};
use dual_testkit::burst;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), BoxError> {
    let runtime = burst::runtime()?;
    let url = dual_testkit::services::POSTGRES.require();
    let db = runtime.block_on(PgDb::connect(
        &url,
        PgOptions::default().allow_privileged_role(true),
    ))?;
    let series = |n: u32| format!("SELECT x, 'row ' || x AS label FROM generate_series(1, {n}) AS x");
    let queries = [
        ("2 rows", series(2)),
        ("~5,000 rows", series(4_997)),
        ("269,000 rows", series(269_000)),
        (
            "GROUP BY over 269,000 rows",
            "SELECT x % 97 AS bucket, count(*) AS n, sum(x) AS total FROM generate_series(1, 269000) AS x \
             GROUP BY 1"
                .to_owned(),
        ),
        (
            "~10,000,000-row cross join",
            "SELECT a.x, b.y FROM generate_series(1, 6000) AS a(x), generate_series(1, 1667) AS b(y)"
                .to_owned(),
        ),
    ];
    let command = |sql: &str| {
        let mut psql = Command::new("psql");
        psql.args([
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-o",
            "/dev/null",
            "-c",
            sql,
            &url,
        ]);
        psql
    };
    burst::run_sql(&runtime, "psql", &command, &queries, || db.sql_executor());
    Ok(())
}
