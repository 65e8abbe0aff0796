//! Fetching an issuer's metadata and key set over HTTP: reqwest (the client the S3 spool already
//! brings), with a deadline, no redirects, and a cap on the response size.
//!
//! The metadata is looked for where RFC 8414 puts it (`/.well-known/oauth-authorization-server`
//! inserted before the issuer's path), then where OpenID Connect Discovery does
//! (`/.well-known/openid-configuration` after it, then before it); its `issuer` must be the issuer
//! configured, and its `jwks_uri` HTTPS (or HTTP to a loopback host).

use std::time::Duration;

use http::header::{ACCEPT, CACHE_CONTROL};
use reqwest::Url;
use serde::Deserialize;

/// Largest metadata or key set document read, in bytes.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// Why a document could not be fetched.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    /// The request failed (connection, timeout, body).
    #[error("request to {url} failed: {source}")]
    Request {
        /// The URL.
        url: String,
        /// The error.
        #[source]
        source: reqwest::Error,
    },
    /// The answer was not `200`.
    #[error("{url} answered {status}")]
    Status {
        /// The URL.
        url: String,
        /// Its status.
        status: u16,
    },
    /// The answer was longer than [`MAX_DOCUMENT_BYTES`].
    #[error("{url} answered more than {MAX_DOCUMENT_BYTES} bytes")]
    TooLarge {
        /// The URL.
        url: String,
    },
    /// Metadata that is not JSON, names another issuer or has no usable `jwks_uri`.
    #[error("the metadata at {url} is not usable: {reason}")]
    Metadata {
        /// The URL.
        url: String,
        /// Why.
        reason: &'static str,
    },
    /// A key set that is not a JWK set.
    #[error("the key set at {url} is not usable: {source}")]
    Keys {
        /// The URL.
        url: String,
        /// Why.
        #[source]
        source: super::jwks::JwksError,
    },
}

/// A fetched document and the lifetime its `Cache-Control: max-age` gives it.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub(crate) body: Vec<u8>,
    pub(crate) max_age: Option<Duration>,
}

/// The HTTP client of the authorization checks.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
}

impl Http {
    /// A client that gives each request `timeout` in all and follows no redirect.
    pub(crate) fn new(timeout: Duration) -> Result<Self, reqwest::Error> {
        // reqwest is built without a default crypto provider (as dual-spool's S3 client) and panics
        // building a client without one: rustls' ring provider, unless the application installed one.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self { client })
    }

    /// `GET url` for JSON: the body (at most [`MAX_DOCUMENT_BYTES`]) and its `max-age`.
    pub(crate) async fn get(&self, url: &str) -> Result<Fetched, FetchError> {
        let request = self.client.get(url).header(ACCEPT, "application/json");
        self.fetch(url, request).await
    }

    /// `POST url` of the form `body` (already `application/x-www-form-urlencoded`) with the
    /// `Authorization` value `authorization`, for JSON.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        authorization: &http::HeaderValue,
        body: String,
    ) -> Result<Fetched, FetchError> {
        let request = self
            .client
            .post(url)
            .header(ACCEPT, "application/json")
            .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(http::header::AUTHORIZATION, authorization.clone())
            .body(body);
        self.fetch(url, request).await
    }

    async fn fetch(&self, url: &str, request: reqwest::RequestBuilder) -> Result<Fetched, FetchError> {
        let failed = |source| FetchError::Request {
            url: url.to_owned(),
            source,
        };
        let mut response = request.send().await.map_err(failed)?;
        if response.status() != http::StatusCode::OK {
            return Err(FetchError::Status {
                url: url.to_owned(),
                status: response.status().as_u16(),
            });
        }
        let too_large = || FetchError::TooLarge { url: url.to_owned() };
        if response
            .content_length()
            .is_some_and(|length| length > MAX_DOCUMENT_BYTES as u64)
        {
            return Err(too_large());
        }
        let max_age = response
            .headers()
            .get(CACHE_CONTROL)
            .and_then(|value| value.to_str().ok())
            .and_then(max_age);
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fetched { body, max_age })
    }

    /// The `jwks_uri` of `issuer`'s metadata, tried at each of [`metadata_urls`] in turn.
    pub(crate) async fn discover_jwks_uri(&self, issuer: &str) -> Result<String, FetchError> {
        let mut last = None;
        for url in metadata_urls(issuer) {
            match self.get(&url).await {
                Ok(fetched) => return jwks_uri_of(&url, issuer, &fetched.body),
                Err(error) => {
                    tracing::debug!(%url, %error, "no authorization server metadata here");
                    last = Some(error);
                }
            }
        }
        Err(last.unwrap_or(FetchError::Metadata {
            url: issuer.to_owned(),
            reason: "the issuer is not a URL",
        }))
    }
}

