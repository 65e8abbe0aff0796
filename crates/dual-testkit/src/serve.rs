//! A hyper service on a free loopback port, for the tests and benches that need a real socket.
//!
//! Examples meant for users serve their handler themselves (`dual-http`'s `examples/hyper_server.rs`
//! shows the bounds a public server needs); this is the bare loop a test wants.

use std::net::SocketAddr;

use http::{Request, Response};
use hyper::body::{Body, Incoming};
use hyper::service::Service;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A listener bound to `127.0.0.1` on a free port, not yet serving: its address is known before the
/// service is built (a server's `base_url` needs it).
///
/// ```
/// use dual_server::DualResponseServer;
/// use dual_testkit::serve::Loopback;
///
/// # fn main() {
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let loopback = Loopback::bind().await;
/// let base = loopback.url("/resources");
/// let server = DualResponseServer::builder().base_url(&base).build().unwrap();
/// let task = loopback.serve(dual_http::DualHttp::builder(server).prefix("/resources").build());
/// task.abort();
/// # });
/// # }
/// ```
#[derive(Debug)]
pub struct Loopback {
    listener: TcpListener,
    addr: SocketAddr,
}

impl Loopback {
    /// Binds `127.0.0.1:0`; panics when it cannot.
    pub async fn bind() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        Self { listener, addr }
    }

    /// The bound address.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://{addr}{path}`.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Serves `service` over HTTP/1.1 on every accepted connection until the task is aborted (or
    /// the runtime ends).
    pub fn serve<S, B>(self, service: S) -> JoinHandle<()>
    where
        S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError>,
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let listener = self.listener;
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let service = service.clone();
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service)
                        .await;
                });
            }
        })
    }
}
