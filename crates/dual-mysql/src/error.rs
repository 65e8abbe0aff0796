//! Errors: what opening a database answers ([`MyError`]), and how the server's errors reach the model.

use std::time::Duration;

use dual_server::ExecutorError;

/// Why a [`MyDb`](crate::MyDb) could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MyError {
    /// The URL or an option is not usable.
    #[error("mysql: {message}")]
    Config {
        /// What is wrong.
        message: String,
        /// The parser's error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The database did not answer a first connection.
    #[error("mysql: could not connect")]
    Connect(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The user connected as may do more than read, and
    /// [`MyOptions::allow_privileged_role`](crate::MyOptions) is off.
    #[error(
        "mysql: the user `{user}` may do more than read: {}. Connect as a user that may only read \
         ({READ_ONLY_USER}), or start anyway with allow_privileged_role (the server binary: \
         --allow-privileged-role; the examples: DUAL_ALLOW_PRIVILEGED_ROLE=1)",
        found.join("; ")
    )]
    PrivilegedRole {
        /// The user, `name@host`.
        user: String,
        /// What it may do beyond reading (`global privileges FILE, SUPER, …`, …).
        found: Vec<String>,
    },
}

impl MyError {
    /// A stable code: `config`, `connect` or `privileged_role`.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Config { .. } => "config",
            Self::Connect(_) => "connect",
            Self::PrivilegedRole { .. } => "privileged_role",
        }
    }
}

/// The server's error as the model reads it: its message; the time limit in words; a cancel as a
/// cancel. `limit` is the statement time limit.
pub(crate) fn my_error(error: &mysql_async::Error, limit: Duration) -> ExecutorError {
    match error {
        mysql_async::Error::Server(server) => match server.code {
            // MariaDB's max_statement_time, MySQL's max_execution_time.
            1969 | 3024 => ExecutorError::new(format!(
                "the query exceeded the time limit of {} ms: add filters or aggregate",
                limit.as_millis()
            )),
            1317 => ExecutorError::new("the query was cancelled"),
            _ => ExecutorError::new(server.message.clone()),
        },
        mysql_async::Error::Io(_) => ExecutorError::new("the database connection was lost"),
        other => ExecutorError::new(format!("the database failed: {other}")),
    }
}

/// How to create the user to connect as instead.
const READ_ONLY_USER: &str =
    "CREATE USER 'reporter'@'%' IDENTIFIED BY '…'; GRANT SELECT, SHOW VIEW ON mydb.* TO 'reporter'@'%'";
