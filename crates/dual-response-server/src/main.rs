//! `dual-response`: serve a database over MCP and REST (`serve`), run the demo (`demo`), report from
//! a server (`report`). Run `dual-response --help`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::builder::RangedU64ValueParser;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use dual_response_server::database::DatabaseUrl;
use dual_response_server::report::{self, ReportOptions};
use dual_response_server::serve::{self, DatabaseOptions, ServeOptions};
use dual_rmcp::apps::AppsOptions;
use dual_serve::auth::AuthTokens;
use dual_serve::shutdown::Signals;

/// The MCP Dual Response pattern: the model gets a sample, the application gets every row.
///
/// `serve` serves a database; without a subcommand (or with `demo`), runs the whole demo in one
/// process: starts the server, calls the MCP tool through a real MCP client, shows what the model
/// sees, then fetches the full result out of band.
#[derive(Debug, Parser)]
#[command(name = "dual-response", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP (streamable HTTP at /mcp, or stdio with --stdio) and the REST API at /resources.
    Serve(Box<ServeArgs>),
    /// Run the demo: a server on the embedded dataset, a tool call through a real MCP client, what the
    /// model sees, then every row fetched out of band.
    Demo,
    /// Call the `query` tool over MCP, show the sample, fetch every row, print a table or write CSV.
    Report(ReportArgs),
}

