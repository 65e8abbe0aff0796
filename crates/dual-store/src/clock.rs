//! Wall-clock time that tests can pause.

use time::OffsetDateTime;
use tokio::time::Instant;

/// Where a server and its store read "now" from.
///
/// [`Clock::system`] reads the system clock. [`Clock::tokio`] starts at the system time and then
/// advances with tokio's clock, so tests under `tokio::time::pause()` move it with `advance()` instead
/// of sleeping.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock(Source);

#[derive(Debug, Clone, Copy, Default)]
enum Source {
    #[default]
    System,
    Tokio {
        wall: OffsetDateTime,
        start: Instant,
    },
}

impl Clock {
    /// The system clock.
    #[must_use]
    pub const fn system() -> Self {
        Self(Source::System)
    }

    /// A clock that follows tokio's (pausable) time from the current system time.
    #[must_use]
    pub fn tokio() -> Self {
        Self(Source::Tokio {
            wall: OffsetDateTime::now_utc(),
            start: Instant::now(),
        })
    }

    /// The current time, UTC.
    #[must_use]
    pub fn now(&self) -> OffsetDateTime {
        match self.0 {
            Source::System => OffsetDateTime::now_utc(),
            Source::Tokio { wall, start } => wall + start.elapsed(),
        }
    }
}
