//! A demo server in this process (`dual_response_server::serve::start`), for tests that set [`ServeOptions`]
//! directly or reach its [`DualResponseServer`](dual_server::DualResponseServer): on the small
//! dataset, optionally on a shared store under a [`Namespace`] of its own.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dual_response_server::serve::{self, DatabaseOptions, Running, ServeOptions};

use super::{Backend, Namespace, TempDb, within};

/// A running in-process server and what it needs; stop it with [`InProcess::stop`].
#[derive(Debug)]
pub(crate) struct InProcess {
    pub(crate) running: Running,
    /// Dropped after the server stopped: removes the dataset.
    db: TempDb,
    /// Dropped after the server stopped: removes every key or table the server wrote.
    namespace: Option<Namespace>,
}

impl InProcess {
    /// Starts a server on 127.0.0.1 with the small dataset, the memory store (`backend` `None`) or
    /// `backend` under a fresh namespace, and `configure` applied last.
    pub(crate) async fn start(backend: Option<Backend>, configure: impl FnOnce(&mut ServeOptions)) -> Self {
        Self::start_with_database(backend, configure, |_| {}).await
    }

    /// [`InProcess::start`], with `configure_database` applied to the database's options too.
    pub(crate) async fn start_with_database(
        backend: Option<Backend>,
        configure: impl FnOnce(&mut ServeOptions),
        configure_database: impl FnOnce(&mut DatabaseOptions),
    ) -> Self {
        let namespace = match backend {
            Some(backend) => Some(Namespace::new(backend).await),
            None => None,
        };
        let db = TempDb::new();
        let mut options = ServeOptions::new(SocketAddr::from(([127, 0, 0, 1], 0)));
        let mut database = DatabaseOptions::file(db.path());
        configure_database(&mut database);
        if let (Some(backend), Some(namespace)) = (backend, &namespace) {
            options.store = backend.url();
            options.store_prefix = Some(namespace.prefix().to_owned());
        }
        configure(&mut options);
        let running = serve::start(&options, &database)
            .await
            .expect("the server starts")
            .running;
        Self {
            running,
            db,
            namespace,
        }
    }

    /// Runs `test` within `limit` against a server on the memory store with `configure` applied
    /// (see [`InProcess::start`]), then stops it.
    pub(crate) async fn run(
        limit: Duration,
        configure: impl FnOnce(&mut ServeOptions),
        test: impl AsyncFnOnce(&Self),
    ) {
        within(limit, async {
            let server = Self::start(None, configure).await;
            test(&server).await;
            server.stop().await;
        })
        .await;
    }

    /// The bound address.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.running.addr
    }

    /// The MCP endpoint's URL.
    pub(crate) fn mcp_url(&self) -> String {
        self.running.mcp_url()
    }

    /// Runs `dual-response report` for `sql` against this server (a 5-row table, or every row to `csv`),
    /// with `token` sent to MCP and REST alike.
    pub(crate) async fn report(
        &self,
        sql: &str,
        csv: Option<PathBuf>,
        token: Option<&str>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        dual_response_server::report::run(&dual_response_server::report::ReportOptions {
            mcp: self.mcp_url(),
            sql: sql.to_owned(),
            csv,
            rows: 5,
            token: token.map(str::to_owned),
        })
        .await
    }

    /// The dataset's path.
    pub(crate) fn db(&self) -> PathBuf {
        self.db.path()
    }

    /// The dataset's directory, for further files of the test; removed when the server stops.
    pub(crate) fn dir(&self) -> &Path {
        self.db.dir()
    }

    /// Shuts the server down gracefully, then removes the dataset and the namespace.
    pub(crate) async fn stop(self) {
        let Self {
            running,
            db,
            namespace,
        } = self;
        running.shutdown().await;
        drop(namespace);
        drop(db);
    }
}
