//! A query to run: one statement's SQL and the values bound to its `?` parameters, never
//! interpolated; and the guard on the model's SQL.

use dual_sql::BoundQuery;
use dual_sql::sql_guard::{FunctionPolicy, SqlDialect, read_only_query_with};
use mysql_async::Value;
use serde_json::Value as Json;

/// One statement and its parameters, as a [`MyExecutor`](crate::MyExecutor) runs it: its SQL and
/// the parameters' values are those of the [`BoundQuery`] it dereferences to.
///
/// ```
/// use dual_mysql::MyQuery;
///
/// let query = MyQuery::new("SELECT * FROM orders WHERE region = ? AND total > ?").bind("EU").bind(100);
/// # let _ = query;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MyQuery(BoundQuery<Value>);

impl MyQuery {
    /// `sql` with no parameters bound yet.
    #[must_use]
    pub fn new(sql: impl Into<String>) -> Self {
        Self(BoundQuery::new(sql))
    }

    /// Binds `value` to the next `?`.
    #[must_use]
    pub fn bind(mut self, value: impl Into<Value>) -> Self {
        self.0.bind(value.into());
        self
    }

    /// Binds the JSON `params` of a tool call in order: `null` as NULL, a boolean as 0 or 1, a number
    /// as an integer or a double, a string as itself; `null` or no params bind nothing.
    ///
    /// # Errors
    /// A message for the model when `params` is not an array or holds an array or object.
    pub fn bind_json(mut self, params: &Json) -> Result<Self, String> {
        match params {
            Json::Null => Ok(self),
            Json::Array(values) => {
                for (at, value) in values.iter().enumerate() {
                    let bound = match value {
                        Json::Null => Value::NULL,
                        Json::Bool(b) => Value::Int(i64::from(*b)),
                        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
                            (Some(i), _) => Value::Int(i),
                            (None, Some(u)) => Value::UInt(u),
                            _ => Value::Double(n.as_f64().unwrap_or_default()),
                        },
                        Json::String(s) => Value::Bytes(s.clone().into_bytes()),
                        Json::Array(_) | Json::Object(_) => {
                            return Err(format!(
                                "parameter {} must be a number, a string, a boolean or null",
                                at + 1
                            ));
                        }
                    };
                    self.0.bind(bound);
                }
                Ok(self)
            }
            _ => Err("`params` must be an array: its values are bound to the `?`s in order".to_owned()),
        }
    }
}

impl std::ops::Deref for MyQuery {
    type Target = BoundQuery<Value>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// Parses `sql` as MySQL (its `/*! … */` comments read as MySQL runs them) and returns the one
/// read-only query it holds, written back as the statement to run (dual-sql's `sql_guard`):
/// `SELECT … INTO OUTFILE`/`DUMPFILE`, locking clauses and anything but one query are refused. The
/// read-only transaction it runs in is the second layer.
pub(crate) fn check_select(sql: &str, policy: &FunctionPolicy) -> Result<String, String> {
    read_only_query_with(sql, SqlDialect::MySql, policy).map_err(|refused| refused.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn binds_json_in_order() {
        let query = MyQuery::new("SELECT ?, ?, ?, ?").bind_json(&json!(["a", 2, true, null]));
        assert_eq!(
            query.map(|q| q.params().to_vec()),
            Ok(vec![
                Value::Bytes(b"a".to_vec()),
                Value::Int(2),
                Value::Int(1),
                Value::NULL
            ])
        );
        assert!(MyQuery::new("SELECT ?").bind_json(&json!({"a": 1})).is_err());
        assert!(MyQuery::new("SELECT ?").bind_json(&json!([[1]])).is_err());
    }

    #[test]
    fn accepts_only_read_queries_that_write_no_file() {
        assert_eq!(
            check_select(" select 1 ; # end", &FunctionPolicy::new()).as_deref(),
            Ok("SELECT 1")
        );
        for sql in [
            "",
            "DELETE FROM t",
            "CREATE TABLE t (x int)",
            "BEGIN",
            "SET autocommit = 0",
            "SELECT * FROM t INTO OUTFILE '/tmp/x'",
            "SELECT 1 INTO DUMPFILE '/tmp/y'",
        ] {
            assert!(check_select(sql, &FunctionPolicy::new()).is_err(), "{sql}");
        }
    }
}
