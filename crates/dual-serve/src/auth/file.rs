//! The token file: one `TOKEN OWNER` pair per line, `#` comment lines and blank lines ignored.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::AuthTokens;

/// Why the token file was refused; start-up stops with it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthFileError {
    /// The file could not be read.
    #[error("cannot read the token file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The IO error.
        source: std::io::Error,
    },
    /// The file is malformed.
    #[error("token file {path}: {source}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, and on which line.
        source: TokenFileError,
    },
}

/// What is wrong with the text of a token file. Lines are numbered from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenFileError {
    /// A line that is not exactly two whitespace-separated fields.
    #[error("line {line}: expected `TOKEN OWNER`, found {fields} field(s)")]
    Fields {
        /// The line number.
        line: usize,
        /// How many fields it has.
        fields: usize,
    },
    /// A token with a character that cannot travel in an HTTP header.
    #[error("line {line}: the token must be printable ASCII")]
    Unprintable {
        /// The line number.
        line: usize,
    },
    /// A token given twice.
    #[error("line {line}: duplicate token (first given on line {first})")]
    Duplicate {
        /// The line number of the repetition.
        line: usize,
        /// The line number of the first occurrence.
        first: usize,
    },
    /// No token at all: every request would be refused.
    #[error("no tokens (every line is blank or a comment)")]
    Empty,
}

pub(super) fn read(path: &Path) -> Result<AuthTokens, AuthFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| AuthFileError::Read {
        path: path.to_owned(),
        source,
    })?;
    AuthTokens::parse(&text).map_err(|source| AuthFileError::Invalid {
        path: path.to_owned(),
        source,
    })
}

/// The `(token, owner)` pairs of `text`, in file order.
pub(super) fn parse(text: &str) -> Result<Vec<(String, String)>, TokenFileError> {
    let mut pairs = Vec::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = raw.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = content.split_whitespace().collect();
        let [token, owner] = fields[..] else {
            return Err(TokenFileError::Fields {
                line,
                fields: fields.len(),
            });
        };
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenFileError::Unprintable { line });
        }
        if let Some(&first) = seen.get(token) {
            return Err(TokenFileError::Duplicate { line, first });
        }
        seen.insert(token, line);
        pairs.push((token.to_owned(), owner.to_owned()));
    }
    if pairs.is_empty() {
        return Err(TokenFileError::Empty);
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        let pairs =
            parse("# the demo's tokens\n\n  tok-a   alice  \n\t# more\ntok-b bob\r\n").expect("valid");
        assert_eq!(
            pairs,
            [
                ("tok-a".to_owned(), "alice".to_owned()),
                ("tok-b".to_owned(), "bob".to_owned())
            ]
        );
    }

    #[test]
    fn malformed_lines_are_named() {
        assert_eq!(
            parse("# c\ntok-a alice\nlonely\n"),
            Err(TokenFileError::Fields { line: 3, fields: 1 })
        );
        assert_eq!(
            parse("tok-a alice extra\n"),
            Err(TokenFileError::Fields { line: 1, fields: 3 })
        );
        assert_eq!(
            parse("tok-a alice\n\ntok-b bob\ntok-a carol\n"),
            Err(TokenFileError::Duplicate { line: 4, first: 1 })
        );
        assert_eq!(
            parse("tok-a alice\ntök bob\n"),
            Err(TokenFileError::Unprintable { line: 2 })
        );
        assert_eq!(parse("# nothing\n\n"), Err(TokenFileError::Empty));
    }

    #[test]
    fn messages_name_the_line() {
        let error = parse("a b\nc\n").expect_err("malformed");
        assert_eq!(
            error.to_string(),
            "line 2: expected `TOKEN OWNER`, found 1 field(s)"
        );
    }

    #[test]
    fn unreadable_files_name_the_path() {
        let path = Path::new("/nonexistent/dual-serve-tokens");
        let error = read(path).expect_err("unreadable");
        assert!(
            error.to_string().contains("/nonexistent/dual-serve-tokens"),
            "{error}"
        );
    }
}
