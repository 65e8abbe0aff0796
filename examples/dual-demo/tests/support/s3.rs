//! A bucket of one test on the S3-compatible server of `DUAL_TEST_S3_ENDPOINT` (default
//! `http://127.0.0.1:9000`, moto in CI), the `AWS_*` environment that points a `dual-demo serve`
//! child at it, and the test's own view into it (a spool, the object names).

use std::net::SocketAddr;

use dual_core::ResourceId;
use dual_server::dual_spool::{ObjectStoreSpool, S3SpoolBuilder};
use dual_testkit::services::S3;
use futures_util::{StreamExt, TryStreamExt};
use object_store::ObjectStore;
use object_store::path::Path;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The access key the children get when the environment has none (moto takes any).
const ACCESS_KEY_ID: &str = "dual-demo-test";
/// The secret they get then: the tests check that no log line carries it.
pub(crate) const SECRET_ACCESS_KEY: &str = "dual-demo-test-secret-3f9a";

/// A bucket created empty for one test; [`Bucket::finish`] removes it with everything in it.
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    name: String,
    addr: SocketAddr,
}

impl Bucket {
    /// Creates `dual-demo-test-<ulid>` with an unsigned `PUT /bucket` (moto accepts it); fails the
    /// test, saying how to start the server, when it is unreachable.
    pub(crate) async fn create() -> Self {
        let _ = S3.require();
        let addr = S3.addr().unwrap_or_else(|e| S3.unreachable(e));
        let name = format!("dual-demo-test-{}", ResourceId::new().to_string().to_lowercase());
        match http(addr, "PUT", &format!("/{name}")).await {
            Ok(200) => Self { name, addr },
            Ok(status) => S3.unreachable(format_args!("creating bucket {name}: HTTP {status}")),
            Err(e) => S3.unreachable(format_args!("creating bucket {name}: {e}")),
        }
    }

    /// `s3://BUCKET/PREFIX`, the value of `--spool`.
    pub(crate) fn url(&self, prefix: &str) -> String {
        format!("s3://{}/{prefix}", self.name)
    }

    /// The secret the children sign with (never to be logged).
    pub(crate) fn secret() -> String {
        std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| SECRET_ACCESS_KEY.to_owned())
    }

    /// The environment of a child that reaches S3 at `endpoint`: `AWS_ENDPOINT_URL`, and test
    /// credentials and region unless the environment has its own.
    pub(crate) fn env(endpoint: &str) -> Vec<(&'static str, String)> {
        let mut env = vec![("AWS_ENDPOINT_URL", endpoint.to_owned())];
        if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
            env.push(("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID.to_owned()));
            env.push(("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY.to_owned()));
        }
        if std::env::var_os("AWS_REGION").is_none() && std::env::var_os("AWS_DEFAULT_REGION").is_none() {
            env.push(("AWS_REGION", "us-east-1".to_owned()));
        }
        env
    }

    /// The test's own spool on this bucket under `prefix`, as the children configure theirs.
    pub(crate) fn spool(&self, prefix: &str) -> ObjectStoreSpool {
        let mut builder = S3SpoolBuilder::from_url(&self.url(prefix))
            .expect("an s3 URL")
            .endpoint(&S3.url());
        if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
            builder = builder.credentials(ACCESS_KEY_ID, SECRET_ACCESS_KEY);
        }
        if std::env::var_os("AWS_REGION").is_none() && std::env::var_os("AWS_DEFAULT_REGION").is_none() {
            builder = builder.region("us-east-1");
        }
        builder.build().expect("an S3 spool")
    }

    /// The names of the objects under `prefix` (`""` for all of them), sorted.
    pub(crate) async fn objects(&self, prefix: &str) -> Vec<String> {
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
    pub(crate) async fn finish(self, outcome: Result<(), tokio::task::JoinError>) {
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
