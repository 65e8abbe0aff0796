//! `dual-response`: serve a database over MCP and REST (`serve`), run the demo (`demo`), report from
//! a server (`report`). Run `dual-response --help`.

mod cli;

use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches};
use dual_response_server::database::DatabaseUrl;
use dual_response_server::report::{self, ReportOptions};
use dual_response_server::serve::{self, DatabaseOptions, ServeOptions};
use dual_rmcp::apps::AppsOptions;
use dual_serve::auth::AuthTokens;
use dual_serve::shutdown::Signals;

use cli::{Cli, Command, ServeArgs, oauth_options};

fn main() -> ExitCode {
    let resolved =
        match dual_response_server::config::resolve(&Cli::command(), std::env::args_os().collect(), |name| {
            std::env::var_os(name)
        }) {
            Ok(resolved) => resolved,
            Err(dual_response_server::config::ConfigError::Clap(error)) => error.exit(),
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::from(2);
            }
        };
    let command = Cli::command();
    let matches = match command.clone().try_get_matches_from(&resolved.argv) {
        Ok(matches) => matches,
        Err(error) => error.exit(),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    if let (Some(Command::Serve(args)), Some(sub), Some(serve)) = (
        &cli.command,
        matches.subcommand_matches(dual_response_server::config::SUBCOMMAND),
        command.find_subcommand(dual_response_server::config::SUBCOMMAND),
    ) && args.print_config
    {
        print!(
            "{}",
            dual_response_server::config::render(serve, sub, &resolved.sources)
        );
        return ExitCode::SUCCESS;
    }
    let default_level = match cli.command {
        Some(Command::Serve(_)) => "info",
        _ => "warn",
    };
    let color = dual_response_server::logging::stderr_color();
    tracing_subscriber::fmt()
        .with_writer(dual_response_server::logging::EscapingStderr::new(color))
        .with_ansi(color)
        .with_env_filter(dual_response_server::logging::filter(
            std::env::var("RUST_LOG").ok().as_deref(),
            default_level,
        ))
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
            None | Some(Command::Demo) => dual_response_server::demo::run(None).await,
            Some(Command::Serve(args)) => run_serve(*args).await,
            Some(Command::Report(args)) => {
                report::run(&ReportOptions {
                    mcp: args.mcp,
                    sql: args.sql,
                    csv: args.csv,
                    rows: args.rows,
                    token: args.token.or_else(|| std::env::var("DUAL_DEMO_TOKEN").ok()),
                })
                .await
            }
        }
    });
    // Do not wait for blocking tasks: the stdio transport's read of stdin never ends by itself.
    runtime.shutdown_timeout(Duration::from_secs(1));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // The error may carry a server's or a database's text (a tool's error message).
            eprintln!("error: {}", dual_core::escape::log_error(&*error));
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
    // Refused before anything starts, and before the fields of `args` move into the options.
    let oauth = oauth_options(&args)?;
    // From here on SIGTERM and SIGINT no longer kill the process: they shut it down gracefully.
    let mut signals = Signals::install()?;
    let mut options = ServeOptions::new(args.addr);
    options.serve_mcp_over_http = !args.stdio;
    let mut database = DatabaseOptions::url(match args.db {
        Some(file) => DatabaseUrl::Sqlite(file),
        None => args.database.parse::<DatabaseUrl>()?,
    });
    database.db = args.dataset;
    database.allow_privileged_role = args.allow_privileged_role;
    database.allow_functions = args.allow_function;
    database.db_wait = Duration::from_millis(args.db_wait_ms);
    database.export_slots = args.export_slots;
    options.store = args.store;
    options.store_prefix = args.store_prefix;
    options.store_timeout = Duration::from_millis(args.store_timeout_ms);
    options.base_url = args.base_url;
    options.expiration = Duration::from_secs(args.expiration_secs);
    options.sample_size = args.sample_size;
    options.query_time_limit = Duration::from_secs(args.query_time_limit_secs);
    options.pending_after = (args.pending_after_ms > 0).then(|| Duration::from_millis(args.pending_after_ms));
    options.scheduler = dual_server::SchedulerLimits::default()
        .foreground_slots(args.foreground_slots)
        .background_slots(args.background_slots)
        .background_queue(args.background_queue.max(args.background_slots));
    options.max_sample_bytes = args.max_sample_bytes;
    options.max_page_bytes = args.max_page_bytes;
    options.max_read_bytes = args.max_read_bytes;
    options.max_error_text_bytes = args.max_error_text_bytes;
    options.max_resources = args.max_resources;
    options.snapshot_max_mb = args.snapshot_max_mb;
    options.sort_concurrency = args.sort_concurrency;
    options.sort_wait = Duration::from_millis(args.sort_wait_ms);
    options.sort_memory_mb = args.sort_memory_mb;
    options.sort_max_rows = args.sort_max_rows;
    options.sort_max_mb = args.sort_max_mb;
    options.spool = args.spool;
    options.spool_memory_mb = args.spool_memory_mb;
    options.spool_dir = args.spool_dir;
    options.spool_max_mb = args.spool_max_mb;
    options.spool_min_free_mb = args.spool_min_free_mb;
    options.owner_max_mb = args.owner_max_mb;
    options.owner_max_resources = args.owner_max_resources;
    options.owner_max_queries = args.owner_max_queries;
    options.owner_max_pins = args.owner_max_pins;
    options.anonymous_pins = args.anonymous_pins;
    options.cleanup_interval = Duration::from_secs(args.cleanup_interval_secs);
    options.max_connections = args.max_connections;
    options.header_timeout = Duration::from_secs(args.header_timeout_secs);
    options.idle_timeout = Duration::from_secs(args.idle_timeout_secs);
    options.body_timeout = Duration::from_secs(args.body_timeout_secs);
    options.export_stall = Duration::from_secs(args.export_stall_secs);
    options.max_mcp_sessions = args.max_mcp_sessions;
    options.mcp_session_idle = Duration::from_secs(args.mcp_session_idle_secs);
    options.mcp_session_ttl = Duration::from_secs(args.mcp_session_ttl_secs);
    options.shutdown_grace = Duration::from_secs(args.shutdown_grace_secs);
    options.metrics_addr = args.metrics_addr;
    options.metrics_max_connections = args.metrics_max_connections;
    // Which callers are let in, for the start-up line (the two modes exclude each other).
    let mut callers = "anyone (no authentication)".to_owned();
    if let Some(path) = &args.auth_tokens {
        let tokens = AuthTokens::from_file(path)?;
        tracing::info!(path = %path.display(), tokens = tokens.len(), "bearer tokens loaded");
        callers = format!("bearer tokens of {}", path.display());
        options.authentication = dual_serve::auth::Authentication::Tokens(tokens);
    }
    if let Some(oauth) = oauth {
        tracing::info!(
            issuers = ?oauth.issuers().collect::<Vec<_>>(),
            owner_claim = oauth.owner_claim(),
            "OAuth 2.1 access tokens required"
        );
        callers = format!(
            "OAuth access tokens of {}",
            oauth.issuers().collect::<Vec<_>>().join(", ")
        );
        options.authentication = dual_serve::auth::Authentication::OAuth(oauth);
    }
    if let Some(path) = &args.link_key_file {
        options.link_key = Some(dual_serve::link_key::read(path)?);
        tracing::info!(path = %path.display(), "link key loaded");
    }
    options.link_lifetime = Duration::from_secs(args.link_lifetime_secs);
    options.apps = AppsOptions::new().download_link(args.result_download_link);
    let serve::Served {
        running,
        database,
        handler,
    } = serve::start(&options, &database).await?;
    if let Some(addr) = running.metrics_addr {
        eprintln!("dual-response: metrics http://{addr}{}", serve::METRICS_PATH);
    }
    eprintln!(
        "dual-response: MCP {}, REST http://{}{} (database {database}; callers: {})",
        if args.stdio {
            "on stdio".to_owned()
        } else {
            running.mcp_url()
        },
        running.addr,
        serve::REST_PREFIX,
        dual_core::escape::display_safe(&callers),
    );
    if args.stdio {
        handler
            .serve_stdio(async {
                let signal = signals.recv().await;
                tracing::info!(signal, "shutting down");
            })
            .await?;
    } else {
        let signal = signals.recv().await;
        tracing::info!(signal, "shutting down");
    }
    running
        .shutdown_or(async {
            let signal = signals.recv().await;
            tracing::warn!(signal, "second signal: cutting what still runs");
        })
        .await;
    Ok(())
}
