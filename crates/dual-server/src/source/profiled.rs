//! The column profile of a snapshot: from its manifest once written; while it is written, from the
//! run's progress on this instance, or from the partial manifest the run publishes for the others
//! (docs/DESIGN.md §4, *The column profile*).

use std::sync::Arc;

use dual_core::ResourceRecord;
use dual_core::profile::Profile;
use dual_spool::{Manifest, Spool, SpoolError};

use crate::ServerError;
use crate::inner::Inner;

/// Why a finished snapshot has no profile.
const STORED_WITHOUT: &str = "its snapshot was written by a server that computes no column profiles";

/// The profile of `record`'s snapshot: complete once written, the rows so far while being written
/// (`NOT_READY` while nothing is profiled yet).
pub(crate) async fn profile(
    inner: &Inner,
    spool: &Spool,
    record: &ResourceRecord,
) -> Result<Arc<Profile>, ServerError> {
    let id = record.id;
    let not_ready = || ServerError::NotReady {
        rows: record.total_count,
    };
    if record.is_running() {
        if let Some(progress) = inner.runs.progress(id) {
            let profile = progress.borrow().profile.clone();
            return match profile {
                Some(profile) => Ok(profile),
                None if !inner.config.column_profile => Err(ServerError::NoProfile {
                    reason: "this server computes no column profiles",
                }),
                None => Err(not_ready()),
            };
        }
        // Another instance writes it; it may have finished since the record was read.
        match spool.manifest(id).await {
            Ok(manifest) => {
                return annexed(&manifest)?.ok_or(ServerError::NoProfile {
                    reason: STORED_WITHOUT,
                });
            }
            Err(error) if error.is_not_found() => {}
            Err(error) => return Err(ServerError::spool(error)),
        }
        let partial = spool.partial_manifest(id).await.map_err(ServerError::spool)?;
        return match partial.as_ref().map(annexed).transpose()?.flatten() {
            Some(profile) => Ok(profile),
            None => Err(not_ready()),
        };
    }
    let manifest = spool.manifest(id).await.map_err(ServerError::spool)?;
    annexed(&manifest)?.ok_or(ServerError::NoProfile {
        reason: STORED_WITHOUT,
    })
}

/// The profile a manifest carries as its annex, if any.
fn annexed(manifest: &Manifest) -> Result<Option<Arc<Profile>>, ServerError> {
    let Some(annex) = manifest.annex() else {
        return Ok(None);
    };
    serde_json::from_slice(annex)
        .map(|p| Some(Arc::new(p)))
        .map_err(|_| {
            ServerError::spool(SpoolError::Corrupt {
                id: manifest.id(),
                reason: "profile",
            })
        })
}
