//! Live paging ([`LiveQuery`]): a result over the snapshot cap is served by re-running the query,
//! counted with `SELECT COUNT(*) FROM (…)` and paged with `SELECT * FROM (…) ORDER BY … LIMIT …
//! OFFSET …`, each on a connection of its own that a dropped future kills (`KILL QUERY`) and closes.

use async_trait::async_trait;
use dual_core::{Row, Sort, SortOrder};
use dual_server::{ExecutorError, LiveQuery, RowWindow};
use dual_sql::model_sql;
use mysql_async::prelude::Queryable;
use serde_json::Value;

use super::{MyExecutor, params};
use crate::schema::unknown;
use crate::session::Canceller;

#[async_trait]
impl LiveQuery for MyExecutor {
    async fn count(&self, params: &Value) -> Result<u64, ExecutorError> {
        let counted = self.live_count(params).await;
        self.shared
            .schema
            .explained(counted, model_sql(params), unknown)
            .await
    }

    async fn fetch(&self, params: &Value, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        let fetched = self.live_fetch(params, window).await;
        self.shared
            .schema
            .explained(fetched, model_sql(params), unknown)
            .await
    }
}

impl MyExecutor {
    /// Runs `sql` (the query wrapped) with the query's values on a session of its own, and reads
    /// its rows with `read`. A future the server drops mid-query kills the statement and closes the
    /// connection; one that ends gives the connection back.
    async fn live_rows(
        &self,
        params_json: &Value,
        wrap: impl Fn(&str) -> String,
    ) -> Result<Vec<mysql_async::Row>, ExecutorError> {
        let query = self.query(params_json)?;
        let options = self.options();
        let canceller = Canceller::new(self.shared.opts.clone());
        let guard = canceller.guard();
        let mut session = canceller
            .session(&self.shared.pool, options.wait, options.time_limit)
            .await?;
        let rows = session
            .conn()?
            .exec(wrap(&query.sql), params(&query))
            .await
            .map_err(|e| self.error(&e));
        drop(session);
        guard.disarm();
        rows
    }

    async fn live_count(&self, params_json: &Value) -> Result<u64, ExecutorError> {
        let rows = self
            .live_rows(params_json, |sql| {
                format!("SELECT COUNT(*) FROM (\n{sql}\n) AS dual_count")
            })
            .await?;
        let total: Option<i64> = rows.first().and_then(|row| row.get(0));
        Ok(total.and_then(|n| u64::try_from(n).ok()).unwrap_or_default())
    }

    async fn live_fetch(
        &self,
        params_json: &Value,
        window: RowWindow<'_>,
    ) -> Result<Vec<Row>, ExecutorError> {
        let RowWindow {
            offset, limit, sort, ..
        } = window;
        let order = order_by(sort);
        let rows = self
            .live_rows(params_json, |sql| {
                format!("SELECT * FROM (\n{sql}\n) AS dual_page{order} LIMIT {limit} OFFSET {offset}")
            })
            .await?;
        rows.iter().map(|row| self.row(row)).collect()
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
