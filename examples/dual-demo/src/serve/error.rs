//! [`ServeError`]: why `dual-demo serve` could not start.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::MetricsError;
use crate::dataset;
use crate::spool::SpoolSpecError;
use crate::store::StoreSpecError;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The dataset could not be generated.
    #[error(transparent)]
    Dataset(#[from] dataset::DatasetError),
    /// The database could not be opened.
    #[error("cannot open the SQLite database {path}: {source}")]
    Database {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// `--store` names no known backend, or the store cannot be reached.
    #[error(transparent)]
    Store(#[from] StoreSpecError),
    /// The server configuration was refused.
    #[error(transparent)]
    Build(#[from] dual_server::ServerBuildError),
    /// `--spool` names no known spool, or the spool cannot be set up or reached.
    #[error(transparent)]
    Spool(#[from] SpoolSpecError),
    /// A limit of [`ServeOptions`](super::ServeOptions) is zero.
    #[error("`{0}` must be greater than zero")]
    Limit(&'static str),
    /// The metrics recorder could not be installed.
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    /// Binding the address failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
}
