//! The [`DualResponseServer`] a [`ServeOptions`] describes, but for its executors: the store and the
//! spool from their URLs, every limit, snapshots, the sweeper and the link key.

use dual_server::{DualResponseServer, DualResponseServerBuilder};

use super::{ServeError, ServeOptions};
use crate::spool::{SpoolOptions, SpoolSpec};
use crate::store::{self, StoreOptions};

/// Connects the store and the spool and configures a server builder with `options`' limits;
/// the caller adds its executors and builds.
///
/// Snapshots need a spool every instance sharing the store can read: with a shared store they are
/// on with an S3 spool, and off (every resource live, with a warning) with the memory spool. Redis
/// expires resources by itself, so with it and no snapshots the server runs no sweeper; otherwise
/// the sweeper runs every `cleanup_interval`, removing expired resources' snapshots and orphans.
pub(super) async fn builder(
    options: &ServeOptions,
    base_url: &str,
) -> Result<DualResponseServerBuilder, ServeError> {
    // Checked first: a bad `--spool` fails before anything is opened.
    let spool = SpoolSpec::parse(&SpoolOptions {
        spec: options.spool.clone(),
        memory_mb: options.spool_memory_mb,
        dir: options.spool_dir.clone(),
        max_mb: options.spool_max_mb,
        min_free_mb: options.spool_min_free_mb,
    })?;
    let opened = store::open(&StoreOptions {
        spec: options.store.clone(),
        prefix: options.store_prefix.clone(),
        timeout: options.store_timeout,
    })
    .await?;
    tracing::info!(
        store = %opened.redacted,
        prefix = options.store_prefix.as_deref().unwrap_or("(default)"),
        native_expiry = opened.native_expiry,
        "store connected"
    );
    let mut builder = DualResponseServer::builder()
        .base_url(base_url)
        .shared_store(opened.store)
        .default_expiration(options.expiration)
        .default_sample_size(options.sample_size)
        .max_sample_bytes(options.max_sample_bytes)
        .max_page_bytes(options.max_page_bytes)
        .max_read_bytes(options.max_read_bytes)
        .max_error_text_bytes(options.max_error_text_bytes)
        .max_resources(options.max_resources)
        .owner_max_bytes(options.owner_max_mb.saturating_mul(1 << 20))
        .owner_max_resources(options.owner_max_resources)
        .owner_max_queries(options.owner_max_queries)
        .owner_max_pins(options.owner_max_pins)
        .anonymous_pins(options.anonymous_pins)
        .query_time_limit(options.query_time_limit)
        .scheduler_limits(options.scheduler)
        .shutdown_grace(options.shutdown_grace);
    builder = match options.pending_after {
        Some(wait) => builder.pending_after(wait),
        None => builder.wait_for_end(),
    };
    builder = builder
        .sort_concurrency(options.sort_concurrency)
        .sort_wait(options.sort_wait)
        .sort_memory_bytes(options.sort_memory_mb.saturating_mul(1 << 20))
        .sort_max_rows(options.sort_max_rows)
        .sort_max_bytes(options.sort_max_mb.saturating_mul(1 << 20));
    // A memory spool is this process's: instances sharing a Redis or PostgreSQL store could not
    // read each other's snapshots, so with it a shared store serves every resource live.
    let shared_store = options.store.trim() != "memory";
    let snapshots = options.snapshot_max_mb > 0 && (spool.is_shared() || !shared_store);
    if shared_store && options.snapshot_max_mb > 0 && !snapshots {
        tracing::warn!("a shared store without a shared spool: snapshots are off, every resource is live");
    }
    if snapshots {
        let spool = spool.open().await?;
        tracing::info!(snapshot_max_mb = options.snapshot_max_mb, "snapshots on");
        builder = builder
            .spool(spool)
            .snapshot_max_bytes(options.snapshot_max_mb.saturating_mul(1 << 20));
    } else {
        builder = builder.without_snapshots();
    }
    // Snapshots of expired resources are removed by the sweep only, whatever the store.
    if opened.native_expiry && !snapshots {
        builder = builder.without_sweeper();
    } else {
        builder = builder.cleanup_interval(options.cleanup_interval);
    }
    builder = builder.link_lifetime(options.link_lifetime);
    match &options.link_key {
        Some(key) => builder = builder.link_key(key.clone()),
        None => tracing::info!(
            "capability links are signed with a random key of this process: they stop working at a \
             restart and other instances do not accept them (--link-key-file shares a key)"
        ),
    }
    Ok(builder)
}
