//! Schema discovery, an optional capability of a database's executor crate: [`SchemaSource`]
//! describes the tables and views its queries may read, and [`SchemaCache`] keeps that description
//! for a time (one description per TTL, however many callers), for the `describe_schema` tool and
//! for the "did you mean …" of a query that names an unknown table or column.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::schema::{TableSchema, closest, did_you_mean};
use async_trait::async_trait;
use dual_server::ExecutorError;
use tokio::sync::Mutex;

/// How long a [`SchemaCache`] keeps a description by default: 5 minutes.
pub const DEFAULT_SCHEMA_TTL: Duration = Duration::from_secs(300);
/// The most tables a source describes by default; the rest are left out (and said so).
pub const DEFAULT_SCHEMA_MAX_TABLES: usize = 1_000;

/// A database that can describe itself.
#[async_trait]
pub trait SchemaSource: Send + Sync + 'static {
    /// The tables and views the executor's queries may read, with their columns, at most the
    /// source's own bound of tables.
    async fn describe(&self) -> Result<Vec<TableSchema>, ExecutorError>;
}

/// What a database's error message says does not exist, as a database crate finds it in the
/// message (see [`SchemaCache::explain`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unknown<'a> {
    /// A column, as the message names it (maybe qualified, maybe quoted).
    Column(&'a str),
    /// A table or view, as the message names it (maybe qualified, maybe quoted).
    Table(&'a str),
}

/// A name as a message quotes it, without its qualifier and quotes: `"public"."nmae"` → `nmae`.
fn bare(name: &str) -> &str {
    let name = name.rsplit_once('.').map_or(name, |(_, bare)| bare);
    name.trim().trim_matches(|c| c == '"' || c == '`')
}

/// A description and when it was made.
type Kept = Option<(Instant, Arc<Vec<TableSchema>>)>;

/// A [`SchemaSource`]'s description, kept for its TTL. Cheap to share (`Arc` inside).
#[derive(Clone)]
pub struct SchemaCache {
    source: Arc<dyn SchemaSource>,
    ttl: Duration,
    state: Arc<Mutex<Kept>>,
}

impl std::fmt::Debug for SchemaCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaCache")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl SchemaCache {
    /// Keeps `source`'s description for `ttl` ([`DEFAULT_SCHEMA_TTL`] is the usual choice).
    pub fn new(source: Arc<dyn SchemaSource>, ttl: Duration) -> Self {
        Self {
            source,
            ttl,
            state: Arc::new(Mutex::new(None)),
        }
    }

    /// The description: the kept one while it is younger than the TTL, else a new one (callers
    /// meanwhile wait for that one description).
    ///
    /// # Errors
    /// The source's, when it had to describe and failed (nothing is kept then).
    pub async fn tables(&self) -> Result<Arc<Vec<TableSchema>>, ExecutorError> {
        let mut state = self.state.lock().await;
        if let Some((at, tables)) = state.as_ref()
            && at.elapsed() < self.ttl
        {
            return Ok(Arc::clone(tables));
        }
        let tables = Arc::new(self.source.describe().await?);
        *state = Some((Instant::now(), Arc::clone(&tables)));
        Ok(tables)
    }

    /// Forgets the description (after a migration, say); the next call describes again.
    pub async fn invalidate(&self) {
        *self.state.lock().await = None;
    }

    /// ` Did you mean …?` for a table `name` the database does not know, from the closest table
    /// names; empty when none is close or the description failed.
    pub async fn suggest_table(&self, name: &str) -> String {
        let Ok(tables) = self.tables().await else {
            return String::new();
        };
        let names = tables.iter().flat_map(|t| {
            let bare = t.name.rsplit_once('.').map(|(_, bare)| bare);
            std::iter::once(t.name.as_str()).chain(bare)
        });
        did_you_mean(&closest(name, names, 3))
    }

    /// `error` with ` Did you mean …?` appended when `unknown` finds in its message a column or a
    /// table the database does not know (the closest names of the description, the columns of the
    /// tables `sql` names first); unchanged when it finds none or nothing is close. The correction is
    /// only told to the model, never applied.
    pub async fn explain(
        &self,
        error: ExecutorError,
        sql: &str,
        unknown: fn(&str) -> Option<Unknown<'_>>,
    ) -> ExecutorError {
        let message = error.message();
        let suggestion = match unknown(message) {
            Some(Unknown::Column(name)) => self.suggest_column(bare(name), sql).await,
            Some(Unknown::Table(name)) => self.suggest_table(bare(name)).await,
            None => return error,
        };
        if suggestion.is_empty() {
            error
        } else {
            ExecutorError::new(format!("{message}.{suggestion}"))
        }
    }

    /// `result`, its error [explained](SchemaCache::explain).
    ///
    /// # Errors
    /// `result`'s, explained.
    pub async fn explained<T>(
        &self,
        result: Result<T, ExecutorError>,
        sql: &str,
        unknown: fn(&str) -> Option<Unknown<'_>>,
    ) -> Result<T, ExecutorError> {
        match result {
            Err(error) => Err(self.explain(error, sql, unknown).await),
            ok => ok,
        }
    }

    /// ` Did you mean …?` for a column `name` no table has, from the closest column names of the
    /// tables the SQL `sql` names (of every table when it names none that is known).
    pub async fn suggest_column(&self, name: &str, sql: &str) -> String {
        let Ok(tables) = self.tables().await else {
            return String::new();
        };
        let lower = sql.to_ascii_lowercase();
        let named: Vec<&TableSchema> = tables
            .iter()
            .filter(|t| {
                let bare = t.name.rsplit_once('.').map_or(t.name.as_str(), |(_, bare)| bare);
                mentions(&lower, &bare.to_ascii_lowercase())
            })
            .collect();
        let scope: Vec<&TableSchema> = if named.is_empty() {
            tables.iter().collect()
        } else {
            named
        };
        let mut columns: Vec<&str> = scope
            .iter()
            .flat_map(|t| t.columns.iter().map(|c| c.name.as_str()))
            .collect();
        columns.sort_unstable();
        columns.dedup();
        did_you_mean(&closest(name, columns, 3))
    }
}

