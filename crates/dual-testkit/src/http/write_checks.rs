//! `PUT /{id}` (pin) and `DELETE /{id}`.

use http::{Method, header};
use serde_json::json;

use super::Target;
use super::support::{Ctx, every_route};

pub(crate) async fn pin<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(5).await;
    let item = format!("/{id}");
    for _ in 0..2 {
        let body = ctx.req(Method::PUT, &item).send().await.ok_json(check);
        assert_eq!(
            body,
            json!({"status": "pinned", "expires_at": null}),
            "[{check}] (idempotent)"
        );
    }
    let metadata = ctx.get(&item).send().await.ok_json(check);
    assert_eq!(
        metadata["expires_at"],
        serde_json::Value::Null,
        "[{check}] no expiry"
    );
    // A body on PUT is ignored, whatever its type.
    ctx.req(Method::PUT, &item)
        .header(header::CONTENT_TYPE, "text/plain")
        .body("ignored")
        .send()
        .await
        .ok_json(check);
}

pub(crate) async fn delete<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(5).await;
    let reply = ctx.req(Method::DELETE, &format!("/{id}")).send().await;
    reply.expect_no_body(check, 204);
    reply.expect_no_header(check, header::CONTENT_TYPE);
    for (method, suffix) in every_route(id) {
        let reply = ctx.req(method.clone(), &suffix).send().await;
        reply.error(&format!("{check} {method}"), 404, "not_found");
    }
}
