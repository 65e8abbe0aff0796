//! Live paging ([`LivePaging`]): a result over the snapshot cap is served by re-running the query in
//! a read-only transaction, counted with `SELECT count(*) FROM (…)` and paged with
//! `SELECT * FROM (…) ORDER BY "field" LIMIT $n OFFSET $m`, each on a session of its own
//! ([`Canceller::run`]: a dropped future cancels the statement).

use async_trait::async_trait;
use dual_core::{Row, Sort, SortOrder};
use dual_server::{ExecutorError, JsonColumns, RowWindow};
use dual_sql::LivePaging;
use tokio_postgres::types::Type;

use crate::decode::{Raw, value};
use crate::query::PgQuery;
use crate::session::{Canceller, Session};
use crate::shared::{Shared, unreadable};
use crate::text::{Text, refs};

#[async_trait]
impl LivePaging for Shared {
    async fn count(&self, query: &PgQuery) -> Result<u64, ExecutorError> {
        Canceller::run(&self.pool, async |session| {
            let txn = self.begin(session).await?;
            self.count_rows(&txn, query).await
        })
        .await
    }

    async fn fetch(&self, query: &PgQuery, window: RowWindow<'_>) -> Result<Vec<Row>, ExecutorError> {
        Canceller::run(&self.pool, async |session| {
            self.fetch_in(session, query, window).await
        })
        .await
    }
}

impl Shared {
    async fn fetch_in(
        &self,
        session: &mut Session,
        query: &PgQuery,
        window: RowWindow<'_>,
    ) -> Result<Vec<Row>, ExecutorError> {
        let txn = self.begin(session).await?;
        let at = query.params().len();
        let sql = format!(
            "SELECT * FROM (\n{}\n) AS dual_page{} LIMIT ${} OFFSET ${}",
            query.sql(),
            order_by(window.sort),
            at + 1,
            at + 2
        );
        let statement = self.prepare(&txn, &sql).await?;
        let names: Vec<String> = statement.columns().iter().map(|c| c.name().to_owned()).collect();
        let types: Vec<Type> = statement.columns().iter().map(|c| c.type_().clone()).collect();
        let (limit, offset) = (window.limit.to_string(), window.offset.to_string());
        let mut texts = query.texts();
        texts.push(Text(Some(&limit)));
        texts.push(Text(Some(&offset)));
        let rows = txn
            .query(&statement, &refs(&texts))
            .await
            .map_err(|e| self.error(&e))?;
        JsonColumns::new(&names)?;
        let numeric = self.options.numeric;
        let mut cap = self.options.value_cap();
        rows.iter()
            .map(|row| {
                let mut out = Row::with_capacity(names.len());
                cap.end_row();
                for (at, (name, ty)) in names.iter().zip(&types).enumerate() {
                    let raw: Raw<'_> = row.try_get(at).map_err(|e| self.error(&e))?;
                    cap.value(name, raw.0.map_or(0, <[u8]>::len))?;
                    let cell = value(ty, raw.0, numeric).map_err(|e| unreadable(name, ty, &e))?;
                    out.insert(name.clone(), cell);
                }
                Ok(out)
            })
            .collect()
    }
}

/// ` ORDER BY "field" ASC|DESC` (the identifier quoted), or nothing.
fn order_by(sort: Option<&Sort>) -> String {
    sort.map(|sort| {
        let order = match sort.order {
            SortOrder::Asc => "ASC",
            SortOrder::Desc => "DESC",
        };
        format!(" ORDER BY \"{}\" {order}", sort.field.replace('"', "\"\""))
    })
    .unwrap_or_default()
}
