//! [`Scratch`]: the place of one test on a shared server, removed with everything in it when dropped.

use std::sync::atomic::{AtomicUsize, Ordering};

#[cfg(any(feature = "postgres", feature = "redis"))]
use crate::cleanup;
#[cfg(feature = "postgres")]
use crate::services::POSTGRES;
#[cfg(feature = "redis")]
use crate::services::REDIS;

/// The place of one test on a shared server, under a random name: a PostgreSQL schema
/// `dual_test_{random}` (feature `postgres`) or a Redis key prefix `dual-test:{random}:` (feature
/// `redis`). A test numbers what it makes in it with [`Scratch::next`] (a table, a key prefix per
/// store); everything in it is removed when it is dropped, also when the test panics, and nothing
/// else is ever touched.
///
/// ```no_run
/// # #[cfg(feature = "redis")]
/// # fn main() {
/// let scratch = dual_testkit::Scratch::redis_prefix();
/// let prefix = format!("{}{}:", scratch.name(), scratch.next());
/// assert!(prefix.starts_with("dual-test:"));
/// // … a store on `scratch.url()` under `prefix`; its keys go when `scratch` is dropped.
/// # }
/// # #[cfg(not(feature = "redis"))]
/// # fn main() {}
/// ```
#[derive(Debug)]
pub struct Scratch {
    url: String,
    name: String,
    next: AtomicUsize,
    remove: fn(&str, &str) -> Result<(), String>,
}

/// `prefix` and 16 random hex digits: a name (a schema, a database, a directory, a marker in a
/// query's text) no other test run picks.
///
/// ```
/// let name = dual_testkit::unique_name("dual_test_");
/// assert!(name.starts_with("dual_test_") && name.len() == "dual_test_".len() + 16);
/// assert_ne!(name, dual_testkit::unique_name("dual_test_"));
/// ```
#[must_use]
pub fn unique_name(prefix: &str) -> String {
    format!("{prefix}{:016x}", fastrand::u64(..))
}

impl Scratch {
    /// A fresh schema on the PostgreSQL of [`POSTGRES`]; panics (failing the test) with how to start
    /// PostgreSQL when it is unreachable.
    #[cfg(feature = "postgres")]
    #[must_use]
    pub fn postgres_schema() -> Self {
        Self::new(
            POSTGRES.require(),
            unique_name("dual_test_"),
            cleanup::drop_postgres_schema,
        )
    }

    /// A fresh key prefix on the Redis of [`REDIS`]; panics (failing the test) with how to start
    /// Redis when it is unreachable.
    #[cfg(feature = "redis")]
    #[must_use]
    pub fn redis_prefix() -> Self {
        Self::new(
            REDIS.require(),
            format!("{}:", unique_name("dual-test:")),
            |url, prefix| {
                cleanup::delete_redis_keys(url, prefix)
                    .map(drop)
                    .map_err(|e| e.to_string())
            },
        )
    }

    #[cfg_attr(
        not(any(feature = "postgres", feature = "redis")),
        expect(dead_code, reason = "only the services' constructors make one")
    )]
    fn new(url: String, name: String, remove: fn(&str, &str) -> Result<(), String>) -> Self {
        Self {
            url,
            name,
            next: AtomicUsize::new(0),
            remove,
        }
    }

    /// The server's URL.
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The schema's name, or the key prefix.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A number not given out before by this scratch place: 0, 1, 2, …
    pub fn next(&self) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Err(e) = (self.remove)(&self.url, &self.name) {
            eprintln!("could not remove the test's {}: {e}", self.name);
        }
    }
}
