//! What a database executor runs for one registered kind: the model's SQL, or a query the developer
//! builds from a tool call's params. Shared by the database crates (dual-sqlite, dual-postgres,
//! dual-mysql), each with its own query type `Q`.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// What the model is told when params of the model's SQL hold no `sql` string.
pub const SQL_PARAM_REQUIRED: &str =
    "the parameter `sql` (a string holding one SELECT statement) is required";

/// A developer's query builder: a tool call's params to the statement and its values, or a message
/// for the model.
pub type BuildQuery<Q> = Arc<dyn Fn(&Value) -> Result<Q, String> + Send + Sync>;

/// Where a database executor's statement comes from: the model's SQL (params `{"sql": "SELECT …",
/// "params"?: [..]}`, checked by the database crate's guard) or a query the developer builds.
///
/// ```
/// use dual_sql::SqlKind;
/// use serde_json::json;
///
/// let model: SqlKind<String> = SqlKind::Sql;
/// let bound = |sql: &str, values: &serde_json::Value| Ok(format!("{sql} with {values}"));
/// assert_eq!(model.query(&json!({"sql": "SELECT 1", "params": [2]}), bound), Ok("SELECT 1 with [2]".to_owned()));
/// assert!(model.query(&json!({}), bound).is_err());
///
/// let fixed = SqlKind::fixed(|params| Ok(format!("SELECT * FROM t WHERE id = {}", params["id"])));
/// assert_eq!(fixed.query(&json!({"id": 7}), bound), Ok("SELECT * FROM t WHERE id = 7".to_owned()));
/// ```
#[non_exhaustive]
pub enum SqlKind<Q> {
    /// The model's SQL.
    Sql,
    /// The developer's query.
    Fixed(BuildQuery<Q>),
}

impl<Q> SqlKind<Q> {
    /// The developer's query, built by `build`.
    pub fn fixed(build: impl Fn(&Value) -> Result<Q, String> + Send + Sync + 'static) -> Self {
        Self::Fixed(Arc::new(build))
    }

    /// The query of `params`: for the model's SQL, `model(sql, values)` with the `sql` string and
    /// the `params` value (`null` when absent), which checks the SQL and binds the values; for a
    /// developer's query, what the builder makes of `params`.
    ///
    /// # Errors
    /// A message for the model: [`SQL_PARAM_REQUIRED`], or `model`'s or the builder's.
    pub fn query(
        &self,
        params: &Value,
        model: impl FnOnce(&str, &Value) -> Result<Q, String>,
    ) -> Result<Q, String> {
        match self {
            Self::Sql => {
                let sql = params
                    .get("sql")
                    .and_then(Value::as_str)
                    .ok_or(SQL_PARAM_REQUIRED)?;
                model(sql, params.get("params").unwrap_or(&Value::Null))
            }
            Self::Fixed(build) => build(params),
        }
    }
}

/// The model's SQL in `params` (`""` for a developer's query): what a "did you mean …" reads.
#[must_use]
pub fn model_sql(params: &Value) -> &str {
    params.get("sql").and_then(Value::as_str).unwrap_or_default()
}

impl<Q> Clone for SqlKind<Q> {
    fn clone(&self) -> Self {
        match self {
            Self::Sql => Self::Sql,
            Self::Fixed(build) => Self::Fixed(Arc::clone(build)),
        }
    }
}

impl<Q> fmt::Debug for SqlKind<Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Sql => "Sql",
            Self::Fixed(_) => "Fixed",
        })
    }
}
