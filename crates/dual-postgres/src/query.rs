//! A query to run: one statement's SQL and the values bound to its parameters (`$1`, `$2`, …), each
//! sent as text for PostgreSQL to parse as the parameter's type, never interpolated.

use dual_sql::BoundQuery;
use dual_sql::sql_guard::{FunctionPolicy, SqlDialect, read_only_query_with};
use serde_json::Value;

/// One statement and its parameters, as a [`PgExecutor`](crate::PgExecutor) runs it: its SQL and
/// the parameters' texts (`None` for NULL) are those of the [`BoundQuery`] it dereferences to.
///
/// ```
/// use dual_postgres::PgQuery;
///
/// let query = PgQuery::new("SELECT * FROM orders WHERE region = $1 AND total > $2").bind("EU").bind(100);
/// # let _ = query;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgQuery(BoundQuery<Option<String>>);

impl PgQuery {
    /// `sql` with no parameters bound yet.
    #[must_use]
    pub fn new(sql: impl Into<String>) -> Self {
        Self(BoundQuery::new(sql))
    }

    /// Binds `value`'s text to the next parameter (`$1`, then `$2`, …): PostgreSQL parses it as the
    /// parameter's type, as it would a quoted literal (`'2024-01-01'`, `'42'`, `'{1,2}'`).
    #[must_use]
    pub fn bind(mut self, value: impl ToString) -> Self {
        self.0.bind(Some(value.to_string()));
        self
    }

    /// Binds NULL to the next parameter.
    #[must_use]
    pub fn bind_null(mut self) -> Self {
        self.0.bind(None);
        self
    }

    /// Binds the JSON `params` of a tool call in order (`$1`, `$2`, …): `null` as NULL, a string as
    /// its text, a number or boolean as its JSON text; `null` or no params bind nothing.
    ///
    /// # Errors
    /// A message for the model when `params` is not an array (PostgreSQL binds by position) or
    /// holds an array or object.
    pub fn bind_json(mut self, params: &Value) -> Result<Self, String> {
        match params {
            Value::Null => Ok(self),
            Value::Array(values) => {
                for (at, value) in values.iter().enumerate() {
                    self = match value {
                        Value::Null => self.bind_null(),
                        Value::String(s) => self.bind(s),
                        Value::Bool(_) | Value::Number(_) => self.bind(value),
                        Value::Array(_) | Value::Object(_) => {
                            return Err(format!(
                                "parameter ${} must be a number, a string, a boolean or null",
                                at + 1
                            ));
                        }
                    };
                }
                Ok(self)
            }
            _ => Err("`params` must be an array: its values are bound to $1, $2, … in order".to_owned()),
        }
    }
}

impl std::ops::Deref for PgQuery {
    type Target = BoundQuery<Option<String>>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// Parses `sql` as PostgreSQL (nested comments included) and returns the one read-only query it
/// holds, written back as the statement to run (dual-sql's `sql_guard`). The read-only
/// transaction it runs in refuses any write that gets past it, and PostgreSQL prepares one statement
/// only.
pub(crate) fn check_select(sql: &str, policy: &FunctionPolicy) -> Result<String, String> {
    read_only_query_with(sql, SqlDialect::PostgreSql, policy).map_err(|refused| refused.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn binds_json_in_order_as_text() {
        let query = PgQuery::new("SELECT $1, $2, $3, $4").bind_json(&json!(["a", 1.5, true, null]));
        assert_eq!(
            query.map(|q| q.params().to_vec()),
            Ok(vec![
                Some("a".to_owned()),
                Some("1.5".to_owned()),
                Some("true".to_owned()),
                None
            ])
        );
        assert!(PgQuery::new("SELECT $1").bind_json(&json!({"a": 1})).is_err());
        assert!(PgQuery::new("SELECT $1").bind_json(&json!([[1]])).is_err());
    }

    #[test]
    fn accepts_only_read_queries_and_strips_the_terminator() {
        assert_eq!(
            check_select(" select 1 ; -- end", &FunctionPolicy::new()).as_deref(),
            Ok("SELECT 1")
        );
        assert!(
            check_select(
                "/* c */ WITH x AS (SELECT 1) SELECT * FROM x",
                &FunctionPolicy::new()
            )
            .is_ok()
        );
        assert_eq!(
            check_select("VALUES (1)", &FunctionPolicy::new()).as_deref(),
            Ok("VALUES (1)")
        );
        for sql in [
            "",
            "  ;",
            "DELETE FROM t",
            "BEGIN",
            "COMMIT",
            "SET x = 1",
            "COPY t TO STDOUT",
        ] {
            assert!(check_select(sql, &FunctionPolicy::new()).is_err(), "{sql}");
        }
    }
}