#[derive(Deserialize)]
struct Metadata {
    issuer: String,
    jwks_uri: Option<String>,
}

/// The `jwks_uri` of the metadata document `body` fetched from `url` for `issuer`.
fn jwks_uri_of(url: &str, issuer: &str, body: &[u8]) -> Result<String, FetchError> {
    let refused = |reason| FetchError::Metadata {
        url: url.to_owned(),
        reason,
    };
    let metadata: Metadata =
        serde_json::from_slice(body).map_err(|_| refused("not JSON with an `issuer`"))?;
    if metadata.issuer != issuer {
        return Err(refused("its `issuer` is not the issuer configured"));
    }
    let jwks_uri = metadata.jwks_uri.ok_or_else(|| refused("no `jwks_uri`"))?;
    if !is_secure_url(&jwks_uri) {
        return Err(refused("its `jwks_uri` is neither HTTPS nor on a loopback host"));
    }
    Ok(jwks_uri)
}

/// Where the metadata of `issuer` may be, in the order tried: RFC 8414's path insertion, OpenID
/// Connect's appended form, then OpenID's form with path insertion (some servers use it).
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let Ok(url) = Url::parse(issuer) else {
        return Vec::new();
    };
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}/.well-known/openid-configuration{path}"));
    }
    urls
}

/// Whether `url` is HTTPS, or HTTP to a loopback host (a local issuer, for tests and development).
pub(crate) fn is_secure_url(url: &str) -> bool {
    let Ok(url) = Url::parse(url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    match url.scheme() {
        "https" => true,
        "http" => {
            host == "localhost"
                || host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        _ => false,
    }
}

/// The `max-age` of a `Cache-Control` value; `no-cache` and `no-store` count as 0.
fn max_age(value: &str) -> Option<Duration> {
    let mut age = None;
    for directive in value.split(',').map(str::trim) {
        let (name, argument) = directive.split_once('=').unwrap_or((directive, ""));
        match name.trim().to_ascii_lowercase().as_str() {
            "no-cache" | "no-store" => return Some(Duration::ZERO),
            "max-age" => {
                age = argument
                    .trim()
                    .trim_matches('"')
                    .parse()
                    .ok()
                    .map(Duration::from_secs)
            }
            _ => {}
        }
    }
    age
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_follow_rfc_8414_then_openid() {
        assert_eq!(
            metadata_urls("https://idp.example.com"),
            [
                "https://idp.example.com/.well-known/oauth-authorization-server",
                "https://idp.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls("https://idp.example.com/realms/team/"),
            [
                "https://idp.example.com/.well-known/oauth-authorization-server/realms/team",
                "https://idp.example.com/realms/team/.well-known/openid-configuration",
                "https://idp.example.com/.well-known/openid-configuration/realms/team",
            ]
        );
        assert!(metadata_urls("not a url").is_empty());
    }

    #[test]
    fn only_https_or_loopback_http_is_secure() {
        for url in [
            "https://idp.example.com/keys",
            "http://127.0.0.1:8080/k",
            "http://[::1]/k",
            "http://localhost/k",
        ] {
            assert!(is_secure_url(url), "{url}");
        }
        for url in [
            "http://idp.example.com/keys",
            "http://10.0.0.1/k",
            "ftp://127.0.0.1/k",
            "file:///etc/keys",
            "keys",
        ] {
            assert!(!is_secure_url(url), "{url}");
        }
    }

    #[test]
    fn the_metadata_must_name_the_issuer() {
        let issuer = "https://idp.example.com";
        let good = br#"{"issuer": "https://idp.example.com", "jwks_uri": "https://idp.example.com/jwks"}"#;
        assert_eq!(
            jwks_uri_of("u", issuer, good).expect("usable"),
            "https://idp.example.com/jwks"
        );
        for bad in [
            &br#"{"issuer": "https://evil.example.com", "jwks_uri": "https://idp.example.com/jwks"}"#[..],
            br#"{"issuer": "https://idp.example.com"}"#,
            br#"{"issuer": "https://idp.example.com", "jwks_uri": "http://idp.example.com/jwks"}"#,
            b"<html>",
        ] {
            assert!(jwks_uri_of("u", issuer, bad).is_err());
        }
    }

    #[test]
    fn max_age_is_read_from_cache_control() {
        assert_eq!(max_age("public, max-age=3600"), Some(Duration::from_secs(3600)));
        assert_eq!(max_age("Max-Age = 60"), Some(Duration::from_secs(60)));
        assert_eq!(max_age("max-age=60, no-cache"), Some(Duration::ZERO));
        assert_eq!(max_age("no-store"), Some(Duration::ZERO));
        assert_eq!(max_age("public"), None);
        assert_eq!(max_age("max-age=soon"), None);
    }
}
