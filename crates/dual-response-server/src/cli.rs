//! The command line of `dual-response`: its subcommands and their options (clap), and the OAuth options
//! the `--oauth-*` flags make.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::RangedU64ValueParser;
use clap::{Args, Parser, Subcommand};
use dual_response_server::serve;

/// The MCP Dual Response pattern: the model gets a sample, the application gets every row.
///
/// `serve` serves a database; without a subcommand (or with `demo`), runs the whole demo in one
/// process: starts the server, calls the MCP tool through a real MCP client, shows what the model
/// sees, then fetches the full result out of band.
#[derive(Debug, Parser)]
#[command(name = "dual-response", version)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
pub(crate) struct ServeArgs {
    /// Read options from this TOML file (keys named like the flags: `addr = "127.0.0.1:8080"`); an
    /// unknown key is refused. Also `DUAL_CONFIG`.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Print the effective configuration (where each value came from; passwords redacted) and exit.
    #[arg(long)]
    pub(crate) print_config: bool,
    /// Address of the HTTP server (MCP at /mcp, REST at /resources).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub(crate) addr: SocketAddr,
    /// The database to serve: postgres://USER:PASSWORD@HOST:PORT/DB, mysql://… (or mariadb://…),
    /// sqlite:PATH, or demo (the embedded IPEDS-like dataset, generated on first use). Connect as a
    /// role that may only read: PostgreSQL and MySQL roles that may do more are refused (see
    /// --allow-privileged-role).
    // A string, parsed after clap: clap's own errors echo the value, password included.
    #[arg(long, value_name = "URL", default_value = "demo", conflicts_with = "db")]
    pub(crate) database: String,
    /// Shorthand for --database sqlite:FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) db: Option<PathBuf>,
    /// With --database demo: the dataset's file, generated when missing (default: a file in the
    /// cache directory).
    #[arg(long, value_name = "FILE")]
    pub(crate) dataset: Option<PathBuf>,
    /// Start even when the database role may do more than read (a superuser, `root`, a role that
    /// may write): the model's SQL is still parsed and refused what is not a read-only query.
    #[arg(long)]
    pub(crate) allow_privileged_role: bool,
    /// A function of the database's own (user-defined: refused by default) the model's SQL may
    /// call; repeat the flag or separate names with commas.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub(crate) allow_function: Vec<String>,
    /// Resource store: `memory`, `redis://HOST:PORT[/DB]`, or `postgres://USER[:PASSWORD]@HOST:PORT/DB`
    /// (shared by several instances).
    #[arg(long, value_name = "memory|URL", default_value = "memory")]
    pub(crate) store: String,
    /// Redis key prefix (default `dual:`) or PostgreSQL schema (default: the search_path's first);
    /// give each deployment its own.
    #[arg(long, value_name = "PREFIX")]
    pub(crate) store_prefix: Option<String>,
    /// Time limit of one store operation, and of opening one store connection, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub(crate) store_timeout_ms: u64,
    /// Base URL of the REST API in resource links (default: http://ADDR/resources).
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Lifetime of a resource, in seconds.
    #[arg(long, value_name = "N", default_value_t = 900)]
    pub(crate) expiration_secs: u64,
    /// Sample rows per tool result.
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub(crate) sample_size: u64,
    /// Serve MCP over stdin/stdout (for desktop MCP clients); only the REST API stays on --addr
    /// (/mcp is 404 there).
    #[arg(long)]
    pub(crate) stdio: bool,
    /// Seconds a query may run, in the background or not (and one SQL statement of a live page or
    /// export batch); past it the query is cancelled and its resource fails with `query_timeout`.
    #[arg(long, value_name = "SECS", default_value_t = dual_response_server::ipeds::sqlite::DEFAULT_TIME_LIMIT.as_secs(),
          value_parser = secs())]
    pub(crate) query_time_limit_secs: u64,
    /// Milliseconds a tool call waits for its query; a query still running then gives a `pending`
    /// resource that becomes ready (or failed) in the background. 0 waits for the end.
    #[arg(long, value_name = "MS", default_value_t = dual_serve::DEFAULT_PENDING_AFTER.as_millis() as u64)]
    pub(crate) pending_after_ms: u64,
    /// Milliseconds a request waits for a free database connection; then 503 `overloaded` (retryable,
    /// Retry-After), never a hang.
    #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) db_wait_ms: u64,
    /// SQLite (and the demo): how many of the 4 database connections exports may hold at once (at
    /// most 3); pages and counts always have the rest (a tool call's snapshot takes a connection of
    /// its own). PostgreSQL and MySQL bound exports by their pool and --db-wait-ms.
    #[arg(long, value_name = "N", default_value_t = dual_response_server::ipeds::sqlite::DEFAULT_EXPORT_SLOTS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=3))]
    pub(crate) export_slots: usize,
    /// Tool calls computing their sample and count at once; more wait their turn, fairly by owner.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_FOREGROUND_SLOTS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=4096))]
    pub(crate) foreground_slots: usize,
    /// Snapshots written at once after their tool call was answered; more wait their turn, fairly by
    /// owner, keeping their database snapshot.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_BACKGROUND_SLOTS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=4096))]
    pub(crate) background_slots: usize,
    /// Most results holding a background place (being written or waiting); past it a tool call is
    /// refused with the retryable `overloaded` before its query runs.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_BACKGROUND_QUEUE,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=65536))]
    pub(crate) background_queue: usize,
    /// Largest tool result, in bytes of JSON: its text blocks and structuredContent together (the
    /// sample is sent twice, and counts twice). The sample keeps as many whole rows as fit, and says
    /// how many; the count and the link are always there.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_MAX_SAMPLE_BYTES,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub(crate) max_sample_bytes: usize,
    /// Largest POST /{id} page, in bytes of JSON: a page that would pass it is cut to whole rows
    /// (has_next and next_offset exact); a single row larger than it comes alone.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_MAX_PAGE_BYTES,
          value_parser = RangedU64ValueParser::<usize>::new().range(1024..))]
    pub(crate) max_page_bytes: usize,
    /// Largest resources/read text (what the model reads), in bytes: the page is cut to whole rows;
    /// a single row larger than it is an error naming the next offset.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_MAX_READ_BYTES,
          value_parser = RangedU64ValueParser::<usize>::new().range(1024..))]
    pub(crate) max_read_bytes: usize,
    /// Largest error text returned to the model (a failed query's message, an argument error), in
    /// bytes: longer text is cut at a character boundary and ends with a marker.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_MAX_ERROR_TEXT_BYTES,
          value_parser = RangedU64ValueParser::<usize>::new().range(256..))]
    pub(crate) max_error_text_bytes: usize,
    /// Largest snapshot, in MiB of compact JSON rows: a resource's result is written once at
    /// creation and its pages and exports are served from it; a larger result is served live (pages
    /// re-run the query). 0 turns snapshots off.
    #[arg(long, value_name = "MIB", default_value_t = dual_server::DEFAULT_SNAPSHOT_MAX_BYTES >> 20)]
    pub(crate) snapshot_max_mb: u64,
    /// Most sorted orders of snapshots derived at once (`POST` pages and exports with `sort`), each
    /// on a blocking thread; an order already derived is served from a cache without a slot.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_SORT_CONCURRENCY,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub(crate) sort_concurrency: usize,
    /// Milliseconds a sort waits for a derivation slot; then 503 `overloaded` (retryable,
    /// Retry-After). 0 refuses at once when every slot is taken.
    #[arg(long, value_name = "MS", default_value_t = dual_server::DEFAULT_SORT_WAIT.as_millis() as u64)]
    pub(crate) sort_wait_ms: u64,
    /// Working memory of the sorts being derived, together, in MiB (their keys: 28 bytes per row
    /// plus the text of string keys). A sort that alone needs more is refused with 400
    /// `invalid_request`; one that finds it taken by other sorts gets 503 `overloaded`.
    #[arg(long, value_name = "MIB", default_value_t = dual_server::DEFAULT_SORT_MEMORY_BYTES >> 20,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) sort_memory_mb: u64,
    /// Most rows of a snapshot the server sorts; a sort of a larger one is refused with 400
    /// `invalid_request` (fetch it unsorted, or export it and sort locally).
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_SORT_MAX_ROWS,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..=u64::from(u32::MAX)))]
    pub(crate) sort_max_rows: u64,
    /// Largest snapshot the server sorts, in MiB of compact JSON rows; above, 400 `invalid_request`.
    #[arg(long, value_name = "MIB", default_value_t = dual_server::DEFAULT_SORT_MAX_BYTES >> 20,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) sort_max_mb: u64,
    /// Where snapshots are kept: `memory` (this process's; with a shared --store snapshots are then
    /// off and every resource is live) or `s3://BUCKET[/PREFIX]`, shared by every instance that shares
    /// the store, so instance B serves what instance A wrote. S3's endpoint, region and credentials come
    /// from AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN, …);
    /// an http:// endpoint is allowed. Instances sharing a spool prefix must share the store: each
    /// sweep removes the snapshots (older than an hour) that its store has no record of.
    #[arg(long, value_name = "memory|s3://BUCKET[/PREFIX]", default_value = dual_serve::spool::MEMORY)]
    pub(crate) spool: String,
    /// Memory budget of the memory spool, in MiB (default 256); segments beyond it spill to disk.
    /// Memory spool only.
    #[arg(long, value_name = "MIB")]
    pub(crate) spool_memory_mb: Option<u64>,
    /// Directory snapshot segments spill to (default: a private temporary directory; those of dead
    /// processes are removed at start-up). It is locked while this process runs: a second process
    /// refuses to start on it. Leftovers of a crashed process in it are removed at start-up. Memory
    /// spool only.
    #[arg(long, value_name = "DIR")]
    pub(crate) spool_dir: Option<std::path::PathBuf>,
    /// Cap on the memory spool's snapshot bytes in memory and on disk together, in MiB; a tool call
    /// whose snapshot would pass it fails with the retryable `quota_exceeded` (nothing is evicted).
    /// Default: the memory budget plus half the spill directory's free space above the free-space
    /// floor, at start-up. Memory spool only.
    #[arg(long, value_name = "MIB")]
    pub(crate) spool_max_mb: Option<u64>,
    /// Free space a spill must leave on the spill directory's disk, in MiB; a segment that would
    /// leave less is refused (`quota_exceeded`). Default: 1024, or 5 % of the disk when smaller; 0
    /// checks nothing. Memory spool only.
    #[arg(long, value_name = "MIB")]
    pub(crate) spool_min_free_mb: Option<u64>,
    /// Most snapshot bytes of one owner's live resources, in MiB (anonymous callers are one
    /// owner); a tool call past it fails with the retryable `quota_exceeded`. Counted per instance.
    #[arg(long, value_name = "MIB", default_value_t = dual_server::DEFAULT_OWNER_MAX_BYTES >> 20,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) owner_max_mb: u64,
    /// Most live resources of one owner (anonymous callers are one owner); beyond it a tool call
    /// fails with the retryable `quota_exceeded`. Counted per instance.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_OWNER_MAX_RESOURCES,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) owner_max_resources: u64,
    /// Most queries of one owner running at once, pending ones included; beyond it a tool call
    /// fails with the retryable `quota_exceeded`. Counted per instance.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_OWNER_MAX_QUERIES,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) owner_max_queries: u64,
    /// Most pinned resources of one owner (`PUT /resources/{id}`); beyond it a pin answers 429
    /// `quota_exceeded`. 0 allows no pins. Counted per instance.
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_OWNER_MAX_PINS)]
    pub(crate) owner_max_pins: u64,
    /// Whether anonymous callers may pin (all of them together as one owner, under
    /// --owner-max-pins); `false` answers their pins 429 `quota_exceeded`.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub(crate) anonymous_pins: bool,
    /// Seconds between sweeps, which remove expired resources, their snapshots, and orphaned
    /// snapshots (a crash between writing one and saving its resource).
    #[arg(long, value_name = "SECS", default_value_t = dual_server::DEFAULT_CLEANUP_INTERVAL.as_secs(),
          value_parser = secs())]
    pub(crate) cleanup_interval_secs: u64,
    /// Most live resources; at the cap a tool call fails with a retryable error (nothing is evicted;
    /// deleting or expiring resources frees room).
    #[arg(long, value_name = "N", default_value_t = dual_server::DEFAULT_MAX_RESOURCES,
          value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    pub(crate) max_resources: u64,
    /// Most connections open at once; further clients wait in the listen backlog until one closes.
    #[arg(long, value_name = "N", default_value_t = serve::DEFAULT_MAX_CONNECTIONS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub(crate) max_connections: usize,
    /// Seconds a client has to send a request head (from connecting, or from the first byte of the
    /// next request on a kept-alive connection).
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_HEADER_TIMEOUT.as_secs(),
          value_parser = secs())]
    pub(crate) header_timeout_secs: u64,
    /// Seconds a kept-alive connection may wait for its next request.
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_IDLE_TIMEOUT.as_secs(),
          value_parser = secs())]
    pub(crate) idle_timeout_secs: u64,
    /// Seconds a request body has to arrive in full (else 408, and the connection is closed).
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_BODY_TIMEOUT.as_secs(),
          value_parser = secs())]
    pub(crate) body_timeout_secs: u64,
    /// Seconds a response (an export) may stay unable to write because the client stopped reading;
    /// then the connection is cut.
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_EXPORT_STALL.as_secs(),
          value_parser = secs())]
    pub(crate) export_stall_secs: u64,
    /// Most live MCP sessions; a further `initialize` gets 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = serve::DEFAULT_MAX_MCP_SESSIONS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub(crate) max_mcp_sessions: usize,
    /// Seconds an MCP session may go without a message before it is closed.
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_MCP_SESSION_IDLE.as_secs(),
          value_parser = secs())]
    pub(crate) mcp_session_idle_secs: u64,
    /// With a shared store: seconds after it started that a session (before protocol 2026-07-28)
    /// can be restored on another instance.
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_MCP_SESSION_TTL.as_secs(),
          value_parser = secs())]
    pub(crate) mcp_session_ttl_secs: u64,
    /// Seconds in-flight requests and exports, and the snapshots of results already answered, get to
    /// finish after SIGTERM or SIGINT before they are cut (a second signal cuts the requests at once);
    /// a result still being written then is stored `query_interrupted` (retryable: run it again).
    #[arg(long, value_name = "SECS", default_value_t = serve::DEFAULT_SHUTDOWN_GRACE.as_secs())]
    pub(crate) shutdown_grace_secs: u64,
    /// Require `Authorization: Bearer TOKEN` on /mcp and /resources. FILE holds one `TOKEN OWNER`
    /// pair per line (`#` comment lines and blank lines ignored). Default: no authentication.
    #[arg(long, value_name = "FILE")]
    pub(crate) auth_tokens: Option<PathBuf>,
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
    pub(crate) oauth_issuer: Vec<String>,
    /// The resource URI the Protected Resource Metadata publishes (RFC 9728 `resource`, what hosts
    /// ask the identity provider for), and the `aud` tokens must name unless --oauth-audience is
    /// given. Default: this server's MCP URL (--base-url with /mcp for /resources, else
    /// http://ADDR/mcp).
    #[arg(long, value_name = "URI", requires = "oauth_issuer")]
    pub(crate) oauth_resource: Option<String>,
    /// An `aud` value access tokens may name instead of the resource URI: a token must name one of
    /// them, and the resource URI only counts when it is given too. Repeat the flag, or separate
    /// with commas, for several. For identity providers whose `aud` is not the resource URL:
    /// Microsoft Entra v2 tokens name the API's application (client) id, a GUID. Default: the
    /// resource URI alone.
    #[arg(long, value_name = "AUDIENCE", requires = "oauth_issuer")]
    #[arg(value_delimiter = ',')]
    pub(crate) oauth_audience: Vec<String>,
    /// The first --oauth-issuer's key set (JWKS) URL, instead of the `jwks_uri` of its metadata.
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub(crate) oauth_jwks_url: Option<String>,
    /// The access token claim that names the owner of what a caller creates.
    #[arg(long, value_name = "CLAIM", default_value = dual_serve::auth::DEFAULT_OWNER_CLAIM)]
    pub(crate) oauth_owner_claim: String,
    /// A scope MCP tools/call requires (403 insufficient_scope without it). Default: none.
    #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
    pub(crate) oauth_tool_scope: Option<String>,
    /// A scope /resources and MCP resources/read require (403 insufficient_scope without it;
    /// capability links need none).
    /// Default: none.
    #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
    pub(crate) oauth_read_scope: Option<String>,
    /// Seconds of clock skew allowed on a token's `exp` and `nbf` (at most 300).
    #[arg(long, value_name = "SECS", default_value_t = dual_serve::auth::DEFAULT_LEEWAY.as_secs(),
          value_parser = RangedU64ValueParser::<u64>::new().range(0..=dual_serve::auth::MAX_LEEWAY.as_secs()))]
    pub(crate) oauth_leeway_secs: u64,
    /// The first --oauth-issuer's RFC 7662 introspection endpoint: bearer tokens that are not JWTs
    /// (opaque tokens) are checked there, as the client --oauth-client-id with the secret of
    /// --oauth-client-secret-file. Default: opaque tokens are refused.
    #[arg(long, value_name = "URL", requires_all = ["oauth_issuer", "oauth_client_id", "oauth_client_secret_file"])]
    pub(crate) oauth_introspection_url: Option<String>,
    /// This server's client id at the introspection endpoint.
    #[arg(long, value_name = "ID", requires = "oauth_introspection_url")]
    pub(crate) oauth_client_id: Option<String>,
    /// A file holding this server's client secret at the introspection endpoint (surrounding
    /// whitespace ignored); never a flag value, so that it shows in no process list.
    #[arg(long, value_name = "FILE", requires = "oauth_introspection_url")]
    pub(crate) oauth_client_secret_file: Option<PathBuf>,
    /// Sign capability links (download URLs that need no Authorization header, minted for MCP Apps
    /// views) with the bytes of FILE, at least 32 (`head -c 32 /dev/urandom > FILE`); give every
    /// instance sharing a store the same file. Default: a random key per process, so links stop
    /// working at a restart and other instances do not accept them.
    #[arg(long, value_name = "FILE")]
    pub(crate) link_key_file: Option<PathBuf>,
    /// Seconds a capability link works after it was minted (at most 86400, one day).
    #[arg(long, value_name = "SECS", default_value_t = dual_server::DEFAULT_LINK_LIFETIME.as_secs(),
          value_parser = RangedU64ValueParser::<u64>::new().range(1..=dual_server::MAX_LINK_LIFETIME.as_secs()))]
    pub(crate) link_lifetime_secs: u64,
    /// For MCP Apps clients, end the tool result's summary with a CSV download link (a capability
    /// URL for the same caller). The link then sits in the model's context and the host's
    /// transcript: whoever reads those reads every row until it expires.
    #[arg(long)]
    pub(crate) result_download_link: bool,
    /// Serve metrics in the Prometheus text format at http://ADDR/metrics, on a listener of its own
    /// (default: off, and nothing is recorded). It asks for no token: bind it to loopback or a
    /// private interface. docs/METRICS.md lists the metrics.
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics_addr: Option<SocketAddr>,
    /// Most connections open at once on the metrics listener (which shares the header, idle and
    /// stall timeouts).
    #[arg(long, value_name = "N", default_value_t = serve::DEFAULT_METRICS_MAX_CONNECTIONS,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    pub(crate) metrics_max_connections: usize,
}

/// The OAuth options of `--oauth-*`, when `--oauth-issuer` is given.
pub(crate) fn oauth_options(
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
pub(crate) struct ReportArgs {
    /// The MCP endpoint, e.g. http://127.0.0.1:8080/mcp.
    #[arg(long, value_name = "URL")]
    pub(crate) mcp: String,
    /// The SQL for the `query` tool (one read-only SELECT).
    #[arg(long, value_name = "SQL")]
    pub(crate) sql: String,
    /// Write every row to FILE as CSV instead of printing a table.
    #[arg(long, value_name = "FILE")]
    pub(crate) csv: Option<PathBuf>,
    /// Rows of the printed table.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub(crate) rows: usize,
    /// Bearer token for a server started with --auth-tokens (default: the environment variable
    /// DUAL_DEMO_TOKEN, which keeps it out of the process list).
    #[arg(long, value_name = "TOKEN")]
    pub(crate) token: Option<String>,
}
