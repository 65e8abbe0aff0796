//! Snapshots live exactly as long as they should: unfinished ones are never served, deletes and
//! sweeps remove everything, abandoned writers clean up.

use std::collections::HashSet;

use dual_core::ResourceId;

use super::support::{listed, read, sample_rows, small, until_unlisted, write};
use dual_spool::{Spool, SpoolError};

fn not_found<T: std::fmt::Debug>(result: Result<T, SpoolError>, id: ResourceId, what: &str) {
    assert!(
        matches!(&result, Err(SpoolError::NotFound(found)) if *found == id),
        "{what}: {result:?}"
    );
}

/// While a writer runs, its segments are stored but the snapshot is not readable; it is once
/// finished.
pub async fn unfinished_is_not_served(spool: Spool) {
    let spool = small(&spool);
    let id = ResourceId::new();
    let rows = sample_rows(20);
    let mut writer = spool.writer(id).await.expect("writer");
    for row in &rows {
        writer.append(row).await.expect("append");
    }
    assert_eq!(writer.rows(), 20);
    assert_eq!(
        listed(&spool, id).await,
        Some(false),
        "segments were stored while writing"
    );
    not_found(spool.read_rows(id, 0, 1).await, id, "read_rows while writing");
    not_found(spool.manifest(id).await, id, "manifest while writing");
    not_found(spool.cursor(id, 0, None).await, id, "cursor while writing");
    writer.finish().await.expect("finish");
    assert_eq!(listed(&spool, id).await, Some(true));
    assert_eq!(read(&spool, id, 0, 100).await, rows);
}

/// A writer's partial manifest: on a shared backend, the segments stored so far are readable
/// through it (and only those) while the snapshot is not finished, it is replaced as the writer goes
/// on, and `delete` removes it; a process-local backend keeps none (readers elsewhere do not exist).
pub async fn partial_manifest_serves_the_stored_rows(spool: Spool) {
    let spool = small(&spool);
    let id = ResourceId::new();
    let rows = sample_rows(40);
    let mut writer = spool.writer(id).await.expect("writer");
    for row in &rows[..20] {
        writer.append(row).await.expect("append");
    }
    let stored = writer.stored().clone();
    assert!(
        stored.rows() > 0 && stored.rows() <= 20,
        "some segments are stored: {}",
        stored.rows()
    );
    spool.publish_partial(&stored).await.expect("publish_partial");
    let partial = spool.partial_manifest(id).await.expect("partial_manifest");
    if !spool.is_shared() {
        assert_eq!(partial, None, "a process-local backend keeps no partial manifest");
        return;
    }
    assert_eq!(
        partial.as_ref(),
        Some(&stored),
        "the partial manifest as published"
    );
    let limit = usize::try_from(stored.rows()).unwrap_or(usize::MAX);
    let stored_rows = spool
        .read_rows_in(&stored, 0, limit + 5)
        .await
        .expect("read_rows_in");
    let stored_rows: Vec<Vec<u8>> = stored_rows.iter().map(|row| row.to_vec()).collect();
    assert_eq!(stored_rows, rows[..limit].to_vec(), "exactly the stored rows");
    not_found(spool.manifest(id).await, id, "manifest while writing");
    assert_eq!(listed(&spool, id).await, Some(false), "not finished");

    for row in &rows[20..] {
        writer.append(row).await.expect("append");
    }
    let grown = writer.stored().clone();
    spool.publish_partial(&grown).await.expect("publish_partial");
    let partial = spool.partial_manifest(id).await.expect("partial_manifest");
    assert_eq!(
        partial.map(|m| m.rows()),
        Some(grown.rows()),
        "replaced as it grows"
    );
    writer.finish().await.expect("finish");
    assert_eq!(read(&spool, id, 0, 100).await, rows);

    spool.delete(id).await.expect("delete");
    assert_eq!(
        spool.partial_manifest(id).await.expect("partial_manifest"),
        None,
        "delete removes the partial manifest"
    );
    assert_eq!(listed(&spool, id).await, None);
}

