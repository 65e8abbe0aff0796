//! The checks in front of `/mcp` and `/resources`, as axum middleware: the bearer token (with
//! `--auth-tokens`), and the request body's deadline (`408`, closing the connection, when it ran out).

use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use dual_server::Caller;

use super::request_body::TimedBody;
use super::{RouterBody, reply};
use crate::auth::AuthTokens;

/// What the checks need.
#[derive(Debug, Clone)]
pub(super) struct Guard {
    /// The tokens to require; `None` serves everyone.
    pub(super) auth: Option<AuthTokens>,
    /// The time a request body has to arrive in full.
    pub(super) body_timeout: Duration,
}

/// Authenticates `request`, gives its body a deadline and passes it on.
pub(super) async fn check(
    State(guard): State<Guard>,
    mut request: Request,
    next: Next,
) -> http::Response<RouterBody> {
    if let Some(tokens) = &guard.auth {
        match tokens.authenticate(request.headers()) {
            Ok(owner) => {
                // The server authorizes with the `Caller`: dual-http's `CallerFromExtensions` and
                // dual-rmcp's `caller_from_extensions` read it back from here.
                request.extensions_mut().insert(Caller::owner(owner.0.clone()));
                request.extensions_mut().insert(owner);
            }
            Err(failure) => {
                tracing::debug!(path = %dual_core::escape::log_safe(request.uri().path()), failure = %dual_core::escape::log_safe(&failure.to_string()), "unauthorized request");
                return reply::unauthorized(failure);
            }
        }
    }
    let (parts, body) = request.into_parts();
    let body = TimedBody::new(body, guard.body_timeout);
    let expired = body.expired_flag();
    let response = next.run(Request::from_parts(parts, Body::new(body))).await;
    if expired.load(Ordering::Acquire) {
        return reply::request_timeout(guard.body_timeout);
    }
    response
}
