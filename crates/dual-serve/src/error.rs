//! [`ServeError`]: why the server could not start.

use std::net::SocketAddr;

use super::MetricsError;
use crate::spool::SpoolSpecError;
use crate::store::StoreSpecError;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// `--store` names no known backend, or the store cannot be reached.
    #[error(transparent)]
    Store(#[from] StoreSpecError),
    /// The server configuration was refused.
    #[error(transparent)]
    Build(#[from] dual_server::ServerBuildError),
    /// `--spool` names no known spool, or the spool cannot be set up or reached.
    #[error(transparent)]
    Spool(#[from] SpoolSpecError),
    /// A limit of [`ServeOptions`](super::ServeOptions) is zero (its field name).
    #[error("`{0}` must be greater than zero")]
    Limit(&'static str),
    /// The metrics recorder could not be installed.
    #[error(transparent)]
    Metrics(#[from] MetricsError),
    /// The OAuth options cannot work (a resource that is not a usable URL, no HTTP client).
    #[error(transparent)]
    OAuth(#[from] crate::auth::OAuthConfigError),
    /// Binding the address failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
}
