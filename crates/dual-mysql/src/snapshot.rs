//! The snapshot's stream: in one read-only transaction with a consistent snapshot, the count (one
//! slower than `count_wait` is stopped with `KILL QUERY`), then the rows read unbuffered and sent in
//! batches, on a connection of the snapshot pool.

use std::time::Duration;

use dual_core::Column;
use dual_core::budget::row_json_len;
use dual_server::{ExecutorError, JsonColumns, QueryStart};
use dual_sql::RowSender;
use mysql_async::prelude::Queryable;
use mysql_async::{IsolationLevel, TxOpts};

use crate::decode::column_type;
use crate::query::MyQuery;
use crate::session::{self, Canceller};
use crate::shared::{Shared, params};

impl Shared {
    /// The snapshot's stream, on a task of its own: in one read-only transaction with a consistent
    /// snapshot, the count, then the rows read unbuffered and sent in batches of `fetch_rows` rows or
    /// `batch_bytes` bytes of JSON, whichever comes first.
    pub(crate) async fn write_snapshot(
        &self,
        query: MyQuery,
        mut start: QueryStart,
        canceller: Canceller,
        rows_out: &RowSender,
    ) -> Result<bool, ExecutorError> {
        let options = self.options;
        // A connection of its own, waited for without a limit (the server's scheduler and time limit
        // bound it).
        let mut session = canceller
            .session(&self.snapshots, Duration::MAX, options.time_limit)
            .await?;
        let conn = session.conn()?;
        let connection = conn.id();
        let mut txn = conn
            .start_transaction(
                TxOpts::new()
                    .with_readonly(true)
                    .with_consistent_snapshot(true)
                    .with_isolation_level(IsolationLevel::RepeatableRead)
                    .clone(),
            )
            .await
            .map_err(|e| self.error(&e))?;
        let statement = txn.prep(query.sql()).await.map_err(|e| self.error(&e))?;
        let columns = statement.columns();
        // Two columns of one name would lose one in a row object: refused, saying how.
        JsonColumns::new(columns.iter().map(|c| c.name_str()))?;
        start.declare_columns(
            columns
                .iter()
                .map(|c| Column::new(c.name_str().into_owned(), column_type(c, options.numeric)))
                .collect(),
        );
        // The query runs from here: `pending_after` counts from now, not from the count's end.
        start.running();
        // The count first, in the same transaction; one slower than `count_wait` is stopped (`KILL
        // QUERY`: the statement ends, the transaction stays) and the rows are counted as they come,
        // so a long query never runs twice in a row.
        let count_sql = format!("SELECT COUNT(*) FROM (\n{}\n) AS dual_count", query.sql());
        let counted: Option<i64> = {
            let count = txn.exec_first(&count_sql, params(&query));
            tokio::pin!(count);
            tokio::select! {
                // A count done in time wins over the timer: no kill is sent to an idle connection.
                biased;
                counted = &mut count => counted.map_err(|e| self.error(&e))?,
                () = tokio::time::sleep(options.count_wait) => {
                    session::kill_query(self.opts.clone(), connection).await;
                    // The count ends, killed (or done just before the kill): either way no count.
                    let _ = (&mut count).await;
                    None
                }
            }
        };
        match counted {
            Some(total) => start.started_with_count(u64::try_from(total).unwrap_or_default()),
            None => start.started(),
        }
        let fetch = usize::try_from(options.fetch_rows).unwrap_or(usize::MAX);
        let mut result = txn
            .exec_iter(&statement, params(&query))
            .await
            .map_err(|e| self.error(&e))?;
        let mut batch = Vec::with_capacity(fetch.min(4_096));
        let mut bytes = 0usize;
        loop {
            let row = result.next().await.map_err(|e| self.error(&e))?;
            let done = row.is_none();
            if let Some(row) = row {
                let row = self.row(&row)?;
                bytes = bytes.saturating_add(row_json_len(&row));
                batch.push(row);
            }
            if !batch.is_empty() && (done || batch.len() >= fetch || bytes >= options.batch_bytes) {
                bytes = 0;
                let full = std::mem::replace(&mut batch, Vec::with_capacity(fetch.min(4_096)));
                // No stall limit: the server's writer stops reading while it waits for its
                // background turn; its time limit and its drop of the stream bound the wait.
                if rows_out.send_within(full, Duration::MAX).await.is_err() {
                    return Ok(false);
                }
            }
            if done {
                break;
            }
        }
        drop(result);
        txn.rollback().await.map_err(|e| self.error(&e))?;
        Ok(true)
    }
}
