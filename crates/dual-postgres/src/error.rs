//! Errors: what opening a database answers ([`PgError`]), and how PostgreSQL's errors reach the model.

use std::time::Duration;

use dual_server::ExecutorError;
use tokio_postgres::error::SqlState;

/// Why a [`PgDb`](crate::PgDb) could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PgError {
    /// The URL or an option is not usable.
    #[error("postgres: {message}")]
    Config {
        /// What is wrong.
        message: String,
        /// The parser's or the pool's error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The database did not answer a first connection.
    #[error("postgres: could not connect")]
    Connect(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The role connected as may do more than read, and
    /// [`PgOptions::allow_privileged_role`](crate::PgOptions) is off.
    #[error(
        "postgres: the role `{role}` may do more than read: {}. Connect as a role that may only read \
         ({READ_ONLY_ROLE}), or start anyway with allow_privileged_role (the server binary: \
         --allow-privileged-role; the examples: DUAL_ALLOW_PRIVILEGED_ROLE=1)",
        found.join("; ")
    )]
    PrivilegedRole {
        /// The role.
        role: String,
        /// What it may do beyond reading (`superuser`, `member of pg_read_server_files`, …).
        found: Vec<String>,
    },
}

impl PgError {
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

/// PostgreSQL's error as the model reads it: the database's own message (and hint), the time limit
/// in words, a cancel as a cancel. `limit` is the statement timeout, when one applies.
pub(crate) fn pg_error(error: &tokio_postgres::Error, limit: Option<Duration>) -> ExecutorError {
    let Some(db) = error.as_db_error() else {
        if error.is_closed() {
            return ExecutorError::new("the database connection was lost");
        }
        return ExecutorError::new(format!("the database failed: {error}"));
    };
    if *db.code() == SqlState::QUERY_CANCELED {
        return match limit {
            Some(limit) if db.message().contains("statement timeout") => ExecutorError::new(format!(
                "the query exceeded the time limit of {} ms: add filters or aggregate",
                limit.as_millis()
            )),
            _ => ExecutorError::new("the query was cancelled"),
        };
    }
    let mut message = db.message().to_owned();
    if let Some(hint) = db.hint() {
        message.push_str(" (hint: ");
        message.push_str(hint);
        message.push(')');
    }
    ExecutorError::new(message)
}

/// How to create the role to connect as instead, in PostgreSQL's SQL.
const READ_ONLY_ROLE: &str = "CREATE ROLE reporter LOGIN PASSWORD '…'; \
GRANT CONNECT ON DATABASE mydb TO reporter; GRANT USAGE ON SCHEMA public TO reporter; \
GRANT SELECT ON ALL TABLES IN SCHEMA public TO reporter; \
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO reporter";
