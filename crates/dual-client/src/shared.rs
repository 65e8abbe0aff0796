//! What every clone of a [`DualResponseClient`](crate::DualResponseClient) shares: the connection
//! pool and the settings the builder collected.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;

use crate::retry::RetryPolicy;

pub(crate) type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// The connection pool and settings of a client.
pub(crate) struct Shared {
    pub(crate) http: HttpClient,
    pub(crate) base_url: Option<String>,
    pub(crate) headers: HeaderMap,
    pub(crate) timeout: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_body_bytes: usize,
}

/// Shows header names only: values may be credentials.
pub(crate) struct HeaderNames<'a>(pub(crate) &'a HeaderMap);

impl fmt::Debug for HeaderNames<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}
