//! The checks in front of `/mcp` and `/resources` (`admit`, which the router calls for both): the
//! bearer token (from the token file, or an OAuth access token), and the
//! request body's deadline (`408`, closing the connection, when it ran out).
//!
//! A request to `/resources/…` whose query carries a `token` parameter is a capability link: it
//! skips the bearer check, and dual-http verifies the token before any store access (a wrong,
//! expired or other-resource token is a `404` like an unknown id). `/mcp` always needs the bearer
//! token.

use std::sync::atomic::Ordering;
use std::time::Duration;

use dual_server::Caller;

use super::request_body::TimedBody;
use super::{Body, REST_PREFIX, reply};
use crate::auth::{Authenticator, Owner, Surface};

/// What the checks need.
#[derive(Debug, Clone)]
pub(super) struct Guard {
    /// How callers are authenticated.
    pub(super) auth: Authenticator,
    /// The time a request body has to arrive in full.
    pub(super) body_timeout: Duration,
}

/// Authenticates `request`, gives its body a deadline and passes it to `next`; `408` when the body
/// ran out of time, whatever `next` answered.
pub(super) async fn admit<B, F, R>(
    guard: &Guard,
    mut request: http::Request<B>,
    next: F,
) -> http::Response<Body>
where
    F: FnOnce(http::Request<TimedBody<B>>) -> R,
    R: Future<Output = http::Response<Body>>,
{
    let owner = match &guard.auth {
        Authenticator::None => None,
        _ if is_capability_link(request.method(), request.uri()) => None,
        Authenticator::Tokens(tokens) => match tokens.authenticate(request.headers()) {
            Ok(owner) => Some(owner),
            Err(failure) => {
                tracing::debug!(path = %dual_core::escape::log_path(request.uri().path()), failure = %dual_core::escape::log_safe(&failure.to_string()), "unauthorized request");
                let (challenge, message) = failure.challenge();
                return reply::unauthorized(challenge, message);
            }
        },
        Authenticator::OAuth(oauth) => {
            let surface = if request.uri().path().starts_with(REST_PREFIX) {
                Surface::Results
            } else {
                Surface::Mcp
            };
            match oauth.authenticate(request.headers(), surface).await {
                Ok(verified) => {
                    if surface == Surface::Mcp {
                        // The MCP endpoint checks `tools/call` and `resources/read` against it.
                        request.extensions_mut().insert(oauth.gate(&verified));
                    }
                    Some(Owner(verified.owner().to_owned()))
                }
                Err(rejection) => {
                    // The reason only: the token is never logged, not even a part of it.
                    tracing::debug!(path = %dual_core::escape::log_path(request.uri().path()), reason = ?rejection, "request refused by the OAuth checks");
                    return oauth.metadata().reject(&rejection);
                }
            }
        }
    };
    if let Some(owner) = owner {
        // The server authorizes with the `Caller`: dual-http's `CallerFromExtensions` and
        // dual-rmcp's `caller_from_extensions` read it back from here.
        request.extensions_mut().insert(Caller::owner(owner.0.clone()));
        request.extensions_mut().insert(owner);
    }
    let (parts, body) = request.into_parts();
    let body = TimedBody::new(body, guard.body_timeout);
    let expired = body.expired_flag();
    let response = next(http::Request::from_parts(parts, body)).await;
    if expired.load(Ordering::Acquire) {
        return reply::request_timeout(guard.body_timeout);
    }
    response
}

/// Whether the request is a REST read (`GET`, `HEAD` or `POST` under `/resources/`) with a `token`
/// query parameter, which dual-http verifies instead of the bearer token. `PUT` and `DELETE` are never
/// links: dual-http ignores a token there and asks the hook, which must then see an authenticated
/// caller.
fn is_capability_link(method: &http::Method, uri: &http::Uri) -> bool {
    if !matches!(
        *method,
        http::Method::GET | http::Method::HEAD | http::Method::POST
    ) {
        return false;
    }
    let rest = uri
        .path()
        .strip_prefix(REST_PREFIX)
        .is_some_and(|rest| rest.starts_with('/'));
    rest && uri.query().is_some_and(|query| {
        query
            .split('&')
            .any(|pair| pair.split_once('=').map_or(pair, |(key, _)| key) == "token")
    })
}

#[cfg(test)]
mod tests {
    use super::is_capability_link;

    #[test]
    fn only_rest_requests_with_a_token_parameter_are_links() {
        for (uri, link) in [
            (
                "/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV/data?format=csv&expires=1&token=abc",
                true,
            ),
            (
                "/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV/view?token=abc&expires=1",
                true,
            ),
            ("/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV?token", true),
            ("/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV/data?format=csv", false),
            (
                "/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV/data?xtoken=abc&tokens=1",
                false,
            ),
            ("/resources?token=abc", false),
            ("/resourcesX/1?token=abc", false),
            ("/mcp?token=abc", false),
            ("/mcp/resources/1?token=abc", false),
        ] {
            let parsed: http::Uri = uri.parse().expect("a URI");
            for method in [http::Method::GET, http::Method::HEAD, http::Method::POST] {
                assert_eq!(is_capability_link(&method, &parsed), link, "{method} {uri}");
            }
            for method in [http::Method::PUT, http::Method::DELETE, http::Method::OPTIONS] {
                assert!(!is_capability_link(&method, &parsed), "{method} {uri}");
            }
        }
    }
}
