//! `/{id}/view`: the result view as a page of the REST API, and the headers it is served with.

use std::sync::LazyLock;

use http::Response;
use http::header::{self, HeaderValue};

use crate::ResponseBody;

/// The page: [`dual_view::rest_page`], made once; without the Parquet download when this build
/// cannot produce Parquet.
static PAGE: LazyLock<String> = LazyLock::new(|| {
    let page = dual_view::rest_page();
    if cfg!(feature = "parquet") {
        page
    } else {
        dual_view::without_parquet(&page)
    }
});

/// The page's Content-Security-Policy: nothing but the view's own inline script and style, its
/// REST reads (`connect-src 'self'`) and `data:` images; no framing, no forms, no `<base>`.
static CSP: LazyLock<String> = LazyLock::new(|| {
    format!(
        "default-src 'none'; script-src {}; style-src {}; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        dual_view::SCRIPT_HASH,
        dual_view::STYLE_HASH
    )
});

/// The 200 of `GET /{id}/view`: the page with its CSP, `Referrer-Policy: no-referrer` and
/// `Content-Length` (`render` adds `Cache-Control: no-store` and `nosniff`, as to every response).
pub(crate) fn page() -> Response<ResponseBody> {
    let mut out = Response::new(ResponseBody::full(bytes::Bytes::from_static(PAGE.as_bytes())));
    let headers = out.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(PAGE.len()));
    if let Ok(csp) = HeaderValue::from_str(&CSP) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_policy_is_a_valid_header_naming_both_hashes() {
        let csp = http::HeaderValue::from_str(&super::CSP);
        assert!(csp.is_ok(), "{}", *super::CSP);
        assert!(super::CSP.contains(&format!("script-src {};", dual_view::SCRIPT_HASH)));
        assert!(super::CSP.contains(&format!("style-src {};", dual_view::STYLE_HASH)));
        assert!(super::PAGE.contains(dual_view::REST_TRANSPORT_MARKER));
        assert_eq!(
            super::PAGE.contains(dual_view::PARQUET_BUTTON),
            cfg!(feature = "parquet")
        );
    }
}
