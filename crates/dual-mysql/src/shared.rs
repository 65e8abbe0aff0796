//! What every executor of one [`MyDb`](crate::MyDb) shares — its pools, the connection options
//! of `KILL QUERY`, options, schema cache and the database's own functions — and what every
//! statement needs: its parameters, its errors for the model, its rows as JSON.

use std::sync::Arc;

use dual_core::Row;
use dual_server::ExecutorError;
use dual_sql::SchemaCache;
use mysql_async::{Opts, Params, Pool};
use serde_json::Value;

use crate::decode::value;
use crate::error::my_error;
use crate::options::MyOptions;
use crate::query::MyQuery;

/// The database behind a [`MyDb`](crate::MyDb) and its executors.
pub(crate) struct Shared {
    pub(crate) pool: Pool,
    /// The connections of snapshot streams (see [`MyOptions::snapshot_connections`]).
    pub(crate) snapshots: Pool,
    /// For the connections that send `KILL QUERY`.
    pub(crate) opts: Opts,
    pub(crate) options: MyOptions,
    pub(crate) schema: SchemaCache,
    /// The database's own functions, found when it connected: refused to the model's SQL unless
    /// its function policy allows them.
    pub(crate) user_functions: Arc<Vec<String>>,
}

/// The query's values as mysql_async binds them.
pub(crate) fn params(query: &MyQuery) -> Params {
    if query.params().is_empty() {
        Params::Empty
    } else {
        Params::Positional(query.params().to_vec())
    }
}

impl Shared {
    pub(crate) fn error(&self, error: &mysql_async::Error) -> ExecutorError {
        my_error(error, self.options.time_limit)
    }

    pub(crate) fn row(&self, row: &mysql_async::Row) -> Result<Row, ExecutorError> {
        let numeric = self.options.numeric;
        let mut cap = self.options.value_cap();
        let columns = row.columns_ref();
        let mut out = Row::with_capacity(columns.len());
        for (at, column) in columns.iter().enumerate() {
            let name = column.name_str();
            let cell = match row.as_ref(at) {
                Some(raw) => {
                    if let mysql_async::Value::Bytes(bytes) = raw {
                        cap.value(&name, bytes.len())?;
                    }
                    value(column, raw, numeric)
                        .map_err(|e| ExecutorError::new(format!("column `{name}` could not be read: {e}")))?
                }
                None => Value::Null,
            };
            out.insert(name.into_owned(), cell);
        }
        Ok(out)
    }
}
