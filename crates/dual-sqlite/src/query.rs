//! A query to run: one statement's SQL and the values bound to its parameters, by position
//! (`?`, `?1`) or by name (`:name`, `@name`, `$name`).

use dual_sql::BoundQuery;
use rusqlite::Statement;
use rusqlite::types::Value as SqlValue;
use serde_json::Value;

/// One statement and its parameters, as a [`SqliteExecutor`](crate::SqliteExecutor) runs it: wrapped
/// as a subquery (`SELECT * FROM (⟨sql⟩) …`) for counts, pages and ranges, never concatenated with
/// anything else. Values are always bound, never interpolated.
///
/// ```
/// use dual_sqlite::SqliteQuery;
///
/// let by_position = SqliteQuery::new("SELECT * FROM t WHERE a = ? AND b = ?").bind(1).bind("x".to_owned());
/// let by_name = SqliteQuery::new("SELECT * FROM t WHERE a = :a").bind_named("a", 1);
/// # let _ = (by_position, by_name);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SqliteQuery(BoundQuery<Param>);

/// One bound value: positional (`name: None`) or named.
#[derive(Debug, Clone, PartialEq)]
struct Param {
    name: Option<String>,
    value: SqlValue,
}

impl SqliteQuery {
    /// `sql` with no parameters bound yet.
    #[must_use]
    pub fn new(sql: impl Into<String>) -> Self {
        Self(BoundQuery::new(sql))
    }

    /// The statement's SQL.
    #[must_use]
    pub fn sql(&self) -> &str {
        self.0.sql()
    }

    /// Binds `value` to the next positional parameter: the first call binds `?1` (or the first
    /// `?`), the second `?2`, and so on.
    #[must_use]
    pub fn bind(mut self, value: impl Into<SqlValue>) -> Self {
        self.0.bind(Param {
            name: None,
            value: value.into(),
        });
        self
    }

    /// Binds `value` to the parameter called `name`, written in the SQL as `:name`, `@name` or
    /// `$name` (give `name` with or without its prefix).
    #[must_use]
    pub fn bind_named(mut self, name: impl Into<String>, value: impl Into<SqlValue>) -> Self {
        self.0.bind(Param {
            name: Some(name.into()),
            value: value.into(),
        });
        self
    }

    /// Binds the JSON `params` of a tool call: an array binds by position, an object by name,
    /// `null` binds nothing. Each value must be a JSON scalar: `null`, a boolean (bound as 0 or 1),
    /// a number (an integer when it fits `i64`, else a float) or a string.
    ///
    /// # Errors
    /// A message for the model when `params` is another JSON type or holds an array or object.
    pub fn bind_json(mut self, params: &Value) -> Result<Self, String> {
        match params {
            Value::Null => {}
            Value::Array(values) => {
                for (at, value) in values.iter().enumerate() {
                    let value = scalar(value).ok_or_else(|| {
                        format!(
                            "parameter {} must be a number, a string, a boolean or null",
                            at + 1
                        )
                    })?;
                    self = self.bind(value);
                }
            }
            Value::Object(values) => {
                for (name, value) in values {
                    let value = scalar(value).ok_or_else(|| {
                        format!("parameter `{name}` must be a number, a string, a boolean or null")
                    })?;
                    self = self.bind_named(name.clone(), value);
                }
            }
            _ => {
                return Err(
                    "`params` must be an array (bound to ?1, ?2, …) or an object (bound to :name)".to_owned(),
                );
            }
        }
        Ok(self)
    }

    /// Binds the query's values to `stmt` (the wrapped statement), then `extra` to the parameters
    /// the wrapper appended after them (`LIMIT ? OFFSET ?`).
    ///
    /// # Errors
    /// `InvalidParameterName` for a name the SQL does not have, `InvalidParameterCount` when the
    /// values do not bind every parameter of the SQL exactly once.
    pub(crate) fn bind_to(&self, stmt: &mut Statement<'_>, extra: &[i64]) -> rusqlite::Result<()> {
        let own = stmt.parameter_count().saturating_sub(extra.len());
        let mut bound = vec![false; own];
        let mut positional = 0;
        for param in self.0.params() {
            let index = match &param.name {
                None => {
                    positional += 1;
                    positional
                }
                Some(name) => named_index(stmt, name)?,
            };
            let Some(slot) = index.checked_sub(1).and_then(|at| bound.get_mut(at)) else {
                return Err(rusqlite::Error::InvalidParameterCount(self.0.params().len(), own));
            };
            if std::mem::replace(slot, true) {
                return Err(rusqlite::Error::InvalidParameterCount(self.0.params().len(), own));
            }
            stmt.raw_bind_parameter(index, &param.value)?;
        }
        if bound.iter().any(|b| !b) {
            return Err(rusqlite::Error::InvalidParameterCount(self.0.params().len(), own));
        }
        for (at, value) in extra.iter().enumerate() {
            stmt.raw_bind_parameter(own + 1 + at, value)?;
        }
        Ok(())
    }
}

