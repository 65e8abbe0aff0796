//! The demo's database, served through `dual-sqlite`: the model's read-only SQL (kind `sql`) and a
//! typed search over the bundled dataset (kind `institutions`), the query the demo writes itself.

use dual_sqlite::{SqliteDb, SqliteExecutor, SqliteQuery};
use serde_json::Value;

pub use dual_sqlite::{
    DEFAULT_EXPORT_SLOTS, DEFAULT_POOL_SIZE, DEFAULT_TIME_LIMIT, DEFAULT_WAIT, SqliteOptions,
};

/// The executor kind for read-only SQL: params `{"sql": "SELECT …", "params"?: [..] | {..}}`.
pub const SQL_KIND: &str = "sql";
/// The executor kind for the institution search: params `{"state"?: "NJ", "control"?: "public"}`.
pub const INSTITUTIONS_KIND: &str = "institutions";

const INSTITUTIONS_SQL: &str = "SELECT id, name, city, state, control, level, enrollment, founded \
     FROM institutions WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR control = ?2) ORDER BY id";

/// The executor of `kind` ([`SQL_KIND`] or [`INSTITUTIONS_KIND`]) over `db`; `None` for any other.
#[must_use]
pub fn executor(db: &SqliteDb, kind: &str) -> Option<SqliteExecutor> {
    match kind {
        SQL_KIND => Some(db.sql_executor()),
        INSTITUTIONS_KIND => Some(db.query_executor(institutions_query)),
        _ => None,
    }
}

/// The institution search: optional `state` (two letters) and `control` (`public` or `private`).
fn institutions_query(params: &Value) -> Result<SqliteQuery, String> {
    let empty = serde_json::Map::new();
    let params = match params {
        Value::Object(map) => map,
        Value::Null => &empty,
        _ => return Err("the parameters must be an object: {\"state\"?, \"control\"?}".to_owned()),
    };
    let mut state = None;
    let mut control = None;
    for (key, value) in params {
        match (key.as_str(), value) {
            (_, Value::Null) => {}
            ("state", Value::String(s)) if s.len() == 2 && s.chars().all(|c| c.is_ascii_alphabetic()) => {
                state = Some(s.to_ascii_uppercase());
            }
            ("state", _) => return Err("`state` must be a two-letter US state code, e.g. \"NJ\"".to_owned()),
            ("control", Value::String(c)) if c == "public" || c == "private" => {
                control = Some(c.clone());
            }
            ("control", _) => return Err("`control` must be \"public\" or \"private\"".to_owned()),
            (other, _) => return Err(format!("unknown parameter `{other}`: use `state` and `control`")),
        }
    }
    Ok(SqliteQuery::new(INSTITUTIONS_SQL).bind(state).bind(control))
}
