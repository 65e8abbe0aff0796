//! An agent's burst through the MySQL executor on MariaDB (issue 41, item 8; figures in
//! docs/PERFORMANCE.md, "An agent's burst on PostgreSQL and MariaDB"), against the server of
//! `DUAL_TEST_MYSQL_URL` (`bash .ci/services` starts one), beside the same statements run whole by
//! `mysql`:
//!
//! ```text
//! cargo bench -p dual-mysql --features services --bench burst
//! ```
//!
//! The mix of the SQLite burst (2 rows, ~5,000 rows, 269,000 rows, a `GROUP BY` over them, a
//! ~10,000,000-row cross join), made with MariaDB's sequence tables (`seq_1_to_N`) so no table is
//! needed. A server with the library's defaults over `MyOptions::default()`. `BENCH_BACK_TO_BACK`
//! (12), `BENCH_AT_ONCE` (10) and `BENCH_ROUNDS` (5) change the counts.

use std::process::Command;

use dual_mysql::{MyDb, MyOptions};
use dual_testkit::burst;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), BoxError> {
    let runtime = burst::runtime()?;
    let url = dual_testkit::services::MYSQL.require();
    let db = runtime.block_on(MyDb::connect(
        &url,
        MyOptions::default().allow_privileged_role(true),
    ))?;
    let series = |n: u32| format!("SELECT seq AS x, CONCAT('row ', seq) AS label FROM seq_1_to_{n}");
    let queries = [
        ("2 rows", series(2)),
        ("~5,000 rows", series(4_997)),
        ("269,000 rows", series(269_000)),
        (
            "GROUP BY over 269,000 rows",
            "SELECT seq % 97 AS bucket, COUNT(*) AS n, SUM(seq) AS total FROM seq_1_to_269000 GROUP BY bucket"
                .to_owned(),
        ),
        (
            "~10,000,000-row cross join",
            "SELECT a.seq AS x, b.seq AS y FROM seq_1_to_6000 AS a, seq_1_to_1667 AS b".to_owned(),
        ),
    ];
    // The client reads the same server and database as the URL (`mysql://user@host:port/db`).
    let address = dual_testkit::services::MYSQL.addr()?;
    let database = url.rsplit('/').next().unwrap_or("test").to_owned();
    let (host, port) = (address.ip().to_string(), address.port().to_string());
    let command = |sql: &str| {
        let mut mysql = Command::new("mysql");
        mysql.args(["-h", &host, "-P", &port, "-u", "root", &database, "-e", sql]);
        mysql
    };
    burst::run_sql(&runtime, "mysql", &command, &queries, || db.sql_executor());
    Ok(())
}