/// Whether `sql` (lower case) has the word `word` (lower case), not as part of a longer name.
fn mentions(sql: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    sql.match_indices(word).any(|(at, _)| {
        let before = sql[..at].chars().next_back();
        let after = sql[at + word.len()..].chars().next();
        !before.is_some_and(is_name) && !after.is_some_and(is_name)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use crate::schema::{ColumnSchema, TableKind};

    use super::*;

    struct Counting(AtomicUsize);

    #[async_trait]
    impl SchemaSource for Counting {
        async fn describe(&self) -> Result<Vec<TableSchema>, ExecutorError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(vec![
                TableSchema::new(
                    "institutions",
                    TableKind::Table,
                    vec![
                        ColumnSchema::new("enrollment", "INTEGER", false),
                        ColumnSchema::new("state", "TEXT", false),
                    ],
                ),
                TableSchema::new(
                    "degrees_awarded",
                    TableKind::Table,
                    vec![ColumnSchema::new("award_level", "TEXT", false)],
                ),
            ])
        }
    }

    /// A message format: `missing column NAME` / `missing table NAME`.
    fn unknown(message: &str) -> Option<Unknown<'_>> {
        message
            .strip_prefix("missing column ")
            .map(Unknown::Column)
            .or_else(|| message.strip_prefix("missing table ").map(Unknown::Table))
    }

    #[tokio::test]
    async fn explain_appends_the_closest_names_of_what_the_message_says_is_unknown() {
        let cache = SchemaCache::new(Arc::new(Counting(AtomicUsize::new(0))), Duration::from_secs(60));
        let sql = "SELECT 1 FROM institutions";
        let explained = |message: &'static str| {
            let cache = cache.clone();
            async move {
                cache
                    .explain(ExecutorError::new(message), sql, unknown)
                    .await
                    .to_string()
            }
        };
        assert_eq!(
            explained("missing column \"main\".`enrolment`").await,
            "missing column \"main\".`enrolment`. Did you mean `enrollment`?"
        );
        assert_eq!(
            explained("missing table public.institution").await,
            "missing table public.institution. Did you mean `institutions`?"
        );
        assert_eq!(
            explained("missing table zzzzzz").await,
            "missing table zzzzzz",
            "nothing close"
        );
        assert_eq!(
            explained("syntax error").await,
            "syntax error",
            "not about a name"
        );
        let kept: Result<u8, _> = cache.explained(Ok(7), sql, unknown).await;
        assert_eq!(kept.ok(), Some(7));
    }

    #[tokio::test]
    async fn describes_once_per_ttl_and_suggests_from_the_named_tables() {
        let source = Arc::new(Counting(AtomicUsize::new(0)));
        let cache = SchemaCache::new(
            Arc::clone(&source) as Arc<dyn SchemaSource>,
            Duration::from_secs(60),
        );
        assert_eq!(cache.tables().await.map(|t| t.len()).ok(), Some(2));
        assert_eq!(cache.tables().await.map(|t| t.len()).ok(), Some(2));
        assert_eq!(source.0.load(Ordering::SeqCst), 1, "kept for its TTL");
        assert_eq!(
            cache.suggest_table("institution").await,
            " Did you mean `institutions`?"
        );
        assert_eq!(
            cache
                .suggest_column("enrolment", "SELECT enrolment FROM institutions")
                .await,
            " Did you mean `enrollment`?"
        );
        assert_eq!(
            cache
                .suggest_column("award_levl", "SELECT award_levl FROM institutions")
                .await,
            "",
            "only the columns of the tables the SQL names"
        );
        cache.invalidate().await;
        let _ = cache.tables().await;
        assert_eq!(source.0.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn mentions_whole_words_only() {
        assert!(mentions("select * from institutions where", "institutions"));
        assert!(!mentions("select * from institutions_2", "institutions"));
    }
}
