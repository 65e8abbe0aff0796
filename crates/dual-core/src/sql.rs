//! The text checks every SQL executor makes before a statement reaches its database: the first
//! keyword (after whitespace and comments), and the statement without its terminating `;`, ready to
//! be wrapped as a subquery. No parsing beyond that: each database still refuses what its read-only
//! transaction or connection forbids.

/// Which comments a dialect has besides `--` and `/* */`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Comments {
    /// `--` and `/* */` (SQLite, PostgreSQL).
    Standard,
    /// `--`, `/* */` and `#` (MySQL, MariaDB).
    Hash,
}

/// `sql` after its leading whitespace and comments.
#[must_use]
pub fn skip_comments(sql: &str, comments: Comments) -> &str {
    let mut rest = sql;
    loop {
        rest = rest.trim_start();
        let line = rest.strip_prefix("--").or_else(|| {
            (comments == Comments::Hash)
                .then(|| rest.strip_prefix('#'))
                .flatten()
        });
        if let Some(after) = line {
            rest = after.split_once('\n').map_or("", |(_, tail)| tail);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, tail)| tail);
        } else {
            return rest;
        }
    }
}

/// The first word of `sql` after whitespace and comments.
#[must_use]
pub fn first_keyword(sql: &str, comments: Comments) -> &str {
    let rest = skip_comments(sql, comments);
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Refuses `sql` unless its first keyword is one of `allowed` (upper case), with a message for the
/// model.
///
/// # Errors
/// The message: the SQL is empty, or it does not start as a read-only query may.
pub fn read_only_keyword(sql: &str, allowed: &[&str], comments: Comments) -> Result<(), String> {
    let keyword = first_keyword(sql, comments).to_ascii_uppercase();
    if keyword.is_empty() {
        return Err("The SQL is empty: send one SELECT statement.".to_owned());
    }
    if !allowed.contains(&keyword.as_str()) {
        return Err(format!(
            "Only read-only queries are allowed: the SQL must be one SELECT (or WITH … SELECT) \
             statement, not {keyword}."
        ));
    }
    Ok(())
}

/// `sql` (one statement) trimmed and without its terminating `;`s and the whitespace and comments
/// after them. A `;` inside a string or a comment stays, because what follows it is not whitespace
/// and comments alone.
#[must_use]
pub fn without_terminator(sql: &str, comments: Comments) -> &str {
    let mut text = sql.trim();
    while let Some(at) = text.rfind(';') {
        if !skip_comments(&text[at + 1..], comments).is_empty() {
            break;
        }
        text = text[..at].trim_end();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_and_terminators() {
        assert_eq!(
            first_keyword("-- c\n/* d */ select 1", Comments::Standard),
            "select"
        );
        assert_eq!(first_keyword("# c\nSELECT 1", Comments::Hash), "SELECT");
        assert_eq!(first_keyword("# c\nSELECT 1", Comments::Standard), "");
        assert_eq!(
            without_terminator(" SELECT 1 ; -- x", Comments::Standard),
            "SELECT 1"
        );
        assert_eq!(
            without_terminator("SELECT ';' || 1", Comments::Standard),
            "SELECT ';' || 1"
        );
        assert_eq!(without_terminator("SELECT 1;; # x", Comments::Hash), "SELECT 1");
        assert!(read_only_keyword("DELETE FROM t", &["SELECT"], Comments::Standard).is_err());
        assert!(read_only_keyword("  ", &["SELECT"], Comments::Standard).is_err());
        assert!(
            read_only_keyword(
                "with x as (select 1) select 1",
                &["SELECT", "WITH"],
                Comments::Standard
            )
            .is_ok()
        );
    }
}
