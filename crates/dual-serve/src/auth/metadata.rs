//! OAuth Protected Resource Metadata (RFC 9728) and the answers to a request that is not let in:
//! `401` with `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728 §5.1, plus
//! `error="invalid_token"` when a token was sent, RFC 6750 §3.1), `403 insufficient_scope` naming
//! the scope, and a retryable `503` while the issuer cannot be reached (its keys expired, or its
//! introspection endpoint fails).
//!
//! The 401 never says which check failed; the log does (never with the token).

use http::{HeaderValue, Method, Response, StatusCode, header};
use reqwest::Url;
use serde_json::json;

use super::oauth::Rejection;
use crate::{Body, MCP_PATH, reply};

/// Where the metadata is served: this, and this followed by the resource's path (RFC 9728 §3.1).
pub const PROTECTED_RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The metadata document and its URL.
#[derive(Debug)]
pub(crate) struct ResourceMetadata {
    /// The `resource_metadata` URL of the challenges.
    url: String,
    /// The paths it is served at.
    paths: Vec<String>,
    /// The document.
    document: String,
}

impl ResourceMetadata {
    /// The metadata of `resource`, whose tokens `issuers` issue, with `scopes`.
    pub(crate) fn new(resource: &str, issuers: Vec<String>, scopes: Vec<String>) -> Self {
        let (origin, path) = match Url::parse(resource) {
            Ok(url) => (
                url.origin().ascii_serialization(),
                url.path().trim_end_matches('/').to_owned(),
            ),
            Err(_) => (String::new(), String::new()),
        };
        let suffixed = format!("{PROTECTED_RESOURCE_METADATA_PATH}{path}");
        let url = format!("{origin}{suffixed}");
        let mut paths = vec![PROTECTED_RESOURCE_METADATA_PATH.to_owned(), suffixed];
        paths.push(format!("{PROTECTED_RESOURCE_METADATA_PATH}{MCP_PATH}"));
        paths.dedup();
        let mut document = json!({
            "resource": resource,
            "authorization_servers": issuers,
            "bearer_methods_supported": ["header"],
        });
        if !scopes.is_empty() {
            document["scopes_supported"] = json!(scopes);
        }
        Self {
            url,
            paths,
            document: document.to_string(),
        }
    }

    /// The URL of the metadata.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Whether `path` is one the metadata is served at.
    pub(crate) fn is_served_at(&self, path: &str) -> bool {
        self.paths.iter().any(|served| served == path)
    }

    /// `200` with the document for `GET` and `HEAD` (readable from any origin: it is public), `405`
    /// otherwise.
    pub(crate) fn respond(&self, method: &Method) -> Response<Body> {
        if method != Method::GET && method != Method::HEAD {
            let mut response = reply::json_response(
                StatusCode::METHOD_NOT_ALLOWED,
                &reply::error(
                    "method_not_allowed",
                    "the resource metadata is read with GET",
                    false,
                ),
            );
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return response;
        }
        let mut response = reply::json_text_response(StatusCode::OK, self.document.clone());
        response
            .headers_mut()
            .insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        response
    }

    /// The answer to a request refused with `rejection`.
    pub(crate) fn reject(&self, rejection: &Rejection) -> Response<Body> {
        let (status, challenge, body) = match rejection {
            Rejection::Missing => (
                StatusCode::UNAUTHORIZED,
                format!(r#"Bearer resource_metadata="{}""#, self.url),
                reply::error(
                    "unauthorized",
                    "this endpoint requires `Authorization: Bearer TOKEN`: an access token from an authorization server of the resource metadata",
                    false,
                ),
            ),
            Rejection::Invalid(_) => (
                StatusCode::UNAUTHORIZED,
                format!(
                    r#"Bearer error="invalid_token", resource_metadata="{}""#,
                    self.url
                ),
                reply::error("unauthorized", "the bearer token is not valid", false),
            ),
            Rejection::Scope(scope) => (
                StatusCode::FORBIDDEN,
                format!(
                    r#"Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{}""#,
                    self.url
                ),
                reply::error(
                    "insufficient_scope",
                    &format!("the bearer token lacks the scope `{scope}`"),
                    false,
                ),
            ),
            Rejection::Unavailable(unavailable) => {
                let mut response = reply::json_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &reply::error(
                        "unavailable",
                        "the authorization server cannot be reached now; retry later",
                        true,
                    ),
                );
                let seconds = unavailable.retry_after.as_secs_f64().ceil().max(1.0);
                // At most a few seconds (`KEYS_RETRY_AFTER`): the cast cannot truncate.
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a small positive whole number"
                )]
                let seconds = seconds as u64;
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
                return response;
            }
        };
        let mut response = reply::json_response(status, &body);
        // The URL and the scope are checked URLs and scope tokens: always a valid header value.
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_inserts_the_well_known_path() {
        let metadata = ResourceMetadata::new(
            "https://mcp.example.com/mcp",
            vec!["https://idp.example.com".to_owned()],
            vec!["mcp:tools".to_owned()],
        );
        assert_eq!(
            metadata.url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert!(metadata.is_served_at("/.well-known/oauth-protected-resource"));
        assert!(metadata.is_served_at("/.well-known/oauth-protected-resource/mcp"));
        assert!(!metadata.is_served_at("/.well-known/oauth-protected-resource/other"));
        let nested = ResourceMetadata::new("https://example.com/tools/mcp/", vec![], vec![]);
        assert_eq!(
            nested.url(),
            "https://example.com/.well-known/oauth-protected-resource/tools/mcp"
        );
        assert!(nested.is_served_at("/.well-known/oauth-protected-resource/tools/mcp"));
        let document: serde_json::Value = serde_json::from_str(&nested.document).expect("JSON");
        assert!(document.get("scopes_supported").is_none());
    }
}
