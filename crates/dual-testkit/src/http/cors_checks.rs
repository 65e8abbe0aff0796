//! CORS, when configured: preflights, headers on normal and error responses, disallowed origins.

use http::{Method, header};

use super::Target;
use super::support::{ALLOWED_ORIGIN, Ctx, Reply};

/// The methods a resource's route takes with CORS configured.
const ITEM_METHODS: &str = "GET, HEAD, POST, PUT, DELETE, OPTIONS";

pub(crate) async fn preflight<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(3).await;
    for (suffix, methods) in [
        (format!("/{id}"), ITEM_METHODS),
        (format!("/{id}/data"), "GET, HEAD, OPTIONS"),
        // Preflights do not look resources up: an unknown id answers the same.
        (format!("/{}", dual_core::ResourceId::new()), ITEM_METHODS),
    ] {
        let reply = ctx
            .req(Method::OPTIONS, &suffix)
            .header(header::ORIGIN, ALLOWED_ORIGIN)
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
            .header(
                header::ACCESS_CONTROL_REQUEST_HEADERS,
                "content-type, authorization",
            )
            .send_cors()
            .await;
        let check = format!("{check} {suffix}");
        reply.expect_no_body(&check, 204);
        expect_allowed(&reply, &check, true);
        reply.expect_header(&check, header::ACCESS_CONTROL_ALLOW_METHODS, methods);
        reply.expect_header(&check, header::ALLOW, methods);
        let allowed = reply.header(header::ACCESS_CONTROL_ALLOW_HEADERS);
        assert!(
            allowed.contains("content-type") && allowed.contains("authorization"),
            "[{check}] {allowed}"
        );
        reply.expect_header(&check, header::ACCESS_CONTROL_MAX_AGE, "600");
    }
    // A disallowed origin gets no Access-Control-Allow-* headers: the browser blocks the request.
    let reply = ctx
        .req(Method::OPTIONS, &format!("/{id}"))
        .header(header::ORIGIN, "https://evil.example")
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "DELETE")
        .send_cors()
        .await;
    reply.expect_status(&format!("{check} disallowed origin"), 204);
    expect_no_cors(
        &reply,
        &format!("{check} disallowed origin"),
        "access-control-allow",
    );
    reply.expect_vary(check, "origin");
    // Other methods still get 405 on the CORS-enabled handler.
    let reply = ctx.req(Method::PATCH, &format!("/{id}")).send_cors().await;
    reply.error(check, 405, "method_not_allowed");
    reply.expect_header(check, header::ALLOW, ITEM_METHODS);
}

pub(crate) async fn simple<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(3).await;
    let get = |suffix: String, origin: Option<&str>| {
        ctx.get(&suffix).header_opt(header::ORIGIN, origin).send_cors()
    };
    for (suffix, status) in [
        (format!("/{id}"), 200),
        (format!("/{id}/data"), 200),
        (format!("/{}", dual_core::ResourceId::new()), 404),
    ] {
        let reply = get(suffix.clone(), Some(ALLOWED_ORIGIN)).await;
        let check = format!("{check} {suffix}");
        reply.expect_status(&check, status);
        expect_allowed(&reply, &check, true);
        reply.expect_header(&check, header::ACCESS_CONTROL_EXPOSE_HEADERS, "retry-after");
        reply.expect_no_header(
            &format!("{check}: not a preflight"),
            header::ACCESS_CONTROL_ALLOW_METHODS,
        );
    }
    let reply = get(format!("/{id}"), Some("https://evil.example")).await;
    assert_eq!(
        reply.status.as_u16(),
        200,
        "[{check}] the server answers; the browser blocks"
    );
    expect_allowed(&reply, &format!("{check} evil"), false);
    let reply = get(format!("/{id}"), None).await;
    expect_allowed(&reply, &format!("{check} no Origin"), false);
    // Without CORS configured, no CORS headers at all.
    let reply = ctx
        .get(&format!("/{id}"))
        .header(header::ORIGIN, ALLOWED_ORIGIN)
        .send()
        .await;
    expect_no_cors(&reply, &format!("{check} CORS off"), "access-control-");
}

/// Asserts `Vary: Origin` and the allowed origin echoed (`allowed`) or no `Access-Control-Allow-Origin`.
#[track_caller]
fn expect_allowed(reply: &Reply, check: &str, allowed: bool) {
    if allowed {
        reply.expect_header(check, header::ACCESS_CONTROL_ALLOW_ORIGIN, ALLOWED_ORIGIN);
    } else {
        reply.expect_no_header(check, header::ACCESS_CONTROL_ALLOW_ORIGIN);
    }
    reply.expect_vary(check, "origin");
}

/// Asserts no header's name starts with `prefix`.
#[track_caller]
fn expect_no_cors(reply: &Reply, check: &str, prefix: &str) {
    assert!(
        reply.headers.keys().all(|k| !k.as_str().starts_with(prefix)),
        "[{check}] no {prefix}* headers: {:?}",
        reply.headers
    );
}
