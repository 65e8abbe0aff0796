//! CORS configuration: which origins may read responses, and what preflights answer.

use std::time::Duration;

use http::HeaderValue;
use http::header::{self, HeaderName};

/// Cross-origin resource sharing for the REST API, so a browser application on another origin can
/// fetch resources.
///
/// When configured, `OPTIONS` answers preflights (204 with `Access-Control-Allow-*` headers for an
/// allowed origin) and every response carries `Access-Control-Allow-Origin` for an allowed `Origin`,
/// plus `Vary: Origin`. Without it, `OPTIONS` is 405 like any other unsupported method.
///
/// ```
/// use std::time::Duration;
/// use dual_http::Cors;
/// use http::header;
///
/// let cors = Cors::allow_origins(["https://app.example.com"])
///     .expose_headers([header::RETRY_AFTER])
///     .max_age(Duration::from_secs(600));
/// assert!(cors.allows_origin("https://app.example.com"));
/// assert!(!cors.allows_origin("https://evil.example"));
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Cors {
    origins: Origins,
    allow_headers: Vec<HeaderName>,
    expose_headers: Vec<HeaderName>,
    max_age: Option<Duration>,
    allow_credentials: bool,
}

#[derive(Debug, Clone)]
enum Origins {
    Any,
    List(Vec<String>),
}

impl Cors {
    /// Any origin may read responses (`Access-Control-Allow-Origin: *`, or the request's origin when
    /// credentials are allowed).
    pub fn any() -> Self {
        Self::new(Origins::Any)
    }

    /// Only these origins (`scheme://host[:port]`, compared case-insensitively) may read responses.
    pub fn allow_origins<I, S>(origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let list = origins
            .into_iter()
            .map(|o| o.as_ref().trim_end_matches('/').to_owned())
            .collect();
        Self::new(Origins::List(list))
    }

    fn new(origins: Origins) -> Self {
        Self {
            origins,
            allow_headers: vec![header::CONTENT_TYPE, header::AUTHORIZATION, header::ACCEPT],
            expose_headers: Vec::new(),
            max_age: None,
            allow_credentials: false,
        }
    }

    /// Request headers a preflight allows (default: `content-type`, `authorization`, `accept`).
    pub fn allow_headers(mut self, headers: impl IntoIterator<Item = HeaderName>) -> Self {
        self.allow_headers = headers.into_iter().collect();
        self
    }

    /// Response headers a browser lets the application read beyond the CORS-safelisted ones
    /// (`Access-Control-Expose-Headers`), e.g. `retry-after`. None by default.
    pub fn expose_headers(mut self, headers: impl IntoIterator<Item = HeaderName>) -> Self {
        self.expose_headers = headers.into_iter().collect();
        self
    }

    /// How long a browser may cache a preflight answer (`Access-Control-Max-Age`). Unset by default.
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = Some(max_age);
        self
    }

    /// Whether responses may be read by requests sent with credentials (cookies, HTTP auth):
    /// `Access-Control-Allow-Credentials: true`, and the request's origin echoed instead of `*`.
    pub fn allow_credentials(mut self, allow: bool) -> Self {
        self.allow_credentials = allow;
        self
    }

    /// Whether `origin` (the `Origin` request header) may read responses.
    #[must_use]
    pub fn allows_origin(&self, origin: &str) -> bool {
        match &self.origins {
            Origins::Any => true,
            Origins::List(list) => list.iter().any(|o| o.eq_ignore_ascii_case(origin)),
        }
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, when it is allowed.
    pub(crate) fn allow_origin_value(&self, origin: &HeaderValue) -> Option<HeaderValue> {
        let text = origin.to_str().ok()?;
        if !self.allows_origin(text) {
            return None;
        }
        match self.origins {
            Origins::Any if !self.allow_credentials => Some(HeaderValue::from_static("*")),
            _ => Some(origin.clone()),
        }
    }

    pub(crate) fn credentials(&self) -> bool {
        self.allow_credentials
    }

    pub(crate) fn allow_headers_value(&self) -> Option<HeaderValue> {
        join(&self.allow_headers)
    }

    pub(crate) fn expose_headers_value(&self) -> Option<HeaderValue> {
        join(&self.expose_headers)
    }

    pub(crate) fn max_age_value(&self) -> Option<HeaderValue> {
        self.max_age.map(|age| HeaderValue::from(age.as_secs()))
    }
}

fn join(names: &[HeaderName]) -> Option<HeaderValue> {
    if names.is_empty() {
        return None;
    }
    let text = names
        .iter()
        .map(HeaderName::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    HeaderValue::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_matching() {
        let cors = Cors::allow_origins(["https://App.example.com/"]);
        let ok = HeaderValue::from_static("https://app.example.com");
        assert_eq!(cors.allow_origin_value(&ok), Some(ok.clone()));
        assert_eq!(
            cors.allow_origin_value(&HeaderValue::from_static("https://app.example.com.evil")),
            None
        );
        assert_eq!(
            Cors::any().allow_origin_value(&ok),
            Some(HeaderValue::from_static("*"))
        );
        assert_eq!(
            Cors::any().allow_credentials(true).allow_origin_value(&ok),
            Some(ok)
        );
    }

    #[test]
    fn header_lists() {
        let cors = Cors::any().expose_headers([header::RETRY_AFTER, header::ALLOW]);
        assert_eq!(
            cors.expose_headers_value(),
            Some(HeaderValue::from_static("retry-after, allow"))
        );
        assert_eq!(
            cors.allow_headers_value(),
            Some(HeaderValue::from_static("content-type, authorization, accept"))
        );
        assert_eq!(Cors::any().max_age_value(), None);
    }
}
