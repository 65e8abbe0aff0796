//! `dual-demo`: the MCP Dual Response pattern, end to end. Run `dual-demo --help`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use dual_demo::mcp_server::DemoMcp;
use dual_demo::report::{self, ReportOptions};
use dual_demo::serve::{self, ServeOptions};
use rmcp::ServiceExt;
use tracing_subscriber::EnvFilter;

/// The MCP Dual Response pattern: the model gets a sample, the application gets every row.
///
/// Without a subcommand, runs the whole demo in one process: starts the server, calls the MCP tool
/// through a real MCP client, shows what the model sees, then fetches the full result out of band.
#[derive(Debug, Parser)]
#[command(name = "dual-demo", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP (streamable HTTP at /mcp, or stdio with --stdio) and the REST API at /resources.
    Serve(ServeArgs),
    /// Call the `query` tool over MCP, show the sample, fetch every row, print a table or write CSV.
    Report(ReportArgs),
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// Address of the HTTP server (MCP at /mcp, REST at /resources).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// SQLite file to serve (default: the embedded IPEDS-like dataset, generated on first use).
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
    /// Resource store: `memory`, `redis://HOST:PORT[/DB]`, or `postgres://USER[:PASSWORD]@HOST:PORT/DB`
    /// (shared by several instances).
    #[arg(long, value_name = "memory|URL", default_value = "memory")]
    store: String,
    /// Redis key prefix (default `dual:`) or PostgreSQL schema (default: the search_path's first);
    /// give each deployment its own.
    #[arg(long, value_name = "PREFIX")]
    store_prefix: Option<String>,
    /// Time limit of one store operation, and of opening one store connection, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    store_timeout_ms: u64,
    /// Base URL of the REST API in resource links (default: http://ADDR/resources).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Lifetime of a resource, in seconds.
    #[arg(long, value_name = "N", default_value_t = 900)]
    expiration_secs: u64,
    /// Sample rows per tool result.
    #[arg(long, value_name = "N", default_value_t = 15)]
    sample_size: u64,
    /// Serve MCP over stdin/stdout (for desktop MCP clients); REST stays on --addr.
    #[arg(long)]
    stdio: bool,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// The MCP endpoint, e.g. http://127.0.0.1:8080/mcp.
    #[arg(long, value_name = "URL")]
    mcp: String,
    /// The SQL for the `query` tool (one read-only SELECT).
    #[arg(long, value_name = "SQL")]
    sql: String,
    /// Write every row to FILE as CSV instead of printing a table.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Rows of the printed table.
    #[arg(long, value_name = "N", default_value_t = 50)]
    rows: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let default_level = match cli.command {
        Some(Command::Serve(_)) => "info",
        _ => "warn",
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level)))
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        match cli.command {
            None => dual_demo::demo::run(None).await,
            Some(Command::Serve(args)) => run_serve(args).await,
            Some(Command::Report(args)) => {
                report::run(&ReportOptions {
                    mcp: args.mcp,
                    sql: args.sql,
                    csv: args.csv,
                    rows: args.rows,
                })
                .await
            }
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run_serve(args: ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    if args.expiration_secs == 0 {
        return Err("--expiration-secs must be at least 1".into());
    }
    if args.store_timeout_ms == 0 {
        return Err("--store-timeout-ms must be at least 1".into());
    }
    let mut options = ServeOptions::new(args.addr);
    options.db = args.db;
    options.store = args.store;
    options.store_prefix = args.store_prefix;
    options.store_timeout = Duration::from_millis(args.store_timeout_ms);
    options.base_url = args.base_url;
    options.expiration = Duration::from_secs(args.expiration_secs);
    options.sample_size = args.sample_size;
    let running = serve::start(&options).await?;
    eprintln!(
        "dual-demo: MCP {}, REST http://{}{} (database {})",
        if args.stdio {
            "on stdio".to_owned()
        } else {
            running.mcp_url()
        },
        running.addr,
        serve::REST_PREFIX,
        running.db_path.display()
    );
    if args.stdio {
        let service = DemoMcp::new(running.server.clone())
            .serve(rmcp::transport::stdio())
            .await?;
        tokio::select! {
            _ = service.waiting() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    } else {
        let _ = tokio::signal::ctrl_c().await;
    }
    running.shutdown().await;
    Ok(())
}
