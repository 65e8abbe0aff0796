//! The servers that the shared stores' own suites need, each found through an environment variable or
//! a default URL. Those suites run with their package's `services` feature; when a server is not there
//! they fail with a message that names the server, its URL and how to start it, and never skip.
//!
//! ```no_run
//! use dual_testkit::services::REDIS;
//!
//! // At the start of a test: the URL, once something answers there (else the test fails, saying how
//! // to start Redis).
//! let url = REDIS.require();
//! // Later, when connecting fails anyway:
//! # let error = "connection refused";
//! REDIS.unreachable(error);
//! ```

use std::fmt;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use dual_store::redact_secrets;

/// How long [`Service::require`] waits for a TCP connection to the server.
const CONNECT_WITHIN: Duration = Duration::from_secs(5);

/// A server that some test suites need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Service {
    name: &'static str,
    env: &'static str,
    default_url: &'static str,
    default_port: u16,
}

/// Redis: `DUAL_TEST_REDIS_URL`, by default `redis://127.0.0.1:6379`.
pub const REDIS: Service = Service::new("Redis", "DUAL_TEST_REDIS_URL", "redis://127.0.0.1:6379", 6379);

/// PostgreSQL: `DUAL_TEST_POSTGRES_URL`, by default `postgres://postgres@127.0.0.1:5432/test`.
pub const POSTGRES: Service = Service::new(
    "PostgreSQL",
    "DUAL_TEST_POSTGRES_URL",
    "postgres://postgres@127.0.0.1:5432/test",
    5432,
);

/// MariaDB or MySQL: `DUAL_TEST_MYSQL_URL`, by default `mysql://root@127.0.0.1:3306/test`.
pub const MYSQL: Service = Service::new(
    "MariaDB/MySQL",
    "DUAL_TEST_MYSQL_URL",
    "mysql://root@127.0.0.1:3306/test",
    3306,
);

/// An S3-compatible server (moto in CI): `DUAL_TEST_S3_ENDPOINT`, by default `http://127.0.0.1:9000`.
pub const S3: Service = Service::new(
    "S3 (moto)",
    "DUAL_TEST_S3_ENDPOINT",
    "http://127.0.0.1:9000",
    9000,
);

impl Service {
    const fn new(
        name: &'static str,
        env: &'static str,
        default_url: &'static str,
        default_port: u16,
    ) -> Self {
        Self {
            name,
            env,
            default_url,
            default_port,
        }
    }

    /// The server's name for messages, e.g. `Redis`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The environment variable that holds the server's URL.
    #[must_use]
    pub fn env(&self) -> &'static str {
        self.env
    }

    /// The server's URL: the environment variable's value, or the default when it is unset.
    #[must_use]
    pub fn url(&self) -> String {
        std::env::var(self.env).unwrap_or_else(|_| self.default_url.to_owned())
    }

    /// The socket address of the URL's host and port (the server's usual port when the URL has none).
    ///
    /// # Errors
    ///
    /// When the URL is not of the form `scheme://[user[:password]@]host[:port][/…]`, or its host does
    /// not resolve.
    pub fn addr(&self) -> Result<SocketAddr, String> {
        let url = self.url();
        let Some(authority) = authority(&url) else {
            return Err(format!("{} is not a URL (scheme://host:port/…)", self.env));
        };
        let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
        let host_port = if has_port(host) {
            host.to_owned()
        } else {
            format!("{host}:{}", self.default_port)
        };
        match host_port.to_socket_addrs() {
            Ok(mut addrs) => addrs
                .next()
                .ok_or_else(|| format!("{host_port} resolves to no address")),
            Err(e) => Err(format!("{host_port} does not resolve: {e}")),
        }
    }

    /// The URL with its host and port replaced by `addr` (user, password, path and query kept): the
    /// same server reached through a [`Proxy`](super::proxy::Proxy).
    ///
    /// # Errors
    ///
    /// When the URL is not of the form `scheme://…`.
    pub fn url_through(&self, addr: SocketAddr) -> Result<String, String> {
        let url = self.url();
        let Some(authority) = authority(&url) else {
            return Err(format!("{} is not a URL (scheme://host:port/…)", self.env));
        };
        let user = authority.rfind('@').map_or("", |at| &authority[..=at]);
        Ok(url.replacen(authority, &format!("{user}{addr}"), 1))
    }

    /// The server's URL, once something accepts TCP connections at its address.
    ///
    /// Blocks the calling thread for up to 5 s (an unreachable host); a closed local port answers at
    /// once.
    ///
    /// # Panics
    ///
    /// With [`Service::unreachable`]'s message, failing the test, when nothing answers there.
    #[track_caller]
    #[must_use]
    pub fn require(&self) -> String {
        let addr = match self.addr() {
            Ok(addr) => addr,
            Err(e) => self.unreachable(e),
        };
        match TcpStream::connect_timeout(&addr, CONNECT_WITHIN) {
            Ok(_) => self.url(),
            Err(e) => self.unreachable(format_args!("TCP connection to {addr}: {e}")),
        }
    }

    /// Panics, failing the test, with a message that names the server, its URL (without a password),
    /// the environment variable, `error`, and how to start the server or leave these tests out.
    #[track_caller]
    pub fn unreachable(&self, error: impl fmt::Display) -> ! {
        panic!(
            "{name} is not reachable at {url} ({env}): {error}\n\
             The tests of the `services` feature need {name}: start the servers with `bash .ci/services`, \
             or set {env} to the URL of a running {name}. `cargo test --workspace` runs only the tests \
             that need no server.",
            name = self.name,
            url = redact_secrets(&self.url()),
            env = self.env,
        )
    }
}

