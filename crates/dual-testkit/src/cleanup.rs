//! Removing what a test wrote to a shared server: every key below a Redis prefix (feature `redis`),
//! a PostgreSQL schema and everything in it (feature `postgres`). Both block the calling thread and
//! are meant for a test namespace's `Drop`, so they work from inside a runtime too.

#[cfg(feature = "postgres")]
use std::time::Duration;

/// Deletes every key that starts with `prefix` on the Redis at `url`, a thousand at a time, and
/// answers how many there were. Keys outside the prefix are never touched.
///
/// # Errors
///
/// When Redis cannot be reached within 5 s or a command fails.
#[cfg(feature = "redis")]
pub fn delete_redis_keys(url: &str, prefix: &str) -> redis::RedisResult<usize> {
    let client = redis::Client::open(url)?;
    let mut con = client.get_connection_with_timeout(std::time::Duration::from_secs(5))?;
    let pattern = format!("{prefix}*");
    let mut cursor = 0u64;
    let mut deleted = 0;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1_000)
            .query(&mut con)?;
        if !keys.is_empty() {
            deleted += redis::cmd("DEL").arg(&keys).query::<usize>(&mut con)?;
        }
        if next == 0 {
            return Ok(deleted);
        }
        cursor = next;
    }
}

/// How long dropping a schema may take.
#[cfg(feature = "postgres")]
const DROP_WITHIN: Duration = Duration::from_secs(20);

/// Drops `schema` and everything in it (`DROP SCHEMA IF EXISTS … CASCADE`) on the PostgreSQL at
/// `url`, within 20 s. `schema` is quoted as given.
///
/// It runs on a thread of its own with a small runtime: a `Drop` may run inside the test's runtime,
/// which cannot be blocked on.
///
/// # Errors
///
/// When PostgreSQL cannot be reached, the statement fails or takes too long, as a message.
#[cfg(feature = "postgres")]
pub fn drop_postgres_schema(url: &str, schema: &str) -> Result<(), String> {
    let url = url.to_owned();
    let sql = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
    let cleanup = std::thread::spawn(move || -> Result<(), String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .map_err(|e| e.to_string())?;
            tokio::spawn(connection);
            tokio::time::timeout(DROP_WITHIN, client.batch_execute(&sql))
                .await
                .map_err(|_| "DROP SCHEMA timed out".to_owned())?
                .map_err(|e| e.to_string())
        })
    });
    cleanup
        .join()
        .map_err(|_| "the clean-up thread panicked".to_owned())?
}