/// Every option is also read from the environment variable `DUAL_<NAME>` (`DUAL_MAX_CONNECTIONS=64`)
/// and from the TOML file of `--config` (`max-connections = 64`); a flag wins over the environment,
/// the environment over the file, the file over the default.
#[derive(Debug, Args)]
struct ServeArgs {
    /// Read options from this TOML file (keys named like the flags: `addr = "127.0.0.1:8080"`); an
    /// unknown key is refused. Also `DUAL_CONFIG`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print the effective configuration (where each value came from; passwords redacted) and exit.
    #[arg(long)]
    print_config: bool,
    /// Address of the HTTP server (MCP at /mcp, REST at /resources).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// The database to serve: postgres://USER:PASSWORD@HOST:PORT/DB, mysql://… (or mariadb://…),
    /// sqlite:PATH, or demo (the embedded IPEDS-like dataset, generated on first use). Connect as a
    /// role that may only read: PostgreSQL and MySQL roles that may do more are refused (see
    /// --allow-privileged-role).
    // A string, parsed after clap: clap's own errors echo the value, password included.
    #[arg(long, value_name = "URL", default_value = "demo", conflicts_with = "db")]
    database: String,
    /// Shorthand for --database sqlite:FILE.
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
    /// With --database demo: the dataset's file, generated when missing (default: a file in the
    /// cache directory).
    #[arg(long, value_name = "FILE")]
    dataset: Option<PathBuf>,
    /// Start even when the database role may do more than read (a superuser, `root`, a role that
    /// may write): the model's SQL is still parsed and refused what is not a read-only query.
    #[arg(long)]
    allow_privileged_role: bool,
    /// A function of the database's own (user-defined: refused by default) the model's SQL may
    /// call; repeat the flag or separate names with commas.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    allow_function: Vec<String>,
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
    /// Serve MCP over stdin/stdout (for desktop MCP clients); only the REST API stays on --addr
    /// (/mcp is 404 there).
    #[arg(long)]
    stdio: bool,
    /// Seconds a query may run, in the background or not (and one SQL statement of a live page or
    /// export batch); past it the query is cancelled and its resource fails with `query_timeout`.
    #[arg(long, value_name = "SECS", default_value_t = dual_response_server::ipeds::sqlite::DEFAULT_TIME_LIMIT.as_secs(),
          value_parser = secs())]
    query_time_limit_secs: u64,
    /// Milliseconds a tool call waits for its query; a query still running then gives a `pending`
    /// resource that becomes ready (or failed) in the background. 0 waits for the end.
    #[arg(long, value_name = "MS", default_value_t = dual_serve::DEFAULT_PENDING_AFTER.as_millis() as u64)]
    pending_after_ms: u64,
    /// Milliseconds a request waits for a free database connection; then 503 `overloaded` (retryable,
    /// Retry-After), never a hang.
    #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    db_wait_ms: u64,
    /// SQLite (and the demo): how many of the 4 database connections exports may hold at once (at
    /// most 3); pages and counts always have the rest (a tool call's snapshot takes a connection of
    /// its own). PostgreSQL and MySQL bound exports by their pool and --db-wait-ms.
    #[arg(long, value_name = "N", default_value_t = dual_response_server::ipeds::sqlite::DEFAULT_EXPORT_SLOTS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=3))]
    export_slots: usize,
    /// Tool calls computing their sample and count at once; more wait their turn, fairly by owner.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_FOREGROUND_SLOTS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=4096))]
    foreground_slots: usize,
    /// Snapshots written at once after their tool call was answered; more wait their turn, fairly by
    /// owner, keeping their database snapshot.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_BACKGROUND_SLOTS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=4096))]
    background_slots: usize,
    /// Most results holding a background place (being written or waiting); past it a tool call is
    /// refused with the retryable `overloaded` before its query runs.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_BACKGROUND_QUEUE,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=65536))]
    background_queue: usize,
    /// Largest tool result, in bytes of JSON: its text blocks and structuredContent together (the
    /// sample is sent twice, and counts twice). The sample keeps as many whole rows as fit, and says
    /// how many; the count and the link are always there.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_MAX_SAMPLE_BYTES,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    max_sample_bytes: usize,
    /// Largest POST /{id} page, in bytes of JSON: a page that would pass it is cut to whole rows
    /// (has_next and next_offset exact); a single row larger than it comes alone.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_MAX_PAGE_BYTES,
          value_parser = RangedU64ValueParser::<usize>::new().range(1024..))]
    max_page_bytes: usize,
    /// Largest resources/read text (what the model reads), in bytes: the page is cut to whole rows;
    /// a single row larger than it is an error naming the next offset.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_MAX_READ_BYTES,
          value_parser = RangedU64ValueParser::<usize>::new().range(1024..))]
    max_read_bytes: usize,
    /// Largest error text returned to the model (a failed query's message, an argument error), in
    /// bytes: longer text is cut at a character boundary and ends with a marker.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_MAX_ERROR_TEXT_BYTES,
          value_parser = RangedU64ValueParser::<usize>::new().range(256..))]
    max_error_text_bytes: usize,
    /// Largest snapshot, in MiB of compact JSON rows: a resource's result is written once at
    /// creation and its pages and exports are served from it; a larger result is served live (pages
    /// re-run the query). 0 turns snapshots off.
    #[arg(long, value_name = "MIB", default_value_t = dual_server::DEFAULT_SNAPSHOT_MAX_BYTES >> 20)]
    snapshot_max_mb: u64,
    /// Most sorted orders of snapshots derived at once (`POST` pages and exports with `sort`), each
    /// on a blocking thread; an order already derived is served from a cache without a slot.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_SORT_CONCURRENCY,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    sort_concurrency: usize,
    /// Milliseconds a sort waits for a derivation slot; then 503 `overloaded` (retryable,
    /// Retry-After). 0 refuses at once when every slot is taken.
    #[arg(long, value_name = "MS", default_value_t = dual_server::DEFAULT_SORT_WAIT.as_millis() as u64)]
    sort_wait_ms: u64,
    /// Working memory of the sorts being derived, together, in MiB (their keys: 28 bytes per row
    /// plus the text of string keys). A sort that alone needs more is refused with 400
    /// `invalid_request`; one that finds it taken by other sorts gets 503 `overloaded`.
    #[arg(long, value_name = "MIB", default_value_t = dual_server::DEFAULT_SORT_MEMORY_BYTES >> 20,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    sort_memory_mb: u64,
    /// Most rows of a snapshot the server sorts; a sort of a larger one is refused with 400
    /// `invalid_request` (fetch it unsorted, or export it and sort locally).
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_SORT_MAX_ROWS,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..=u64::from(u32::MAX)))]
    sort_max_rows: u64,
    /// Largest snapshot the server sorts, in MiB of compact JSON rows; above, 400 `invalid_request`.
    #[arg(long, value_name = "MIB", default_value_t = dual_server::DEFAULT_SORT_MAX_BYTES >> 20,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    sort_max_mb: u64,
    /// Where snapshots are kept: `memory` (this process's; with a shared --store snapshots are then
    /// off and every resource is live) or `s3://BUCKET[/PREFIX]`, shared by every instance that shares
    /// the store, so instance B serves what instance A wrote. S3's endpoint, region and credentials come
    /// from AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN, …);
    /// an http:// endpoint is allowed. Instances sharing a spool prefix must share the store: each
    /// sweep removes the snapshots (older than an hour) that its store has no record of.
    #[arg(long, value_name = "memory|s3://BUCKET[/PREFIX]", default_value = dual_serve::spool::MEMORY)]
    spool: String,
    /// Memory budget of the memory spool, in MiB (default 256); segments beyond it spill to disk.
    /// Memory spool only.
    #[arg(long, value_name = "MIB")]
    spool_memory_mb: Option<u64>,
    /// Directory snapshot segments spill to (default: a private temporary directory; those of dead
    /// processes are removed at start-up). It is locked while this process runs: a second process
    /// refuses to start on it. Leftovers of a crashed process in it are removed at start-up. Memory
    /// spool only.
    #[arg(long, value_name = "DIR")]
    spool_dir: Option<std::path::PathBuf>,
    /// Cap on the memory spool's snapshot bytes in memory and on disk together, in MiB; a tool call
    /// whose snapshot would pass it fails with the retryable `quota_exceeded` (nothing is evicted).
    /// Default: the memory budget plus half the spill directory's free space above the free-space
    /// floor, at start-up. Memory spool only.
    #[arg(long, value_name = "MIB")]
    spool_max_mb: Option<u64>,
    /// Free space a spill must leave on the spill directory's disk, in MiB; a segment that would
    /// leave less is refused (`quota_exceeded`). Default: 1024, or 5 % of the disk when smaller; 0
    /// checks nothing. Memory spool only.
    #[arg(long, value_name = "MIB")]
    spool_min_free_mb: Option<u64>,
    /// Most snapshot bytes of one owner's live resources, in MiB (anonymous callers are one
    /// owner); a tool call past it fails with the retryable `quota_exceeded`. Counted per instance.
    #[arg(long, value_name = "MIB", default_value_t = dual_server::DEFAULT_OWNER_MAX_BYTES >> 20,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    owner_max_mb: u64,
    /// Most live resources of one owner (anonymous callers are one owner); beyond it a tool call
    /// fails with the retryable `quota_exceeded`. Counted per instance.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_OWNER_MAX_RESOURCES,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    owner_max_resources: u64,
    /// Most queries of one owner running at once, pending ones included; beyond it a tool call
    /// fails with the retryable `quota_exceeded`. Counted per instance.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_OWNER_MAX_QUERIES,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    owner_max_queries: u64,
    /// Most pinned resources of one owner (`PUT /resources/{id}`); beyond it a pin answers 429
    /// `quota_exceeded`. 0 allows no pins. Counted per instance.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_OWNER_MAX_PINS)]
    owner_max_pins: u64,
    /// Whether anonymous callers may pin (all of them together as one owner, under
    /// --owner-max-pins); `false` answers their pins 429 `quota_exceeded`.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    anonymous_pins: bool,
    /// Seconds between sweeps, which remove expired resources, their snapshots, and orphaned
    /// snapshots (a crash between writing one and saving its resource).
    #[arg(long, value_name = "SECS", default_value_t = dual_server::DEFAULT_CLEANUP_INTERVAL.as_secs(),
          value_parser = secs())]
    cleanup_interval_secs: u64,
    /// Most live resources; at the cap a tool call fails with a retryable error (nothing is evicted;
    /// deleting or expiring resources frees room).
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_MAX_RESOURCES,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    max_resources: u64,
    /// Most connections open at once; further clients wait in the listen backlog until one closes.
    #[arg(long, value_name = "N", default_value_t = serve::DEFAULT_MAX_CONNECTIONS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    max_connections: usize,
    /// Seconds a client has to send a request head (from connecting, or from the first byte of the
    /// next request on a kept-alive connection).
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_HEADER_TIMEOUT.as_secs(),
          value_parser = secs())]
    header_timeout_secs: u64,
    /// Seconds a kept-alive connection may wait for its next request.
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_IDLE_TIMEOUT.as_secs(),
          value_parser = secs())]
    idle_timeout_secs: u64,
    /// Seconds a request body has to arrive in full (else 408, and the connection is closed).
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_BODY_TIMEOUT.as_secs(),
          value_parser = secs())]
    body_timeout_secs: u64,
    /// Seconds a response (an export) may stay unable to write because the client stopped reading;
    /// then the connection is cut.
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_EXPORT_STALL.as_secs(),
          value_parser = secs())]
    export_stall_secs: u64,
    /// Most live MCP sessions; a further `initialize` gets 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = serve::DEFAULT_MAX_MCP_SESSIONS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    max_mcp_sessions: usize,
    /// Seconds an MCP session may go without a message before it is closed.
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_MCP_SESSION_IDLE.as_secs(),
          value_parser = secs())]
    mcp_session_idle_secs: u64,
    /// With a shared store: seconds after it started that a session (before protocol 2026-07-28)
    /// can be restored on another instance.
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_MCP_SESSION_TTL.as_secs(),
          value_parser = secs())]
    mcp_session_ttl_secs: u64,
    /// Seconds in-flight requests and exports, and the snapshots of results already answered, get to
    /// finish after SIGTERM or SIGINT before they are cut (a second signal cuts the requests at once);
    /// a result still being written then is stored `query_interrupted` (retryable: run it again).
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_SHUTDOWN_GRACE.as_secs())]
    shutdown_grace_secs: u64,
    /// Require `Authorization: Bearer TOKEN` on /mcp and /resources. FILE holds one `TOKEN OWNER`
    /// pair per line (`#` comment lines and blank lines ignored). Default: no authentication.
    #[arg(long, value_name = "FILE")]
    auth_tokens: Option<PathBuf>,
    /// Be an OAuth 2.1 resource server (MCP authorization): /mcp and /resources require an access
    /// token (a JWT) that URL signed for this server, the owner taken from a claim; the Protected
    /// Resource Metadata is served at /.well-known/oauth-protected-resource. URL is the issuer's exact
    /// `iss` (Keycloak: https://HOST/realms/REALM; Auth0: https://TENANT.auth0.com/; Entra, v2
    /// tokens: https://login.microsoftonline.com/TENANT/v2.0, v1: https://sts.windows.net/TENANT/);
    /// its keys come from its metadata. Repeat the flag, or separate with commas, to trust several
    /// issuers (owners are then ISSUER#SUBJECT).
    /// Excludes --auth-tokens. Default: no OAuth.
    #[arg(
        long,
        value_name = "URL",
        value_delimiter = ',',
        conflicts_with = "auth_tokens"
    )]
    oauth_issuer: Vec<String>,
    /// The resource URI the Protected Resource Metadata publishes (RFC 9728 `resource`, what hosts
    /// ask the identity provider for), and the `aud` tokens must name unless --oauth-audience is
    /// given. Default: this server's MCP URL (--base-url with /mcp for /resources, else
    /// http://ADDR/mcp).
    #[arg(long, value_name = "URI", requires = "oauth_issuer")]
    oauth_resource: Option<String>,
    /// An `aud` value access tokens may name instead of the resource URI: a token must name one of
    /// them, and the resource URI only counts when it is given too. Repeat the flag, or separate
    /// with commas, for several. For identity providers whose `aud` is not the resource URL:
    /// Microsoft Entra v2 tokens name the API's application (client) id, a GUID. Default: the
    /// resource URI alone.
    #[arg(long, value_name = "AUDIENCE", requires = "oauth_issuer")]
    #[arg(value_delimiter = ',')]
    oauth_audience: Vec<String>,
    /// The first --oauth-issuer's key set (JWKS) URL, instead of the `jwks_uri` of its metadata.
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    oauth_jwks_url: Option<String>,
    /// The access token claim that names the owner of what a caller creates.
    #[arg(long, value_name = "CLAIM", default_value = dual_serve::auth::DEFAULT_OWNER_CLAIM)]
    oauth_owner_claim: String,
    /// A scope MCP tools/call requires (403 insufficient_scope without it). Default: none.
    #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
    oauth_tool_scope: Option<String>,
    /// A scope /resources and MCP resources/read require (403 insufficient_scope without it;
    /// capability links need none).
    /// Default: none.
    #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
    oauth_read_scope: Option<String>,
    /// Seconds of clock skew allowed on a token's `exp` and `nbf` (at most 300).
    #[arg(long, value_name = "SECS", default_value_t = dual_serve::auth::DEFAULT_LEEWAY.as_secs(),
          value_parser = RangedU64ValueParser::<u64>::new().range(0..=dual_serve::auth::MAX_LEEWAY.as_secs()))]
    oauth_leeway_secs: u64,
    /// The first --oauth-issuer's RFC 7662 introspection endpoint: bearer tokens that are not JWTs
    /// (opaque tokens) are checked there, as the client --oauth-client-id with the secret of
    /// --oauth-client-secret-file. Default: opaque tokens are refused.
    #[arg(long, value_name = "URL", requires_all = ["oauth_issuer", "oauth_client_id", "oauth_client_secret_file"])]
    oauth_introspection_url: Option<String>,
    /// This server's client id at the introspection endpoint.
    #[arg(long, value_name = "ID", requires = "oauth_introspection_url")]
    oauth_client_id: Option<String>,
    /// A file holding this server's client secret at the introspection endpoint (surrounding
    /// whitespace ignored); never a flag value, so that it shows in no process list.
    #[arg(long, value_name = "FILE", requires = "oauth_introspection_url")]
    oauth_client_secret_file: Option<PathBuf>,
    /// Sign capability links (download URLs that need no Authorization header, minted for MCP Apps
    /// views) with the bytes of FILE, at least 32 (`head -c 32 /dev/urandom > FILE`); give every
    /// instance sharing a store the same file. Default: a random key per process, so links stop
    /// working at a restart and other instances do not accept them.
    #[arg(long, value_name = "FILE")]
    link_key_file: Option<PathBuf>,
    /// Seconds a capability link works after it was minted (at most 86400, one day).
    #[arg(long, value_name = "SECS", default_value_t = dual_server::DEFAULT_LINK_LIFETIME.as_secs(),
          value_parser = RangedU64ValueParser::<u64>::new().range(1..=dual_server::MAX_LINK_LIFETIME.as_secs()))]
    link_lifetime_secs: u64,
    /// For MCP Apps clients, end the tool result's summary with a CSV download link (a capability
    /// URL for the same caller). The link then sits in the model's context and the host's
    /// transcript: whoever reads those reads every row until it expires.
    #[arg(long)]
    result_download_link: bool,
    /// Serve metrics in the Prometheus text format at http://ADDR/metrics, on a listener of its own
    /// (default: off, and nothing is recorded). It asks for no token: bind it to loopback or a
    /// private interface. docs/METRICS.md lists the metrics.
    #[arg(long, value_name = "ADDR")]
    metrics_addr: Option<SocketAddr>,
    /// Most connections open at once on the metrics listener (which shares the header, idle and
    /// stall timeouts).
    #[arg(long, value_name = "N", default_value_t = serve::DEFAULT_METRICS_MAX_CONNECTIONS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    metrics_max_connections: usize,
}

