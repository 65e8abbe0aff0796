//! Live paging ([`LivePaging`]): a result over the snapshot cap is served by re-running the query,
//! counted with `SELECT COUNT(*) FROM (…)` and paged with `SELECT * FROM (…) ORDER BY … LIMIT …
//! OFFSET …`, each on a connection of its own that a dropped future kills (`KILL QUERY`) and closes.

use async_trait::async_trait;
use dual_core::{Row, Sort, SortOrder};
use dual_server::{ExecutorError, RowWindow};
use dual_sql::LivePaging;
use mysql_async::prelude::Queryable;

use crate::query::MyQuery;
use crate::session::Canceller;
use crate::shared::{Shared, params};

#[async_trait]
impl LivePaging for Shared {
    async fn count(&self, query: &MyQuery) -> Result<u64, ExecutorError> {
        let rows = self
            .live_rows(query, |sql| {
                format!("SELECT COUNT(*) FROM (\n{sql}\n) AS dual_count")
            })
            .await?;
        let total: Option<i64> = rows.first().and_then(|row| row.get(0));
        Ok(total.and_then(|n| u64::try_from(n).ok()).unwrap_or_default())
    }

    async fn fetch(&self, query: &MyQuery, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let RowWindow {
            offset, limit, sort, ..
        } = window;
        let order = order_by(sort);
        let rows = self
            .live_rows(query, |sql| {
                format!("SELECT * FROM (\n{sql}\n) AS dual_page{order} LIMIT {limit} OFFSET {offset}")
            })
            .await?;
        rows.iter().map(|row| self.row(row)).collect()
    }
}

impl Shared {
    /// Runs `wrap` of the query's SQL with the query's values on a session of its own, and answers
    /// its rows. A future the server drops mid-query kills the statement and closes the connection;
    /// one that ends gives the connection back.
    async fn live_rows(
        &self,
        query: &MyQuery,
        wrap: impl Fn(&str) -> String,
    ) -> Result<Vec<mysql_async::Row>, ExecutorError> {
        let canceller = Canceller::new(self.opts.clone());
        let guard = canceller.guard();
        let mut session = canceller
            .session(&self.pool, self.options.wait, self.options.time_limit)
            .await?;
        let rows = session
            .conn()?
            .exec(wrap(query.sql()), params(query))
            .await
            .map_err(|e| self.error(&e));
        drop(session);
        guard.disarm();
        rows
    }
}

/// `` ORDER BY `field` ASC|DESC `` (the identifier quoted, a backtick doubled), or nothing. The
/// server checked the field is one of the result's columns.
fn order_by(sort: Option<&Sort>) -> String {
    sort.map(|sort| {
        let order = match sort.order {
            SortOrder::Asc => "ASC",
            SortOrder::Desc => "DESC",
        };
        format!(" ORDER BY `{}` {order}", sort.field.replace('`', "``"))
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sort_field_is_quoted() {
        assert_eq!(order_by(None), "");
        let sort = Sort::new("a`b", SortOrder::Desc);
        assert_eq!(order_by(Some(&sort)), " ORDER BY `a``b` DESC");
    }
}
