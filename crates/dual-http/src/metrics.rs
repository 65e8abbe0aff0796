//! What the handler reports through the [`metrics`] facade: requests by route, method and status,
//! and rejections by error code (and quota). Nothing is recorded until the application installs a
//! recorder (the demo's `--metrics-addr` does); docs/METRICS.md lists every metric of the workspace.
//!
//! Every label takes a value from a fixed set (never an id, an owner or a path), so a client
//! cannot grow the number of series.

use http::request::Parts;
use http::{Method, StatusCode};
use std::sync::OnceLock;

use metrics::{Key, Label, Level, Metadata, SharedString, Unit, counter, describe_counter};

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
        Some(Route::Item(_)) => 0,
        Some(Route::Data(_)) => 1,
        Some(Route::View(_)) => 2,
        Some(Route::Profile(_)) => 3,
        Some(Route::Query(_)) => 4,
        None => 5,
    };
    let method = method(&parts.method);
    let key = ANSWERED
        .binary_search_by_key(&status.as_u16(), |&(code, _)| code)
        .ok()
        .and_then(|status| request_keys().get((route * METHODS.len() + method) * ANSWERED.len() + status));
    match key {
        Some(key) => {
            metrics::with_recorder(|recorder| recorder.register_counter(key, &METADATA)).increment(1);
        }
        None => counter!(
            REQUESTS_TOTAL,
            "route" => ROUTES[route],
            "method" => METHODS[method],
            "status" => status_label(status),
        )
        .increment(1),
    }
}

/// The `route` label's values, in the order of [`request_keys`].
const ROUTES: [&str; 6] = ["item", "data", "view", "profile", "query", "none"];
/// The `method` label's values, in the order of [`request_keys`] (see [`method`]).
const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "other"];
/// The status codes the handler answers with, and their labels, in ascending order.
const ANSWERED: [(u16, &str); 24] = [
    (200, "200"),
    (201, "201"),
    (204, "204"),
    (206, "206"),
    (304, "304"),
    (400, "400"),
    (401, "401"),
    (403, "403"),
    (404, "404"),
    (405, "405"),
    (406, "406"),
    (408, "408"),
    (409, "409"),
    (410, "410"),
    (411, "411"),
    (412, "412"),
    (413, "413"),
    (415, "415"),
    (416, "416"),
    (422, "422"),
    (429, "429"),
    (500, "500"),
    (503, "503"),
    (504, "504"),
];

/// What `counter!` would give its key here.
static METADATA: Metadata<'static> = Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// The request counter's key for every route × method × answered status, built once (672 keys):
/// counting a request then builds no label vector and hashes nothing, recorder or not.
fn request_keys() -> &'static [Key] {
    static KEYS: OnceLock<Box<[Key]>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut keys = Vec::with_capacity(ROUTES.len() * METHODS.len() * ANSWERED.len());
        for route in ROUTES {
            for method in METHODS {
                for (_, status) in ANSWERED {
                    let labels = [("route", route), ("method", method), ("status", status)];
                    let labels = labels.map(|(name, value)| Label::from_static_parts(name, value));
                    keys.push(Key::from_parts(REQUESTS_TOTAL, labels.to_vec()));
                }
            }
        }
        keys.into_boxed_slice()
    })
}

/// The `status` label of a response: the code as text, without an allocation for the codes the
/// handler answers with.
#[must_use]
pub fn status_label(status: StatusCode) -> SharedString {
    let code = status.as_u16();
    match ANSWERED.binary_search_by_key(&code, |&(c, _)| c) {
        Ok(at) => SharedString::const_str(ANSWERED[at].1),
        Err(_) => SharedString::from_owned(code.to_string()),
    }
}

/// A request was answered with `rejection`.
pub(crate) fn rejected(rejection: &Rejection) {
    counter!(REJECTIONS_TOTAL, "code" => rejection.code().as_str()).increment(1);
    if let Rejection::QuotaExceeded { quota, .. } = rejection {
        counter!(QUOTA_REJECTIONS_TOTAL, "quota" => *quota).increment(1);
    }
}

/// The index of the method's label in [`METHODS`]: the API's methods by name, anything else
/// (extension methods included) `other`.
fn method(method: &Method) -> usize {
    match *method {
        Method::GET => 0,
        Method::HEAD => 1,
        Method::POST => 2,
        Method::PUT => 3,
        Method::DELETE => 4,
        Method::OPTIONS => 5,
        _ => 6,
    }
}

#[cfg(test)]
mod tests {
    use dual_testkit::metrics::Captured;

    use super::*;

    #[test]
    fn status_labels_are_the_codes_as_text() {
        for code in 100..=999 {
            let status = StatusCode::from_u16(code).unwrap_or_else(|e| panic!("{code}: {e}"));
            assert_eq!(&*status_label(status), code.to_string(), "{code}");
        }
    }

    #[test]
    fn requests_are_counted_by_route_method_and_status() {
        let captured = Captured::new();
        let _local = captured.local();
        let config = HttpConfig::default();
        let cases = [
            ("POST", "/abc", 200, ["item", "POST", "200"]),
            ("GET", "/abc/data", 404, ["data", "GET", "404"]),
            ("PATCH", "/abc/view", 405, ["view", "other", "405"]),
            ("OPTIONS", "/a/b/c", 204, ["none", "OPTIONS", "204"]),
            // A status outside the prebuilt keys.
            ("GET", "/abc", 418, ["item", "GET", "418"]),
        ];
        for (method, path, status, _) in cases {
            let head = http::Request::builder()
                .method(method)
                .uri(path)
                .body(())
                .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
            let status = StatusCode::from_u16(status).unwrap_or_else(|e| panic!("{status}: {e}"));
            request(&config, &head.into_parts().0, status);
        }
        request(&config, &http::Request::new(()).into_parts().0, StatusCode::OK);
        for (_, _, _, [route, method, status]) in cases {
            let labels = [("route", route), ("method", method), ("status", status)];
            assert_eq!(captured.counter(REQUESTS_TOTAL, &labels), 1, "{labels:?}");
        }
        let root = [("route", "none"), ("method", "GET"), ("status", "200")];
        assert_eq!(captured.counter(REQUESTS_TOTAL, &root), 1);
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
