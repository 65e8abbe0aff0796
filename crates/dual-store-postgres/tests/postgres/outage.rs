//! Outages: the store reaches PostgreSQL through a proxy the test cuts and restores. While cut, every call
//! fails with `StoreError::Unavailable` within a bound and nothing panics; after the restore the same
//! store works again by itself.

use dual_testkit::store::outage::{self, Outage};

use crate::support::{Namespace, POSTGRES};

/// Puts a store with a fresh table, reaching PostgreSQL through the proxy, through `which`.
async fn check(which: Outage) {
    let namespace = Namespace::new();
    outage::run(POSTGRES, which, |url| {
        namespace
            .builder_at(url)
            .pool_size(4)
            .operation_timeout(outage::TIMEOUT)
            .connect_timeout(outage::TIMEOUT)
            .connect()
    })
    .await;
}

dual_testkit::outage_tests!(check);
