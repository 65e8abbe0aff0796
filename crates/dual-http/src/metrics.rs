//! What the handler reports through the [`metrics`] facade: requests by route, method and status,
//! and rejections by error code (and quota). Nothing is recorded until the application installs a
//! recorder (the demo's `--metrics-addr` does); docs/METRICS.md lists every metric of the workspace.
//!
//! Every label takes a value from a fixed set (never an id, an owner or a path), so a client
//! cannot grow the number of series.

use http::request::Parts;
use http::{Method, StatusCode};
use metrics::{Unit, counter, describe_counter};

use crate::HttpConfig;
use crate::rejection::Rejection;
use crate::route::{Route, route};

/// Counter, labels `route` (`item`: `/{id}`, `data`: `/{id}/data`, `none`: any other path),
/// `method` (`GET`, `HEAD`, `POST`, `PUT`, `DELETE`, `OPTIONS`, `other`) and `status` (the HTTP
/// status code): requests the handler answered.
pub const REQUESTS_TOTAL: &str = "dual_http_requests_total";
/// Counter, label `code` (the wire error code of docs/DESIGN.md §5, `not_found`, `overloaded`, …):
/// requests answered with an error.
pub const REJECTIONS_TOTAL: &str = "dual_http_rejections_total";
/// Counter, label `quota` (`spool_bytes`, `owner_pins`, …): requests refused with
/// `quota_exceeded`, by the quota reached.
pub const QUOTA_REJECTIONS_TOTAL: &str = "dual_http_quota_rejections_total";

/// Registers the descriptions of the handler's metrics with the installed recorder; call it once,
/// after installing the recorder.
pub fn describe() {
    describe_counter!(
        REQUESTS_TOTAL,
        Unit::Count,
        "REST API requests answered, by route (item, data, none), method and status"
    );
    describe_counter!(
        REJECTIONS_TOTAL,
        Unit::Count,
        "REST API requests answered with an error, by wire error code"
    );
    describe_counter!(
        QUOTA_REJECTIONS_TOTAL,
        Unit::Count,
        "REST API requests refused with quota_exceeded, by quota"
    );
}

/// The request whose head is `parts` was answered with `status`.
pub(crate) fn request(config: &HttpConfig, parts: &Parts, status: StatusCode) {
    let route = match route(&config.prefix, parts.uri.path()) {
        Some(Route::Item(_)) => "item",
        Some(Route::Data(_)) => "data",
        None => "none",
    };
    counter!(
        REQUESTS_TOTAL,
        "route" => route,
        "method" => method(&parts.method),
        "status" => status.as_u16().to_string(),
    )
    .increment(1);
}

/// A request was answered with `rejection`.
pub(crate) fn rejected(rejection: &Rejection) {
    counter!(REJECTIONS_TOTAL, "code" => rejection.code().as_str()).increment(1);
    if let Rejection::QuotaExceeded { quota, .. } = rejection {
        counter!(QUOTA_REJECTIONS_TOTAL, "quota" => *quota).increment(1);
    }
}

/// The method's label: the API's methods by name, anything else (extension methods included) `other`.
fn method(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use dual_server::{CreateResponse, DualResponseServer};
    use dual_testkit::executor::Numbers;
    use dual_testkit::metrics::Captured;
    use http::Request;
    use http_body_util::Full;
    use serde_json::json;

    use super::*;
    use crate::DualHttp;

    fn labels<'a>(route: &'a str, method: &'a str, status: &'a str) -> [(&'static str, &'a str); 3] {
        [("route", route), ("method", method), ("status", status)]
    }

    async fn send(handler: &DualHttp, method: &str, path: &str, body: &'static str) -> u16 {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(body.as_bytes())))
            .unwrap_or_else(|e| panic!("{e}"));
        handler.handle(request).await.status().as_u16()
    }

    #[tokio::test]
    async fn requests_are_counted_by_route_method_and_status() {
        let captured = Captured::new();
        let _local = captured.local();
        describe();
        let server = DualResponseServer::builder()
            .base_url("http://localhost/resources")
            .executor("numbers", Numbers::new())
            .without_sweeper()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let id = server
            .create_response(CreateResponse::new("numbers", json!({"n": 20})))
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .id;
        let handler = DualHttp::builder(server).prefix("/resources").build();
        let item = format!("/resources/{id}");
        let missing = format!("/resources/{}", dual_core::ResourceId::new());
        assert_eq!(send(&handler, "POST", &item, "{}").await, 200);
        assert_eq!(send(&handler, "POST", &item, r#"{"limit": 5}"#).await, 200);
        assert_eq!(send(&handler, "GET", &format!("{item}/data"), "").await, 200);
        assert_eq!(send(&handler, "GET", &missing, "").await, 404);
        assert_eq!(send(&handler, "GET", "/elsewhere/x", "").await, 404);
        assert_eq!(send(&handler, "BREW", &item, "").await, 405);
        assert_eq!(send(&handler, "POST", &item, r#"{"page": 2}"#).await, 400);
        assert_eq!(send(&handler, "DELETE", &item, "").await, 204);

        for (expected, route, method, status) in [
            (2, "item", "POST", "200"),
            (1, "data", "GET", "200"),
            (1, "item", "GET", "404"),
            (1, "none", "GET", "404"),
            (1, "item", "other", "405"),
            (1, "item", "POST", "400"),
            (1, "item", "DELETE", "204"),
        ] {
            let labels = labels(route, method, status);
            assert_eq!(captured.counter(REQUESTS_TOTAL, &labels), expected, "{labels:?}");
        }
        for (expected, code) in [
            (2, "not_found"),
            (1, "method_not_allowed"),
            (1, "invalid_request"),
            (0, "overloaded"),
        ] {
            assert_eq!(
                captured.counter(REJECTIONS_TOTAL, &[("code", code)]),
                expected,
                "{code}"
            );
        }
        // No label ever carries the id or the path.
        assert!(
            captured
                .series()
                .iter()
                .all(|series| !series.contains(&id.to_string()))
        );
        assert!(captured.description(REQUESTS_TOTAL).is_some());
    }

    #[test]
    fn quota_rejections_name_the_quota() {
        let captured = Captured::new();
        let _local = captured.local();
        rejected(&Rejection::QuotaExceeded {
            quota: "owner_pins",
            limit: 3,
            retry_after_secs: 30,
        });
        assert_eq!(
            captured.counter(REJECTIONS_TOTAL, &[("code", "quota_exceeded")]),
            1
        );
        assert_eq!(
            captured.counter(QUOTA_REJECTIONS_TOTAL, &[("quota", "owner_pins")]),
            1
        );
    }
}
