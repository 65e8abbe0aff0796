//! Log output captured in a buffer, for tests of what reaches a log line: [`Logs`], and
//! [`assert_each_line_escapes`] for a log read from anywhere (a child process's stderr).

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use tracing::subscriber::DefaultGuard;
use tracing_subscriber::fmt::MakeWriter;

/// The events of the current thread, formatted by tracing-subscriber's `fmt` subscriber as an
/// operator reads them (no time, no colours), with its own ANSI sanitization off: every field shows
/// its raw text, so a test that finds no control character here knows the code escaped it itself.
///
/// ```
/// use dual_testkit::logs::Logs;
///
/// let (logs, _guard) = Logs::capture();
/// let detail = "x\nFORGED\u{1b}[2J";
/// tracing::warn!(detail = %dual_core::escape::log_safe(detail), "query failed");
/// logs.assert_clean();
/// assert!(logs.text().contains(r"x\nFORGED\u{1b}[2J"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Logs {
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl Logs {
    /// Captures every event (down to `TRACE`) of the current thread until the guard is dropped. With
    /// `#[tokio::test]`'s current-thread runtime that is every task of the test.
    #[must_use]
    pub fn capture() -> (Self, DefaultGuard) {
        let logs = Self::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(logs.clone())
            .with_ansi(false)
            .with_ansi_sanitization(false)
            .without_time()
            .with_max_level(tracing::Level::TRACE)
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    /// What was logged so far.
    #[must_use]
    pub fn text(&self) -> String {
        let buffer = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&buffer).into_owned()
    }

    /// Panics, showing the log, unless every line is one whole event (it starts with its level, so
    /// no text forged a line of its own) and no character but the newlines that end the lines is a
    /// control character, a Unicode line or paragraph separator, or a bidirectional override.
    pub fn assert_clean(&self) {
        let text = self.text();
        let bad = text.chars().find(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        });
        assert!(bad.is_none(), "a raw {bad:?} reached the log:\n{text}");
        for line in text.lines() {
            let level = line.trim_start().split(' ').next().unwrap_or_default();
            assert!(
                ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"].contains(&level),
                "a line that is not an event of its own: {line:?}\n{text}"
            );
        }
    }
}

/// Panics, showing `log`, unless each of `events` (text of an event's message) has a line in `log`,
/// and that line holds `escaped`: the escaped form of hostile text the event carried.
///
/// ```
/// dual_testkit::logs::assert_each_line_escapes(
///     "WARN query failed detail=x\\nFORGED\nINFO served\n",
///     &["query failed"],
///     r"x\nFORGED",
/// );
/// ```
#[track_caller]
pub fn assert_each_line_escapes(log: &str, events: &[&str], escaped: &str) {
    for event in events {
        let line = log
            .lines()
            .find(|line| line.contains(event))
            .unwrap_or_else(|| panic!("no `{event}` line:\n{log}"));
        assert!(line.contains(escaped), "{event}: {line}");
    }
}

/// The writer of one event, appending to the buffer.
#[derive(Debug)]
pub struct LogWriter {
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut buffer = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        buffer.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Logs {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        LogWriter {
            buffer: Arc::clone(&self.buffer),
        }
    }
}