/// The OAuth options of `--oauth-*`, when `--oauth-issuer` is given.
fn oauth_options(
    args: &ServeArgs,
) -> Result<Option<dual_serve::auth::OAuthOptions>, Box<dyn std::error::Error>> {
    let mut issuers = args.oauth_issuer.iter();
    let Some(first) = issuers.next() else {
        return Ok(None);
    };
    let mut builder = dual_serve::auth::OAuthOptions::builder(first.clone());
    if let Some(url) = &args.oauth_jwks_url {
        builder = builder.jwks_uri(url.clone());
    }
    if let (Some(url), Some(id), Some(path)) = (
        &args.oauth_introspection_url,
        &args.oauth_client_id,
        &args.oauth_client_secret_file,
    ) {
        let secret = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the OAuth client secret file {}: {e}", path.display()))?;
        builder = builder.introspection(url.clone(), id.clone(), secret.trim());
    }
    for issuer in issuers {
        builder = builder.trust(issuer.clone());
    }
    if let Some(resource) = &args.oauth_resource {
        builder = builder.resource(resource.clone());
    }
    for audience in &args.oauth_audience {
        builder = builder.audience(audience.clone());
    }
    if let Some(scope) = &args.oauth_tool_scope {
        builder = builder.tool_scope(scope.clone());
    }
    if let Some(scope) = &args.oauth_read_scope {
        builder = builder.read_scope(scope.clone());
    }
    let options = builder
        .owner_claim(args.oauth_owner_claim.clone())
        .leeway(Duration::from_secs(args.oauth_leeway_secs))
        .build()?;
    Ok(Some(options))
}

/// Whole seconds, at least one.
fn secs() -> RangedU64ValueParser<u64> {
    RangedU64ValueParser::new().range(1..)
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
    /// Bearer token for a server started with --auth-tokens (default: the environment variable
    /// DUAL_DEMO_TOKEN, which keeps it out of the process list).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
}

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
