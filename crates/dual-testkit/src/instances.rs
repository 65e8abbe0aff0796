//! Server instances of one test sharing a store and a spool in this process, as behind a load
//! balancer.

use std::sync::Arc;

use dual_server::{DualResponseServer, DualResponseServerBuilder};
use dual_spool::{MemorySpool, Spool};
use dual_store::{MemoryStore, ResourceStore};

use crate::{BreakableStore, InProcessShared};

/// Two instances over one [`MemoryStore`] (through a [`BreakableStore`] pretending to be shared,
/// never broken) and one memory spool ([`InProcessShared`]). Each starts from a builder holding the
/// base URL `http://127.0.0.1:1/resources` (nothing listens there), the store and the spool;
/// `configure` adds the rest (its executors, say) before it is built.
///
/// # Panics
///
/// When the spool cannot be made or `configure` leaves an invalid configuration.
pub fn two(
    configure: impl Fn(DualResponseServerBuilder) -> DualResponseServerBuilder,
) -> (DualResponseServer, DualResponseServer) {
    let store: Arc<dyn ResourceStore> = Arc::new(MemoryStore::new());
    let spool = Spool::new(InProcessShared(
        MemorySpool::new().unwrap_or_else(|e| panic!("a memory spool: {e}")),
    ));
    let instance = || {
        configure(
            DualResponseServer::builder()
                .base_url("http://127.0.0.1:1/resources")
                .store(BreakableStore::wrapping(Arc::clone(&store), "unused").pretending_shared())
                .spool(spool.clone()),
        )
        .build()
        .unwrap_or_else(|e| panic!("valid configuration: {e}"))
    };
    (instance(), instance())
}
