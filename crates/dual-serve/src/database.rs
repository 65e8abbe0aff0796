//! [`serve_database`]: one database served in one call — its executor of the model's SQL as the
//! kind `sql`, and [`DatabaseMcp`] (tools `query` and `describe_schema`) at `/mcp`.

use dual_rmcp::DatabaseMcp;
use dual_rmcp::apps::AppsOptions;
use dual_server::QueryExecutor;
use dual_sql::SchemaCache;

use super::{Bound, Running, ServeError, ServeOptions};

/// The kind the model's SQL is registered as.
pub const SQL_KIND: &str = "sql";

/// Binds `options.addr` and serves the database whose read-only SQL executor is `executor` (e.g.
/// `PgDb::sql_executor`, `MyDb::sql_executor`, `SqliteDb::sql_executor`) and whose description is
/// `schema`, with [`DatabaseMcp`]; `description` tells the model what the database holds. MCP Apps
/// clients get the result view as [`ServeOptions::apps`] asks.
///
/// This is [`Bound::bind`], [`Bound::server_builder`] with the executor, and [`Bound::serve`]; take
/// those steps yourself for more kinds or a handler of your own.
///
/// # Errors
/// As [`Bound::bind`] and [`Bound::server_builder`]; [`ServeError::Build`] when the server
/// configuration is refused.
pub async fn serve_database(
    options: ServeOptions,
    executor: impl QueryExecutor,
    schema: SchemaCache,
    description: &str,
) -> Result<Running, ServeError> {
    let apps: AppsOptions = options.apps;
    let bound = Bound::bind(options).await?;
    let server = bound
        .server_builder()
        .await?
        .executor(SQL_KIND, executor)
        .build()?;
    let mcp = DatabaseMcp::new(server.clone(), schema, SQL_KIND, description).with_apps(apps);
    Ok(bound.serve(server, move || mcp.clone()))
}