/// `delete` removes every segment and the manifest: later reads are `NotFound`, the resource is not
/// listed, a cursor opened before fails `NotFound` on its next segment, and a second delete is fine.
pub async fn delete_removes_everything(spool: Spool) {
    let spool = small(&spool);
    let (id, other) = (ResourceId::new(), ResourceId::new());
    write(&spool, id, &sample_rows(30)).await;
    write(&spool, other, &sample_rows(5)).await;
    let mut cursor = spool.cursor(id, 0, None).await.expect("cursor");
    cursor.next().await.expect("first segment").expect("rows");
    spool.delete(id).await.expect("delete");
    not_found(spool.read_rows(id, 0, 10).await, id, "read_rows after delete");
    not_found(spool.manifest(id).await, id, "manifest after delete");
    not_found(cursor.next().await, id, "cursor after delete");
    assert_eq!(listed(&spool, id).await, None);
    spool.delete(id).await.expect("deleting nothing");
    spool
        .delete(ResourceId::new())
        .await
        .expect("deleting an unknown id");
    assert_eq!(
        read(&spool, other, 0, 10).await,
        sample_rows(5),
        "other resources stay"
    );
    // The id may be written afresh after a delete.
    write(&spool, id, &sample_rows(2)).await;
    assert_eq!(read(&spool, id, 0, 10).await, sample_rows(2));
}

/// A writer dropped before `finish` removes the segments it stored.
pub async fn abandoned_writer_leaves_nothing(spool: Spool) {
    let spool = small(&spool);
    let id = ResourceId::new();
    let mut writer = spool.writer(id).await.expect("writer");
    for row in sample_rows(50) {
        writer.append(&row).await.expect("append");
    }
    assert_eq!(listed(&spool, id).await, Some(false));
    drop(writer);
    assert!(
        until_unlisted(&spool, id).await,
        "the abandoned writer's segments are still there"
    );
    not_found(spool.read_rows(id, 0, 1).await, id, "read_rows after abandon");
    // A writer that stored nothing leaves nothing either.
    let idle = ResourceId::new();
    drop(spool.writer(idle).await.expect("writer"));
    assert_eq!(listed(&spool, idle).await, None);
}

/// The sweep removes every snapshot, finished or not, whose resource is not live, and keeps the
/// live ones, including one that is still being written.
pub async fn sweep_removes_orphans(spool: Spool) {
    let spool = small(&spool);
    let live: Vec<ResourceId> = (0..3).map(|_| ResourceId::new()).collect();
    let dead: Vec<ResourceId> = (0..3).map(|_| ResourceId::new()).collect();
    for id in live.iter().chain(&dead) {
        write(&spool, *id, &sample_rows(10)).await;
    }
    let (writing_live, writing_dead) = (ResourceId::new(), ResourceId::new());
    let mut live_writer = spool.writer(writing_live).await.expect("writer");
    let mut dead_writer = spool.writer(writing_dead).await.expect("writer");
    for row in sample_rows(20) {
        live_writer.append(&row).await.expect("append");
        dead_writer.append(&row).await.expect("append");
    }
    let is_live: HashSet<ResourceId> = live.iter().copied().chain([writing_live]).collect();
    let removed = spool
        .sweep_orphans(|id| is_live.contains(&id))
        .await
        .expect("sweep");
    assert_eq!(removed, dead.len() + 1);
    for id in &dead {
        not_found(spool.read_rows(*id, 0, 1).await, *id, "a swept snapshot");
        assert_eq!(listed(&spool, *id).await, None);
    }
    assert_eq!(listed(&spool, writing_dead).await, None);
    for id in &live {
        assert_eq!(read(&spool, *id, 0, 100).await, sample_rows(10));
    }
    live_writer.finish().await.expect("finish after a sweep");
    assert_eq!(read(&spool, writing_live, 0, 100).await, sample_rows(20));
    std::mem::drop(dead_writer);
    assert_eq!(
        spool
            .sweep_orphans(|id| is_live.contains(&id))
            .await
            .expect("sweep"),
        0
    );
}
