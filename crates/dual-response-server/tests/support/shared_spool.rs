//! Instances sharing a store (a Redis prefix or a PostgreSQL schema of the test's own) and one S3
//! spool in a bucket of the test's own, removed with everything in it whatever the outcome.

use std::future::Future;
use std::time::{Duration, Instant};

use dual_testkit::s3::Bucket;
use tokio::time::sleep;

use super::{Backend, Instance, LIMIT, Namespace, TempDb, serve_command, within};

/// The spool prefix of the instances under test (the bucket is the test's own).
pub(crate) const PREFIX: &str = "shared/snapshots";
/// How long a sweep (every second here) may take to remove what it should.
const SWEPT_WITHIN: Duration = Duration::from_secs(30);

/// What every instance of one test shares: the bucket, the store's namespace and the database.
pub(crate) struct Shared {
    pub(crate) bucket: Bucket,
    pub(crate) backend: Backend,
    pub(crate) namespace: Namespace,
    pub(crate) db: TempDb,
}

impl Shared {
    /// Starts `dual-response serve` on the shared store and `--spool s3://BUCKET/PREFIX`, reaching S3 at
    /// `endpoint` through `AWS_ENDPOINT_URL`, sweeping every second.
    pub(crate) async fn instance(&self, endpoint: &str, extra: &[&str]) -> Instance {
        self.launch(serve_command(&self.db.path()), endpoint, extra).await
    }

    /// [`Shared::instance`] from `command` (a [`serve_command`] or one of its kind).
    pub(crate) async fn launch(
        &self,
        mut command: tokio::process::Command,
        endpoint: &str,
        extra: &[&str],
    ) -> Instance {
        command
            .args(["--store", &self.backend.url()])
            .args(["--store-prefix", self.namespace.prefix()])
            .args(["--spool", &self.bucket.url(PREFIX)])
            .args(["--cleanup-interval-secs", "1"])
            .args(extra)
            .envs(Bucket::env(endpoint));
        Instance::launch(command).await
    }

    /// The objects of resource `id`'s snapshot in the bucket.
    pub(crate) async fn objects_of(&self, id: &str) -> Vec<String> {
        self.bucket.objects(&format!("{PREFIX}/{id}")).await
    }

    /// Waits up to [`SWEPT_WITHIN`] until resource `id` has no object left; panics with what is left.
    pub(crate) async fn wait_swept(&self, id: &str, what: &str) {
        let started = Instant::now();
        loop {
            let left = self.objects_of(id).await;
            if left.is_empty() {
                return;
            }
            assert!(
                started.elapsed() < SWEPT_WITHIN,
                "{what}: still in the bucket after {SWEPT_WITHIN:?}: {left:?}"
            );
            sleep(Duration::from_millis(250)).await;
        }
    }
}

/// Runs `scenario` with a fresh bucket, store namespace and database, then removes the bucket with
/// everything in it whatever the outcome (the instances are killed first, with the scenario).
pub(crate) async fn with_bucket<S, F>(backend: Backend, scenario: S)
where
    S: FnOnce(Shared) -> F + Send + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    let bucket = Bucket::create("dual-demo-test").await;
    let shared = Shared {
        bucket: bucket.clone(),
        backend,
        namespace: Namespace::new(backend).await,
        db: TempDb::new(),
    };
    let outcome = tokio::spawn(async move {
        within(LIMIT, scenario(shared)).await;
    })
    .await;
    bucket.finish(outcome).await;
}
