//! Text for a model, a person or a terminal: [`display_safe`] and [`display_safe_multiline`].

use std::borrow::Cow;
use std::fmt::Write as _;

use super::is_hidden;

/// `text` with every character [`is_hidden`] names written as a visible escape, for a string a model,
/// a person or a terminal reads: a resource's name, a summary, a `resources/list` entry, a table
/// printed by a command.
///
/// `\n`, `\r` and `\t` become those two-character escapes, every other hidden character `\u{…}`
/// (`ESC` is `\u{1b}`, the right-to-left override `\u{202e}`). Unlike [`log_safe`](super::log_safe)
/// a backslash stays as it is, so the function is idempotent: text escaped once (by the server, say)
/// is not escaped again by the next layer (the client printing it), and a name that went through it
/// when its resource was created reads the same when it is shown. The text is borrowed when nothing
/// needs escaping. Nothing is cut: bound the length where the text comes from.
///
/// ```
/// use dual_core::escape::display_safe;
///
/// let title = "SELECT 1 AS \"x\u{1b}[2J\" -- \u{202e}gnp.exe";
/// assert_eq!(display_safe(title), r#"SELECT 1 AS "x\u{1b}[2J" -- \u{202e}gnp.exe"#);
/// assert_eq!(display_safe(&display_safe(title)), display_safe(title));
/// assert_eq!(display_safe("line\nbreak\\n"), r"line\nbreak\n");
/// assert_eq!(display_safe("plain, ünïcödé 😀"), "plain, ünïcödé 😀");
/// ```
#[must_use]
pub fn display_safe(text: &str) -> Cow<'_, str> {
    escaped(text, false)
}

/// [`display_safe`] that keeps line feeds, for a text of several lines a model or a person reads as
/// such (an error message with the database's `LINE 1: …` and its caret); carriage returns and
/// everything else [`is_hidden`] names are escaped, so a line can still not be overwritten.
///
/// ```
/// use dual_core::escape::display_safe_multiline;
///
/// assert_eq!(
///     display_safe_multiline("syntax error\nLINE 1: SELEC\u{1b}[2J\r"),
///     "syntax error\nLINE 1: SELEC\\u{1b}[2J\\r"
/// );
/// ```
#[must_use]
pub fn display_safe_multiline(text: &str) -> Cow<'_, str> {
    escaped(text, true)
}

fn escaped(text: &str, keep_line_feeds: bool) -> Cow<'_, str> {
    let escapes = |c: char| is_hidden(c) && !(keep_line_feeds && c == '\n');
    if !text.contains(escapes) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !escapes(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use proptest::prelude::*;

    use super::{display_safe, display_safe_multiline};
    use crate::escape::is_hidden;

    #[test]
    fn escapes_what_acts_instead_of_showing_and_nothing_else() {
        for (input, expected) in [
            ("a\nb\r\tc", r"a\nb\r\tc"),
            ("\u{1b}[2J", r"\u{1b}[2J"),
            ("csi\u{9b}2J", r"csi\u{9b}2J"),
            ("nul\0del\u{7f}", r"nul\u{0}del\u{7f}"),
            ("ls\u{2028}ps\u{2029}", r"ls\u{2028}ps\u{2029}"),
            ("\u{202e}gnp.exe", r"\u{202e}gnp.exe"),
            (
                "lrm\u{200e}rlm\u{200f}alm\u{61c}",
                r"lrm\u{200e}rlm\u{200f}alm\u{61c}",
            ),
            (
                "isolates\u{2066}\u{2067}\u{2068}\u{2069}",
                r"isolates\u{2066}\u{2067}\u{2068}\u{2069}",
            ),
            (r"back\slash \u{1b}", r"back\slash \u{1b}"),
            ("", ""),
            ("ok 😀 ü עברית", "ok 😀 ü עברית"),
        ] {
            assert_eq!(display_safe(input), expected, "{input:?}");
        }
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(display_safe("SELECT * FROM t"), Cow::Borrowed(_)));
        assert!(matches!(display_safe_multiline("a\nb"), Cow::Borrowed(_)));
        assert!(matches!(display_safe("a\nb"), Cow::Owned(_)));
    }

    #[test]
    fn every_hidden_character_is_escaped() {
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        assert!(!display_safe(&all).chars().any(is_hidden));
        assert!(
            !display_safe_multiline(&all)
                .chars()
                .any(|c| c != '\n' && is_hidden(c))
        );
    }

    proptest! {
        #[test]
        fn no_hidden_character_survives_and_a_second_pass_changes_nothing(
            text in "(\\PC|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{61c}\\u{200e}\\u{200f}\\u{2028}\\u{2029}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}\\\\])*"
        ) {
            let once = display_safe(&text);
            prop_assert!(!once.chars().any(is_hidden), "{once:?}");
            prop_assert_eq!(display_safe(&once), once.clone());
            let lines = display_safe_multiline(&text);
            prop_assert!(!lines.chars().any(|c| c != '\n' && is_hidden(c)), "{lines:?}");
            prop_assert_eq!(lines.matches('\n').count(), text.matches('\n').count());
            prop_assert_eq!(display_safe_multiline(&lines), lines.clone());
            if !text.chars().any(is_hidden) {
                prop_assert_eq!(once.as_ref(), text.as_str());
            }
        }
    }
}