/// The `[user[:password]@]host[:port]` part of `scheme://…`.
fn authority(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    rest.split(['/', '?', '#']).next().filter(|a| !a.is_empty())
}

/// Whether `host` (`name`, `name:port`, `[v6]` or `[v6]:port`) names a port.
fn has_port(host: &str) -> bool {
    host.rsplit_once(':').is_some_and(|(name, port)| {
        !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && (!name.starts_with('[') || name.ends_with(']'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Redis service at `url` through a variable nobody sets, so that no test touches the environment.
    fn with(url: &'static str) -> Service {
        Service {
            env: "DUAL_TEST_SERVICES_UNIT_TEST_UNSET",
            default_url: url,
            ..REDIS
        }
    }

    #[test]
    fn addresses_come_from_the_url_with_the_usual_port_as_default() {
        assert_eq!(
            with("redis://127.0.0.1:6380/0").addr(),
            Ok(([127, 0, 0, 1], 6380).into())
        );
        assert_eq!(
            with("redis://:pw@127.0.0.1").addr(),
            Ok(([127, 0, 0, 1], 6379).into())
        );
        assert_eq!(
            with("redis://[::1]").addr(),
            Ok("[::1]:6379".parse().expect("v6"))
        );
        assert_eq!(
            with("redis://[::1]:7000?x=1").addr(),
            Ok("[::1]:7000".parse().expect("v6"))
        );
        assert!(with("host=127.0.0.1 port=5432").addr().is_err());
    }

    #[test]
    fn a_proxy_keeps_user_password_and_path() {
        let proxy = SocketAddr::from(([127, 0, 0, 1], 4000));
        assert_eq!(
            with("postgres://u:pw@db.example:5432/test?sslmode=disable").url_through(proxy),
            Ok("postgres://u:pw@127.0.0.1:4000/test?sslmode=disable".to_owned())
        );
        assert_eq!(
            with("redis://127.0.0.1:6379").url_through(proxy),
            Ok("redis://127.0.0.1:4000".to_owned())
        );
    }

    #[test]
    fn the_message_names_the_server_url_and_remedy_without_the_password() {
        // Nothing listens on port 1.
        let service = with("redis://:hunter2@127.0.0.1:1");
        let panic = std::panic::catch_unwind(|| service.require()).expect_err("nothing listens");
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            message.starts_with("Redis is not reachable at redis://:***@127.0.0.1:1 (DUAL_TEST_"),
            "{message}"
        );
        assert!(
            message.contains("bash .ci/services") && message.contains("cargo test --workspace"),
            "{message}"
        );
        assert!(!message.contains("hunter2"), "{message}");
    }
}
