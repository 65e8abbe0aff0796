//! CORS, when configured: preflights, headers on normal and error responses, disallowed origins.

use http::{Method, header};

use super::Target;
use super::support::{ALLOWED_ORIGIN, Ctx};

pub(crate) async fn run<T: Target>(ctx: &Ctx<T>, passed: &mut Vec<&'static str>) {
    preflight(ctx).await;
    passed.push("cors_preflight");
    simple(ctx).await;
    passed.push("cors_response_headers");
}

async fn preflight<T: Target>(ctx: &Ctx<T>) {
    let check = "cors_preflight";
    let id = ctx.create(3).await;
    for (suffix, methods) in [
        (format!("/{id}"), "GET, HEAD, POST, PUT, DELETE, OPTIONS"),
        (format!("/{id}/data"), "GET, HEAD, OPTIONS"),
        // Preflights do not look resources up: an unknown id answers the same.
        (
            format!("/{}", dual_core::ResourceId::new()),
            "GET, HEAD, POST, PUT, DELETE, OPTIONS",
        ),
    ] {
        let reply = ctx
            .send_cors(
                ctx.req(Method::OPTIONS, &suffix)
                    .header(header::ORIGIN, ALLOWED_ORIGIN)
                    .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
                    .header(
                        header::ACCESS_CONTROL_REQUEST_HEADERS,
                        "content-type, authorization",
                    ),
            )
            .await;
        assert_eq!(reply.status.as_u16(), 204, "[{check}] {suffix}");
        assert!(reply.body.is_empty(), "[{check}] no body");
        assert_eq!(
            reply.header(header::ACCESS_CONTROL_ALLOW_ORIGIN),
            ALLOWED_ORIGIN,
            "[{check}]"
        );
        assert_eq!(
            reply.header(header::ACCESS_CONTROL_ALLOW_METHODS),
            methods,
            "[{check}]"
        );
        assert_eq!(reply.header(header::ALLOW), methods, "[{check}] Allow");
        let allowed = reply.header(header::ACCESS_CONTROL_ALLOW_HEADERS);
        assert!(
            allowed.contains("content-type") && allowed.contains("authorization"),
            "[{check}] {allowed}"
        );
        assert_eq!(
            reply.header(header::ACCESS_CONTROL_MAX_AGE),
            "600",
            "[{check}] max-age"
        );
        assert!(
            reply.header_all(header::VARY).contains("origin"),
            "[{check}] Vary: Origin"
        );
    }
    // A disallowed origin gets no Access-Control-Allow-* headers: the browser blocks the request.
    let reply = ctx
        .send_cors(
            ctx.req(Method::OPTIONS, &format!("/{id}"))
                .header(header::ORIGIN, "https://evil.example")
                .header(header::ACCESS_CONTROL_REQUEST_METHOD, "DELETE"),
        )
        .await;
    assert_eq!(reply.status.as_u16(), 204, "[{check}] disallowed origin");
    assert!(
        reply
            .headers
            .keys()
            .all(|k| !k.as_str().starts_with("access-control-allow")),
        "[{check}] no allow headers for a disallowed origin: {:?}",
        reply.headers
    );
    assert!(
        reply.header_all(header::VARY).contains("origin"),
        "[{check}] Vary: Origin"
    );
    // Other methods still get 405 on the CORS-enabled handler.
    let reply = ctx.send_cors(ctx.req(Method::PATCH, &format!("/{id}"))).await;
    reply.error(check, 405, "method_not_allowed");
    assert_eq!(
        reply.header(header::ALLOW),
        "GET, HEAD, POST, PUT, DELETE, OPTIONS",
        "[{check}]"
    );
}

async fn simple<T: Target>(ctx: &Ctx<T>) {
    let check = "cors_response_headers";
    let id = ctx.create(3).await;
    let get = |suffix: String, origin: Option<&str>| {
        let mut req = ctx.req(Method::GET, &suffix);
        if let Some(origin) = origin {
            req = req.header(header::ORIGIN, origin);
        }
        ctx.send_cors(req)
    };
    for (suffix, status) in [
        (format!("/{id}"), 200),
        (format!("/{id}/data"), 200),
        (format!("/{}", dual_core::ResourceId::new()), 404),
    ] {
        let reply = get(suffix.clone(), Some(ALLOWED_ORIGIN)).await;
        assert_eq!(reply.status.as_u16(), status, "[{check}] {suffix}");
        assert_eq!(
            reply.header(header::ACCESS_CONTROL_ALLOW_ORIGIN),
            ALLOWED_ORIGIN,
            "[{check}] {suffix}"
        );
        assert_eq!(
            reply.header(header::ACCESS_CONTROL_EXPOSE_HEADERS),
            "retry-after",
            "[{check}]"
        );
        assert!(
            reply.header_all(header::VARY).contains("origin"),
            "[{check}] Vary: Origin"
        );
        assert!(
            reply.headers.get(header::ACCESS_CONTROL_ALLOW_METHODS).is_none(),
            "[{check}] not a preflight"
        );
    }
    let reply = get(format!("/{id}"), Some("https://evil.example")).await;
    assert_eq!(
        reply.status.as_u16(),
        200,
        "[{check}] the server answers; the browser blocks"
    );
    assert!(
        reply.headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none(),
        "[{check}] evil"
    );
    let reply = get(format!("/{id}"), None).await;
    assert!(
        reply.headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none(),
        "[{check}] no Origin"
    );
    assert!(
        reply.header_all(header::VARY).contains("origin"),
        "[{check}] Vary: Origin always"
    );
    // Without CORS configured, no CORS headers at all.
    let reply = ctx
        .send(
            ctx.req(Method::GET, &format!("/{id}"))
                .header(header::ORIGIN, ALLOWED_ORIGIN),
        )
        .await;
    assert!(
        reply
            .headers
            .keys()
            .all(|k| !k.as_str().starts_with("access-control-")),
        "[{check}] CORS off"
    );
}
