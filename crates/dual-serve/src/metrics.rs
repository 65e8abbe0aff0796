//! `serve --metrics-addr`: the process's metrics in the Prometheus text format.
//!
//! The libraries report through the `metrics` facade (`dual_http::metrics`, `dual_server::metrics`,
//! `dual_spool::metrics`); nothing is recorded until [`install`] sets the Prometheus recorder as the
//! process's global recorder, which `serve` does only when `--metrics-addr` is given. The listener
//! that serves `GET /metrics` is [`super::metrics_endpoint`]. docs/METRICS.md lists every metric.

use std::sync::{Mutex, PoisonError};

use http::StatusCode;
use metrics::{Unit, counter, describe_counter};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

/// Counter, labels `endpoint` (`mcp`, `rest`, `other`) and `status`: every request the
/// listener answered, those refused before dual-http or rmcp saw them (`401`, `408`, `404`)
/// included.
pub const REQUESTS_TOTAL: &str = "dual_requests_total";

/// The recorder installed by this process, if any: installed once, shared by every server the
/// process starts (the in-process tests start several).
static INSTALLED: Mutex<Option<PrometheusHandle>> = Mutex::new(None);

/// The Prometheus recorder could not be installed.
#[derive(Debug, thiserror::Error)]
#[error("cannot install the metrics recorder: {0}")]
pub struct MetricsError(#[source] metrics_exporter_prometheus::BuildError);

/// Installs the Prometheus recorder as the process's global `metrics` recorder (once; later calls
/// return the same handle) and registers every metric's description.
///
/// # Errors
/// [`MetricsError`] when another global recorder is installed already.
pub(super) fn install() -> Result<PrometheusHandle, MetricsError> {
    let mut installed = INSTALLED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(handle) = installed.as_ref() {
        return Ok(handle.clone());
    }
    let handle = PrometheusBuilder::new()
        .install_recorder()
        .map_err(MetricsError)?;
    dual_http::metrics::describe();
    dual_server::metrics::describe();
    dual_server::dual_spool::metrics::describe();
    describe_counter!(
        REQUESTS_TOTAL,
        Unit::Count,
        "Requests the listener answered, by endpoint (mcp, rest, other) and status"
    );
    *installed = Some(handle.clone());
    Ok(handle)
}

/// Which part of the server a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Endpoint {
    /// `/mcp`.
    Mcp,
    /// `/resources/…`.
    Rest,
    /// Anything else.
    Other,
}

impl Endpoint {
    /// The endpoint of a request for `path`.
    pub(super) fn of(path: &str) -> Self {
        let below = |prefix: &str| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        if below(super::MCP_PATH) {
            Self::Mcp
        } else if below(super::REST_PREFIX) {
            Self::Rest
        } else {
            Self::Other
        }
    }

    const fn as_str(self) -> &'static str {
        match self {
            Self::Mcp => "mcp",
            Self::Rest => "rest",
            Self::Other => "other",
        }
    }
}

/// A request for `endpoint` was answered with `status`.
pub(super) fn answered(endpoint: Endpoint, status: StatusCode) {
    counter!(
        REQUESTS_TOTAL,
        "endpoint" => endpoint.as_str(),
        "status" => dual_http::metrics::status_label(status),
    )
    .increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_by_path() {
        for (path, endpoint) in [
            ("/mcp", Endpoint::Mcp),
            ("/mcp/", Endpoint::Mcp),
            ("/resources/01J", Endpoint::Rest),
            ("/resources", Endpoint::Rest),
            ("/resourcesx", Endpoint::Other),
            ("/mcpx", Endpoint::Other),
            ("/", Endpoint::Other),
            ("/metrics", Endpoint::Other),
        ] {
            assert_eq!(Endpoint::of(path), endpoint, "{path}");
        }
    }
}
