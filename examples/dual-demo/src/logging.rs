//! Log lines on stderr: coloured only for a person at a terminal.

use std::ffi::OsStr;
use std::io::IsTerminal;

/// Whether log lines get ANSI colours: only when stderr is a terminal and `NO_COLOR` is unset or
/// empty (<https://no-color.org>). A file or a pipe (a host reading an MCP server's stderr, CI logs)
/// gets plain text.
#[must_use]
pub fn use_color(stderr_is_terminal: bool, no_color: Option<&OsStr>) -> bool {
    stderr_is_terminal && no_color.is_none_or(OsStr::is_empty)
}

/// Whether this process's log lines get colours (see [`use_color`]).
#[must_use]
pub fn stderr_color() -> bool {
    use_color(
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(use_color(true, None));
        assert!(use_color(true, Some(OsStr::new(""))));
        assert!(!use_color(true, Some(OsStr::new("1"))));
        assert!(!use_color(false, None));
    }
}
