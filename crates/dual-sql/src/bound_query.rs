//! [`BoundQuery`]: one statement's SQL and the values bound to its parameters, what the query type of
//! every database crate (`PgQuery`, `MyQuery`, `SqliteQuery`) holds, each with its own kind of value.

/// One statement's SQL and the values bound to its parameters, in the order they were bound. Values
/// are always bound, never interpolated into the SQL.
///
/// ```
/// use dual_sql::BoundQuery;
///
/// let mut query: BoundQuery<i64> = BoundQuery::new("SELECT * FROM t WHERE a = ? AND b = ?");
/// query.bind(1);
/// query.bind(2);
/// assert_eq!(query.sql(), "SELECT * FROM t WHERE a = ? AND b = ?");
/// assert_eq!(query.params(), [1, 2]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundQuery<P> {
    sql: String,
    params: Vec<P>,
}

impl<P> BoundQuery<P> {
    /// `sql` with no values bound yet.
    #[must_use]
    pub fn new(sql: impl Into<String>) -> Self {
        Self {
            sql: sql.into(),
            params: Vec::new(),
        }
    }

    /// The statement's SQL.
    #[must_use]
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// The values bound so far, in order.
    #[must_use]
    pub fn params(&self) -> &[P] {
        &self.params
    }

    /// Binds `value` after the values bound so far.
    pub fn bind(&mut self, value: P) {
        self.params.push(value);
    }
}
