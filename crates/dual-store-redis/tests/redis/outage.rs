//! Outages: the store reaches Redis through a proxy the test cuts and restores. While cut, every call
//! fails with `StoreError::Unavailable` within a bound and nothing panics; after the restore the same
//! store works again by itself.

use dual_store_redis::RedisStore;
use dual_testkit::store::outage::{self, Outage};

use crate::support::{Namespace, REDIS};

/// Puts a store with a fresh key prefix, reaching Redis through the proxy, through `which`.
async fn check(which: Outage) {
    let namespace = Namespace::new();
    outage::run(REDIS, which, |url| {
        RedisStore::builder(url)
            .key_prefix(namespace.prefix())
            .operation_timeout(outage::TIMEOUT)
            .connect_timeout(outage::TIMEOUT)
            .connect()
    })
    .await;
}

dual_testkit::outage_tests!(check);