/// The index of the parameter `name` (with or without its `:`, `@` or `$`).
fn named_index(stmt: &Statement<'_>, name: &str) -> rusqlite::Result<usize> {
    if name.starts_with([':', '@', '$']) {
        if let Some(index) = stmt.parameter_index(name)? {
            return Ok(index);
        }
    } else {
        for prefix in [':', '@', '$'] {
            if let Some(index) = stmt.parameter_index(&format!("{prefix}{name}"))? {
                return Ok(index);
            }
        }
    }
    Err(rusqlite::Error::InvalidParameterName(name.to_owned()))
}

/// A JSON scalar as SQLite's value; `None` for an array or object.
fn scalar(value: &Value) -> Option<SqlValue> {
    Some(match value {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => SqlValue::Integer(i),
            None => SqlValue::Real(n.as_f64()?),
        },
        Value::String(s) => SqlValue::Text(s.clone()),
        Value::Array(_) | Value::Object(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;
    use serde_json::json;

    use super::*;

    fn run(query: &SqliteQuery) -> rusqlite::Result<Vec<i64>> {
        let conn = Connection::open_in_memory()?;
        let sql = format!("SELECT * FROM (\n{}\n) LIMIT ? OFFSET ?", query.sql());
        let mut stmt = conn.prepare(&sql)?;
        query.bind_to(&mut stmt, &[10, 0])?;
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(row.get(0)?);
        }
        Ok(out)
    }

    #[test]
    fn binds_by_position_and_by_name_before_the_wrapper() {
        let positional = SqliteQuery::new("SELECT ?1 + ?2 AS v").bind_json(&json!([40, 2]));
        assert_eq!(positional.map(|q| run(&q).ok()), Ok(Some(vec![42])));
        let named = SqliteQuery::new("SELECT :a * @b AS v")
            .bind_json(&json!({"a": 6, "@b": 7}))
            .map(|q| run(&q).ok());
        assert_eq!(named, Ok(Some(vec![42])));
        let repeated = SqliteQuery::new("SELECT :a + :a AS v").bind_named("a", 21);
        assert_eq!(run(&repeated).ok(), Some(vec![42]));
    }

    #[test]
    fn refuses_missing_extra_and_unknown_parameters() {
        let missing = SqliteQuery::new("SELECT ?1 + ?2 AS v").bind(1);
        assert!(matches!(
            run(&missing),
            Err(rusqlite::Error::InvalidParameterCount(1, 2))
        ));
        let extra = SqliteQuery::new("SELECT ?1 AS v").bind(1).bind(2);
        assert!(matches!(
            run(&extra),
            Err(rusqlite::Error::InvalidParameterCount(2, 1))
        ));
        let unknown = SqliteQuery::new("SELECT :a AS v").bind_named("b", 1);
        assert!(matches!(run(&unknown), Err(rusqlite::Error::InvalidParameterName(name)) if name == "b"));
        let twice = SqliteQuery::new("SELECT :a AS v")
            .bind_named("a", 1)
            .bind_named(":a", 2);
        assert!(matches!(
            run(&twice),
            Err(rusqlite::Error::InvalidParameterCount(2, 1))
        ));
    }

    #[test]
    fn json_params_are_scalars() {
        assert!(SqliteQuery::new("SELECT ?").bind_json(&json!([[1]])).is_err());
        assert!(
            SqliteQuery::new("SELECT :a")
                .bind_json(&json!({"a": {"b": 1}}))
                .is_err()
        );
        assert!(SqliteQuery::new("SELECT 1").bind_json(&json!("x")).is_err());
        let q = SqliteQuery::new("SELECT ?, ?, ?, ?")
            .bind_json(&json!([null, true, 1.5, "s"]))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            q.0.params().iter().map(|p| p.value.clone()).collect::<Vec<_>>(),
            [
                SqlValue::Null,
                SqlValue::Integer(1),
                SqlValue::Real(1.5),
                SqlValue::Text("s".to_owned())
            ]
        );
    }
}
