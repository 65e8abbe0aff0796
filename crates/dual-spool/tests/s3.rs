//! The spool on a real S3-compatible server (`DUAL_TEST_S3_ENDPOINT`, by default moto at
//! `http://127.0.0.1:9000`; `bash .ci/services` starts it; feature `services`): the conformance
//! suite, two instances sharing snapshots, and outages through a fault-injection proxy. Each test
//! creates its own bucket and removes it with everything in it; when the server is unreachable the
//! tests fail, saying how to start it.
#![cfg(feature = "services")]

use std::net::SocketAddr;
use std::time::Duration;

use dual_core::ResourceId;
use dual_spool::{ObjectStoreSpool, S3SpoolBuilder, Spool};
use dual_testkit::proxy::{Mode, Proxy};
use dual_testkit::services::S3;
use dual_testkit::spool::{self as suite, outage::Bounds};
use futures_util::{StreamExt, TryStreamExt};
use object_store::ObjectStore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A bucket of one test, created empty on the server.
#[derive(Clone)]
struct Bucket {
    name: String,
    addr: SocketAddr,
}

impl Bucket {
    /// Creates `dual-spool-test-<ulid>` with an unsigned `PUT /bucket` (moto accepts it).
    async fn create() -> Self {
        let _ = S3.require();
        let addr = S3.addr().unwrap_or_else(|e| S3.unreachable(e));
        let name = format!("dual-spool-test-{}", ResourceId::new().to_string().to_lowercase());
        match http(addr, "PUT", &format!("/{name}")).await {
            Ok(200) => Self { name, addr },
            Ok(status) => S3.unreachable(format_args!("creating bucket {name}: HTTP {status}")),
            Err(e) => S3.unreachable(format_args!("creating bucket {name}: {e}")),
        }
    }

    /// A spool on this bucket under `prefix`, reaching the server at `endpoint`.
    fn builder(&self, endpoint: &str, prefix: &str) -> S3SpoolBuilder {
        let mut builder = S3SpoolBuilder::from_url(&format!("s3://{}/{prefix}", self.name))
            .expect("s3 URL")
            .endpoint(endpoint);
        if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
            builder = builder.credentials("test", "test");
        }
        if std::env::var_os("AWS_REGION").is_none() && std::env::var_os("AWS_DEFAULT_REGION").is_none() {
            builder = builder.region("us-east-1");
        }
        builder
    }

    fn spool(&self, prefix: &str) -> ObjectStoreSpool {
        self.builder(&S3.url(), prefix).build().expect("S3 spool")
    }

    /// Removes every object and the bucket, then fails the test if `outcome` is a panic.
    async fn finish(self, outcome: Result<(), tokio::task::JoinError>) {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_passes_the_conformance_suite() {
    let bucket = Bucket::create().await;
    let shared = bucket.clone();
    let outcome = tokio::spawn(async move {
        suite::run(|| {
            let spool = shared.spool(&format!("suite/{}", ResourceId::new()));
            async move { Spool::new(spool) }
        })
        .await;
    })
    .await;
    bucket.finish(outcome).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instance_b_serves_and_deletes_what_instance_a_wrote() {
    let bucket = Bucket::create().await;
    let (a, b) = (
        Spool::new(bucket.spool("shared")),
        Spool::new(bucket.spool("shared")),
    );
    let outcome = async move {
        let id = ResourceId::new();
        let rows = suite::sample_rows(50);
        let mut writer = a
            .clone()
            .with_segment_limits(suite::LIMITS)
            .writer(id)
            .await
            .expect("writer");
        for row in &rows {
            writer.append(row).await.expect("append");
        }
        let manifest = writer.finish().await.expect("finish");
        assert_eq!(b.manifest(id).await.expect("B sees the manifest"), manifest);
        let read: Vec<Vec<u8>> = b
            .read_rows(id, 0, 100)
            .await
            .expect("B reads")
            .iter()
            .map(|r| r.to_vec())
            .collect();
        assert_eq!(read, rows);
        assert!(
            b.list()
                .await
                .expect("list")
                .iter()
                .any(|s| s.id == id && s.finished)
        );
        b.delete(id).await.expect("B deletes");
        assert!(
            a.read_rows(id, 0, 1)
                .await
                .expect_err("gone for A too")
                .is_not_found()
        );
        assert!(
            a.list().await.expect("list").is_empty(),
            "no object of the snapshot is left"
        );
    };
    bucket.finish(tokio::spawn(outcome).await).await;
}

/// A failing call may take the request timeout times the tries plus slack; recovery needs a new
/// connection.
const BOUNDS: Bounds = Bounds {
    fail_within: Duration::from_secs(5),
    recover_within: Duration::from_secs(15),
};

async fn outage(mode: Mode) {
    let bucket = Bucket::create().await;
    let proxy = Proxy::start(S3.addr().expect("address")).await.expect("proxy");
    let endpoint = S3.url_through(proxy.addr()).expect("endpoint");
    let spool = bucket
        .builder(&endpoint, "outage")
        .timeout(Duration::from_millis(700))
        .connect_timeout(Duration::from_millis(500))
        .retries(1, Duration::from_secs(2))
        .build()
        .expect("S3 spool");
    let spool = Spool::new(spool);
    let result = tokio::spawn(async move {
        suite::outage::outage_and_recovery(&spool, || proxy.set(mode), || proxy.set(Mode::Open), BOUNDS)
            .await;
    })
    .await;
    bucket.finish(result).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connections_are_retryable_storage_errors_and_recover() {
    outage(Mode::Refuse).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_network_times_out_as_a_storage_error_and_recovers() {
    outage(Mode::Blackhole).await;
}
