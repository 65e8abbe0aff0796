//! `PUT /{id}` (pin) and `DELETE /{id}`.

use http::{Method, header};
use serde_json::json;

use super::Target;
use super::support::Ctx;

pub(crate) async fn run<T: Target>(ctx: &Ctx<T>, passed: &mut Vec<&'static str>) {
    pin(ctx).await;
    passed.push("put_pin");
    delete(ctx).await;
    passed.push("delete_204");
}

async fn pin<T: Target>(ctx: &Ctx<T>) {
    let check = "put_pin";
    let id = ctx.create(5).await;
    for _ in 0..2 {
        let body = ctx
            .send(ctx.req(Method::PUT, &format!("/{id}")))
            .await
            .ok_json(check);
        assert_eq!(
            body,
            json!({"status": "pinned", "expires_at": null}),
            "[{check}] (idempotent)"
        );
    }
    let metadata = ctx
        .send(ctx.req(Method::GET, &format!("/{id}")))
        .await
        .ok_json(check);
    assert_eq!(
        metadata["expires_at"],
        serde_json::Value::Null,
        "[{check}] no expiry"
    );
    // A body on PUT is ignored, whatever its type.
    let reply = ctx
        .send(
            ctx.req(Method::PUT, &format!("/{id}"))
                .header(header::CONTENT_TYPE, "text/plain")
                .body("ignored"),
        )
        .await;
    reply.ok_json(check);
}

async fn delete<T: Target>(ctx: &Ctx<T>) {
    let check = "delete_204";
    let id = ctx.create(5).await;
    let reply = ctx.send(ctx.req(Method::DELETE, &format!("/{id}"))).await;
    assert_eq!(reply.status.as_u16(), 204, "[{check}] status");
    assert!(reply.body.is_empty(), "[{check}] no body");
    assert!(
        reply.headers.get(header::CONTENT_TYPE).is_none(),
        "[{check}] no content type"
    );
    for (method, suffix) in [
        (Method::GET, format!("/{id}")),
        (Method::POST, format!("/{id}")),
        (Method::PUT, format!("/{id}")),
        (Method::DELETE, format!("/{id}")),
        (Method::GET, format!("/{id}/data")),
    ] {
        let reply = ctx.send(ctx.req(method.clone(), &suffix)).await;
        reply.error(check, 404, "not_found");
    }
}
