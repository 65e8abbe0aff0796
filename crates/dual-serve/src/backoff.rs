//! The accept loops' brakes: a growing pause after accept errors, and a log throttle.
//!
//! Without them, a listener out of file descriptors (`EMFILE`) fails every `accept` at once, forever:
//! the loop spins at 100% CPU and writes a warning per iteration.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The first pause after an accept error.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
/// The longest pause.
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// A pause that doubles with every consecutive failure, from 10 ms up to 1 s.
#[derive(Debug, Clone)]
struct Backoff {
    next: Duration,
}

impl Backoff {
    fn new() -> Self {
        Self { next: FIRST_PAUSE }
    }

    /// The pause after one more failure.
    fn next_pause(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(MAX_PAUSE);
        pause
    }

    /// A success: the next failure pauses briefly again.
    fn reset(&mut self) {
        self.next = FIRST_PAUSE;
    }
}

/// What an accept loop does after `accept` fails: at most one warning a second (with the number held
/// back), then a pause that grows with every consecutive failure, cut short when the loop is stopped.
#[derive(Debug)]
pub(super) struct AcceptErrors {
    /// The listener, in the warning.
    listener: &'static str,
    backoff: Backoff,
    log: LogThrottle,
}

impl AcceptErrors {
    pub(super) fn new(listener: &'static str) -> Self {
        Self {
            listener,
            backoff: Backoff::new(),
            log: LogThrottle::new(Duration::from_secs(1)),
        }
    }

    /// An accept succeeded: the next failure pauses briefly again.
    pub(super) fn accepted(&mut self) {
        self.backoff.reset();
    }

    /// Warns (throttled) and pauses after `error`; `false` when `stop` was cancelled meanwhile.
    pub(super) async fn pause(&mut self, error: &std::io::Error, stop: &CancellationToken) -> bool {
        let pause = self.backoff.next_pause();
        if let Some(suppressed) = self.log.admit() {
            tracing::warn!(
                listener = self.listener,
                error = %dual_core::escape::log_safe(&error.to_string()),
                pause_ms = pause.as_millis(),
                suppressed,
                "accept failed; pausing before the next accept"
            );
        }
        tokio::select! {
            () = tokio::time::sleep(pause) => true,
            () = stop.cancelled() => false,
        }
    }
}

/// Lets one log line through per period and counts the ones it held back.
#[derive(Debug, Clone)]
pub(super) struct LogThrottle {
    period: Duration,
    last: Option<Instant>,
    suppressed: u64,
}

impl LogThrottle {
    /// One line per `period`.
    pub(super) fn new(period: Duration) -> Self {
        Self {
            period,
            last: None,
            suppressed: 0,
        }
    }

    /// `Some(suppressed)` when a line may be written now (with the number of lines held back since
    /// the last one), `None` when this one is to be held back.
    pub(super) fn admit(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self.last.is_some_and(|last| now < last + self.period) {
            self.suppressed += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.suppressed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_doubles_up_to_a_second_and_resets() {
        let mut backoff = Backoff::new();
        let pauses: Vec<u128> = (0..9).map(|_| backoff.next_pause().as_millis()).collect();
        assert_eq!(pauses, [10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        backoff.reset();
        assert_eq!(backoff.next_pause(), FIRST_PAUSE);
    }

    #[tokio::test(start_paused = true)]
    async fn one_line_per_period_with_the_count_held_back() {
        let mut throttle = LogThrottle::new(Duration::from_secs(1));
        assert_eq!(throttle.admit(), Some(0));
        let mut admitted = Vec::new();
        // 100 events per second for 3 s.
        for _ in 0..300 {
            tokio::time::advance(Duration::from_millis(10)).await;
            if let Some(suppressed) = throttle.admit() {
                admitted.push(suppressed);
            }
        }
        assert_eq!(admitted, [99, 99, 99]);
    }
}
