//! Text that is safe to write into a log line ([`log_safe`]) or to show a model, a person or a
//! terminal ([`display_safe`]).
//!
//! Executor messages, SQL errors, ids, parameter names, column aliases and resource names can hold
//! anything a user, the model's SQL or a database put there, newlines and terminal escapes
//! included. Written as they are, a newline forges a log line, `ESC[2J` clears the operator's
//! terminal and U+202E (right-to-left override) shows `gnp.exe` as `exe.png`. Every field that can
//! hold such text is logged through [`log_safe`] (an error through [`log_error`]) and shown through
//! [`display_safe`]: printable text stays as it is, everything [`is_hidden`] says becomes a visible
//! escape.

mod display;

pub use display::{display_safe, display_safe_multiline};

use std::error::Error as StdError;
use std::fmt;

use crate::error::Report;

/// `text`, displayed with every control character escaped, for a log field:
/// `tracing::error!(detail = %log_safe(&message), …)`.
///
/// `\n`, `\r` and `\t` become those two-character escapes, a backslash becomes `\\`, and every other
/// character [`is_hidden`] names (control characters, the Unicode line and paragraph separators, the
/// bidirectional controls) becomes `\u{…}`. Nothing is cut: bound the length where the text comes
/// from.
///
/// ```
/// use dual_core::escape::log_safe;
///
/// let forged = "no such column: x\n2026-01-01T00:00:00Z  INFO admin logged in\u{1b}[2J";
/// assert_eq!(
///     log_safe(forged).to_string(),
///     r"no such column: x\n2026-01-01T00:00:00Z  INFO admin logged in\u{1b}[2J"
/// );
/// assert_eq!(log_safe("plain text, ünïcödé").to_string(), "plain text, ünïcödé");
/// ```
#[must_use]
pub fn log_safe(text: &str) -> LogSafe<'_> {
    LogSafe(text)
}

/// A request path for a log field: [`log_safe`] of the path cut before the first percent-encoded `?`
/// (`%3F`), where a client that encoded its query into the path (a capability link's `token`, say)
/// put secrets that no log may keep; the cut is marked with `…`.
///
/// ```
/// use dual_core::escape::log_path;
///
/// assert_eq!(log_path("/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV/data").to_string(), "/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV/data");
/// assert_eq!(log_path("/resources/x/data%3Fformat=csv&token=secret").to_string(), "/resources/x/data…");
/// assert_eq!(log_path("/r/x%3ftoken=secret").to_string(), "/r/x…");
/// ```
#[must_use]
pub fn log_path(path: &str) -> LogPath<'_> {
    let cut = path
        .as_bytes()
        .windows(3)
        .position(|w| w[0] == b'%' && w[1] == b'3' && w[2].eq_ignore_ascii_case(&b'f'));
    match cut {
        Some(at) => LogPath(&path[..at], true),
        None => LogPath(path, false),
    }
}

/// The [`Display`](fmt::Display) of [`log_path`].
#[derive(Debug, Clone, Copy)]
pub struct LogPath<'a>(&'a str, bool);

impl fmt::Display for LogPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&log_safe(self.0), f)?;
        if self.1 { f.write_str("…") } else { Ok(()) }
    }
}

/// `error` and its sources ([`Report`]), displayed as [`log_safe`] displays text:
/// `tracing::warn!(error = %log_error(&error), …)`. The errors of this workspace keep their cause as
/// their source rather than in their `Display`, so a log line shows the error this way.
///
/// ```
/// use dual_core::escape::log_error;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("query execution failed")]
/// struct Failed(#[source] std::io::Error);
///
/// let error = Failed(std::io::Error::other("no such column: x\nFORGED"));
/// assert_eq!(log_error(&error).to_string(), r"query execution failed: no such column: x\nFORGED");
/// ```
#[must_use]
pub fn log_error<'a>(error: &'a (dyn StdError + 'static)) -> LogError<'a> {
    LogError(Report::new(error))
}

/// The [`Display`](fmt::Display) of [`log_error`].
#[derive(Debug, Clone, Copy)]
pub struct LogError<'a>(Report<'a>);

impl fmt::Display for LogError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&log_safe(&self.0.to_string()), f)
    }
}

/// The [`Display`](fmt::Display) of [`log_safe`].
#[derive(Debug, Clone, Copy)]
pub struct LogSafe<'a>(&'a str);

/// Whether `c` must not reach a log line, a model, a person or a terminal as it is, because it acts
/// instead of showing: every control character (C0 with `\n`, `\r` and `\t`, DEL, C1, which holds
/// `ESC`'s 8-bit twin CSI), the Unicode line and paragraph separators (U+2028, U+2029), and the
/// bidirectional controls of Unicode's `Bidi_Control` property: the marks U+061C, U+200E and U+200F,
/// the embeddings and overrides U+202A–U+202E and the isolates U+2066–U+2069.
///
/// [`log_safe`], [`display_safe`] and the MCP text table escape exactly these (the first and the last
/// also a backslash); the result view shows them (tab, line feed and carriage return aside, which it
/// shows as spaces) as a visible marker `⟨U+202E⟩`.
///
/// ```
/// use dual_core::escape::is_hidden;
///
/// assert!(is_hidden('\u{1b}') && is_hidden('\n') && is_hidden('\u{9b}') && is_hidden('\u{202e}'));
/// assert!(!is_hidden('a') && !is_hidden('\\') && !is_hidden('ü') && !is_hidden('😀'));
/// ```
#[must_use]
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Whether `c` must not reach a log line as it is (also what the MCP text table escapes): what
/// [`is_hidden`] names, and the backslash that starts an escape.
pub(crate) fn needs_escape(c: char) -> bool {
    c == '\\' || is_hidden(c)
}

impl fmt::Display for LogSafe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(at) = rest.find(needs_escape) {
            f.write_str(&rest[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            match c {
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                '\\' => f.write_str("\\\\")?,
                other => write!(f, "\\u{{{:x}}}", u32::from(other))?,
            }
            rest = &rest[at + c.len_utf8()..];
        }
        f.write_str(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::log_safe;

    #[test]
    fn escapes_every_control_character_and_nothing_else() {
        for (input, expected) in [
            ("a\nb", r"a\nb"),
            ("a\r\nb", r"a\r\nb"),
            ("tab\there", r"tab\there"),
            ("\u{1b}[2J", r"\u{1b}[2J"),
            ("nul\0", r"nul\u{0}"),
            ("del\u{7f}", r"del\u{7f}"),
            ("c1\u{85}", r"c1\u{85}"),
            ("ls\u{2028}ps\u{2029}", r"ls\u{2028}ps\u{2029}"),
            ("bidi\u{202e}x", r"bidi\u{202e}x"),
            (r"back\slash", r"back\\slash"),
            ("", ""),
            ("ok 😀 ü", "ok 😀 ü"),
        ] {
            assert_eq!(log_safe(input).to_string(), expected, "{input:?}");
        }
    }

    #[test]
    fn escaped_text_has_no_control_characters() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        let out = log_safe(&all).to_string();
        assert!(!out.chars().any(char::is_control));
        assert!(!out.contains('\u{2028}') && !out.contains('\u{202e}'));
    }
}
