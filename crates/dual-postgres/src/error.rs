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
}

impl PgError {
    /// A stable code: `config` or `connect`.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Config { .. } => "config",
            Self::Connect(_) => "connect",
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
