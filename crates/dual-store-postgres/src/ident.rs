//! Table and schema names, checked once so they can be spliced into SQL safely.

use std::fmt;

use crate::ConnectError;

/// The longest table name: PostgreSQL allows 63 bytes, and the index name adds `_expires_at_idx`.
const MAX_TABLE: usize = 48;
/// The longest schema name PostgreSQL allows.
const MAX_SCHEMA: usize = 63;

/// A lower-case SQL identifier (`[a-z_][a-z0-9_]*`), written double-quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ident(String);

impl Ident {
    pub(crate) fn table(name: &str) -> Result<Self, ConnectError> {
        Self::new("table", name, MAX_TABLE)
    }

    pub(crate) fn schema(name: &str) -> Result<Self, ConnectError> {
        Self::new("schema", name, MAX_SCHEMA)
    }

    fn new(what: &str, name: &str, max: usize) -> Result<Self, ConnectError> {
        let mut chars = name.chars();
        let valid_start = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_');
        let valid_rest = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if valid_start && valid_rest && name.len() <= max {
            Ok(Self(name.to_owned()))
        } else {
            Err(ConnectError::config(format!(
                "postgres: the {what} name {name:?} must be 1 to {max} characters of a-z, 0-9 and _, not starting with a digit"
            )))
        }
    }

    /// The name of the expiry index of `table`.
    pub(crate) fn index_of(table: &Self) -> Self {
        Self(format!("{}_expires_at_idx", table.0))
    }

    /// The name of the owner listing index of `table`.
    pub(crate) fn owner_index_of(table: &Self) -> Self {
        Self(format!("{}_owner_idx", table.0))
    }

    /// The name of the tasks table beside `table`.
    pub(crate) fn tasks_of(table: &Self) -> Self {
        Self(format!("{}_tasks", table.0))
    }

    /// The name of the MCP sessions table beside `table`.
    pub(crate) fn sessions_of(table: &Self) -> Self {
        Self(format!("{}_sessions", table.0))
    }

    /// The name of the expiry index of the table `{table}_{kind}` (`tasks` or `sessions`), within
    /// PostgreSQL's 63 bytes for the longest table name.
    pub(crate) fn expiry_index_of(table: &Self, kind: char) -> Self {
        Self(format!("{}_{kind}_exp_idx", table.0))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Checked characters only, so quoting needs no escaping.
        write!(f, "\"{}\"", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::Ident;

    #[test]
    fn accepts_plain_names_and_rejects_the_rest() {
        assert_eq!(
            Ident::table("dual_resources").map(|i| i.to_string()).ok(),
            Some("\"dual_resources\"".into())
        );
        assert!(Ident::schema("_s1").is_ok());
        for bad in [
            "",
            "1abc",
            "Upper",
            "a-b",
            "a\"b",
            "a b",
            "x;drop",
            &"a".repeat(49),
        ] {
            assert!(Ident::table(bad).is_err(), "{bad}");
        }
    }
}
