//! A bucket of one test on the S3-compatible server of [`S3`] (feature `s3`): created empty, seen
//! through a spool of the test's own, and removed with everything in it when the test ends. Also the
//! `AWS_*` environment that points a child process at it.
//!
//! ```no_run
//! use dual_testkit::s3::Bucket;
//!
//! # async fn demo() {
//! let bucket = Bucket::create("dual-example").await;
//! let spool = bucket.spool("snapshots");
//! let outcome = tokio::spawn(async move {
//!     // … the test, on `spool` …
//!     drop(spool);
//! })
//! .await;
//! bucket.finish(outcome).await;
//! # }
//! ```

use std::net::SocketAddr;

use dual_core::ResourceId;
use dual_spool::{ObjectStoreSpool, S3SpoolBuilder};
use futures_util::{StreamExt, TryStreamExt};
use object_store::ObjectStore;
use object_store::path::Path;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::services::S3;

/// The access key a bucket's spool (and a child of [`Bucket::env`]) uses when the environment has
/// none (moto takes any).
pub const ACCESS_KEY_ID: &str = "dual-test";
/// The secret used then: tests check that no log line carries it.
pub const SECRET_ACCESS_KEY: &str = "dual-test-secret-3f9a";

/// A bucket created empty for one test; [`Bucket::finish`] removes it with everything in it.
#[derive(Debug, Clone)]
pub struct Bucket {
    name: String,
    addr: SocketAddr,
}

impl Bucket {
    /// Creates `{prefix}-<ulid>` with an unsigned `PUT /bucket` (moto accepts it); fails the test,
    /// saying how to start the server, when it is unreachable.
    pub async fn create(prefix: &str) -> Self {
        let _ = S3.require();
        let addr = S3.addr().unwrap_or_else(|e| S3.unreachable(e));
        let name = format!("{prefix}-{}", ResourceId::new().to_string().to_lowercase());
        match http(addr, "PUT", &format!("/{name}")).await {
            Ok(200) => Self { name, addr },
            Ok(status) => S3.unreachable(format_args!("creating bucket {name}: HTTP {status}")),
            Err(e) => S3.unreachable(format_args!("creating bucket {name}: {e}")),
        }
    }

    /// The bucket's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `s3://BUCKET/PREFIX`.
    #[must_use]
    pub fn url(&self, prefix: &str) -> String {
        format!("s3://{}/{prefix}", self.name)
    }

    /// The secret a child of [`Bucket::env`] signs with (never to be logged).
    #[must_use]
    pub fn secret() -> String {
        std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| SECRET_ACCESS_KEY.to_owned())
    }

    /// The environment of a child that reaches S3 at `endpoint`: `AWS_ENDPOINT_URL`, and test
    /// credentials and region unless the environment has its own.
    #[must_use]
    pub fn env(endpoint: &str) -> Vec<(&'static str, String)> {
        let mut env = vec![("AWS_ENDPOINT_URL", endpoint.to_owned())];
        if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
            env.push(("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID.to_owned()));
            env.push(("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY.to_owned()));
        }
        if no_region() {
            env.push(("AWS_REGION", "us-east-1".to_owned()));
        }
        env
    }

    /// A spool builder on this bucket under `prefix`, reaching the server at `endpoint` (say through
    /// a [`Proxy`](crate::proxy::Proxy)), with the test credentials and region unless the
    /// environment has its own.
    pub fn builder(&self, endpoint: &str, prefix: &str) -> S3SpoolBuilder {
        let mut builder = S3SpoolBuilder::from_url(&self.url(prefix))
            .expect("an s3 URL")
            .endpoint(endpoint);
        if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
            builder = builder.credentials(ACCESS_KEY_ID, SECRET_ACCESS_KEY);
        }
        if no_region() {
            builder = builder.region("us-east-1");
        }
        builder
    }

    /// The test's own spool on this bucket under `prefix`.
    pub fn spool(&self, prefix: &str) -> ObjectStoreSpool {
        self.builder(&S3.url(), prefix).build().expect("an S3 spool")
    }

    /// The names of the objects under `prefix` (`""` for all of them), sorted.
    pub async fn objects(&self, prefix: &str) -> Vec<String> {
        let store = self.spool("").store().clone();
        let prefix = Path::from(prefix);
        let mut names: Vec<String> = store
            .list(Some(&prefix))
            .map_ok(|meta| meta.location.to_string())
            .try_collect()
            .await
            .expect("listing the bucket");
        names.sort();
        names
    }

    /// Removes every object and the bucket, then fails the test if `outcome` is a panic.
    pub async fn finish(self, outcome: Result<(), tokio::task::JoinError>) {
        self.remove().await;
        if let Err(e) = outcome {
            std::panic::resume_unwind(e.into_panic());
        }
    }

    async fn remove(&self) {
        let store = self.spool("").store().clone();
        let locations = store.list(None).map_ok(|meta| meta.location).boxed();
        let deleted: Vec<_> = store.delete_stream(locations).collect().await;
        assert!(
            deleted.iter().all(Result::is_ok),
            "emptying {}: {deleted:?}",
            self.name
        );
        let status = http(self.addr, "DELETE", &format!("/{}", self.name)).await;
        assert!(
            matches!(status, Ok(204 | 200)),
            "removing bucket {}: {status:?}",
            self.name
        );
    }
}

fn no_region() -> bool {
    std::env::var_os("AWS_REGION").is_none() && std::env::var_os("AWS_DEFAULT_REGION").is_none()
}

/// The status of an unsigned HTTP/1.1 request with no body.
async fn http(addr: SocketAddr, method: &str, path: &str) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect(addr).await?;
    let request =
        format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    let status = response
        .get(9..12)
        .and_then(|s| std::str::from_utf8(s).ok()?.parse().ok());
    status.ok_or_else(|| std::io::Error::other("not an HTTP response"))
}
