//! Log lines on stderr: coloured only for a person at a terminal, and one line per event whatever
//! the event holds.

use std::ffi::OsStr;
use std::io::{self, IsTerminal, Write};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::Directive;
use tracing_subscriber::fmt::MakeWriter;

/// Whether log lines get ANSI colours: only when stderr is a terminal and `NO_COLOR` is unset or
/// empty (<https://no-color.org>). A file or a pipe (a host reading an MCP server's stderr, CI logs)
/// gets plain text.
#[must_use]
pub fn use_color(stderr_is_terminal: bool, no_color: Option<&OsStr>) -> bool {
    stderr_is_terminal && no_color.is_none_or(OsStr::is_empty)
}

/// The log filter: `RUST_LOG` when it is set (else `default_level`), with the MCP SDK capped at
/// `info` whatever `RUST_LOG` says. rmcp logs every message it sends and receives at `debug`: tool
/// results (sample rows, capability links with their tokens) and `resources/read` pages, which no log
/// may hold (docs/SECURITY.md).
#[must_use]
pub fn filter(rust_log: Option<&str>, default_level: &str) -> EnvFilter {
    let filter = rust_log
        .and_then(|spec| EnvFilter::try_new(spec).ok())
        .unwrap_or_else(|| EnvFilter::new(default_level));
    match "rmcp=info".parse::<Directive>() {
        Ok(cap) => filter.add_directive(cap),
        Err(_) => filter,
    }
}

/// Whether this process's log lines get colours (see [`use_color`]).
#[must_use]
pub fn stderr_color() -> bool {
    use_color(
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    )
}

/// The demo's log writer: stderr, with every control character of an event escaped except the
/// newline that ends it (and, with colours on, the escapes of the colours themselves).
///
/// Every field of this workspace that can hold executor or user text is already written through
/// `dual_core::escape::log_safe`; this is the backstop for the fields of the crates below (rmcp logs
/// a JSON-RPC id a client chose, hyper its errors), so no event can forge a second line or send a
/// terminal escape. tracing-subscriber formats each event whole and writes it with one
/// `write_all`, so the last newline of a write is the event's own.
#[derive(Debug, Clone, Copy)]
pub struct EscapingStderr {
    color: bool,
}

impl EscapingStderr {
    /// A writer for events formatted with colours (`ESC` kept) or without (every control escaped).
    #[must_use]
    pub fn new(color: bool) -> Self {
        Self { color }
    }
}

impl<'a> MakeWriter<'a> for EscapingStderr {
    type Writer = Escaping<io::Stderr>;

    fn make_writer(&'a self) -> Self::Writer {
        Escaping::new(io::stderr(), self.color)
    }
}

/// A writer that passes each write on with [`escape_event`] applied.
#[derive(Debug)]
pub struct Escaping<W> {
    inner: W,
    keep_esc: bool,
}

impl<W: Write> Escaping<W> {
    /// Writes to `inner`; `keep_esc` keeps `ESC` (for colours) and escapes every other control.
    pub fn new(inner: W, keep_esc: bool) -> Self {
        Self { inner, keep_esc }
    }
}

impl<W: Write> Write for Escaping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match escape_event(buf, self.keep_esc) {
            Some(escaped) => self.inner.write_all(escaped.as_bytes())?,
            None => self.inner.write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `event` (one formatted log event) with its control characters escaped as `\n`, `\r`, `\t` or
/// `\u{…}` (every character `dual_core::escape::is_hidden` names, as `log_safe` does), except
/// a last newline and, with `keep_esc`, `ESC`; `None` when nothing needs escaping. Backslashes are
/// left alone: a field escaped by `log_safe` is not escaped twice.
#[must_use]
pub fn escape_event(event: &[u8], keep_esc: bool) -> Option<String> {
    let (body, end) = match event.strip_suffix(b"\n") {
        Some(body) => (body, "\n"),
        None => (event, ""),
    };
    if body
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) || (keep_esc && b == 0x1b))
    {
        return None;
    }
    let text = String::from_utf8_lossy(body);
    let needs = |c: char| dual_core::escape::is_hidden(c) && !(keep_esc && c == '\u{1b}');
    if !text.contains(needs) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push_str(end);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_sdk_never_logs_messages() {
        for rust_log in [
            None,
            Some("debug"),
            Some("rmcp=trace"),
            Some("trace,rmcp=debug"),
            Some("not a [filter"),
        ] {
            let filter = filter(rust_log, "info").to_string();
            assert!(filter.contains("rmcp=info"), "{rust_log:?}: {filter}");
            assert!(
                !filter.contains("rmcp=debug") && !filter.contains("rmcp=trace"),
                "{rust_log:?}: {filter}"
            );
        }
        assert!(filter(Some("debug"), "info").to_string().contains("debug"));
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(use_color(true, None));
        assert!(use_color(true, Some(OsStr::new(""))));
        assert!(!use_color(true, Some(OsStr::new("1"))));
        assert!(!use_color(false, None));
    }

    #[test]
    fn an_event_stays_one_line_without_terminal_escapes() {
        let forged = "WARN id=x\n2026-01-01T00:00:00Z  INFO FORGED\u{1b}[2J\0 done\n";
        assert_eq!(
            escape_event(forged.as_bytes(), false).as_deref(),
            Some("WARN id=x\\n2026-01-01T00:00:00Z  INFO FORGED\\u{1b}[2J\\u{0} done\n")
        );
        // Colours keep their ESC; newlines are still escaped.
        assert_eq!(
            escape_event(b"\x1b[32mINFO\x1b[0m a\rb\n", true).as_deref(),
            Some("\u{1b}[32mINFO\u{1b}[0m a\\rb\n")
        );
        // Plain lines, and lines escaped upstream, pass through untouched.
        assert_eq!(escape_event(b"INFO detail=a\\nb caf\xc3\xa9\n", false), None);
        assert_eq!(
            escape_event(b"INFO \xe2\x80\xae x\n", false).as_deref(),
            Some("INFO \\u{202e} x\n")
        );
    }

    #[test]
    fn the_writer_escapes_each_write() {
        let mut out = Vec::new();
        let mut writer = Escaping::new(&mut out, false);
        assert!(writer.write_all(b"ERROR a\nb\n").is_ok());
        assert!(writer.write_all(b"INFO c\n").is_ok());
        assert_eq!(String::from_utf8_lossy(&out), "ERROR a\\nb\nINFO c\n");
    }
}
