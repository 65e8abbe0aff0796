//! The authorization hook and owner binding: others get the 404 an unknown id gets.

use http::{Method, header};
use serde_json::json;

use super::Target;
use super::support::{Ctx, every_route};

pub(crate) async fn owner_binding<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create_with(json!({"n": 30}), Some("alice")).await;
    let unknown = ctx
        .get(&format!("/{}", dual_core::ResourceId::new()))
        .send()
        .await;
    for (method, suffix) in every_route(id) {
        for auth in [
            None,
            Some("Bearer bob"),
            Some("Bearer ALICE"),
            Some("Basic alice"),
        ] {
            let reply = ctx
                .req(method.clone(), &suffix)
                .header_opt(header::AUTHORIZATION, auth)
                .send()
                .await;
            reply.error(&format!("{check} {method} {auth:?}"), 404, "not_found");
            assert_eq!(reply.body, unknown.body, "[{check}] existence must not leak");
        }
    }
    assert_eq!(
        ctx.access_count(id).await,
        0,
        "[{check}] denied requests do not count"
    );
    let as_alice = |method: Method, suffix: String| {
        ctx.req(method, &suffix)
            .header(header::AUTHORIZATION, "Bearer alice")
            .send()
    };
    as_alice(Method::GET, format!("/{id}")).await.ok_json(check);
    let page = as_alice(Method::POST, format!("/{id}")).await.ok_json(check);
    assert_eq!(page["returned_count"], 30, "[{check}] owner's page");
    let export = as_alice(Method::GET, format!("/{id}/data")).await;
    assert_eq!(
        export.json().as_array().map(Vec::len),
        Some(30),
        "[{check}] owner's export"
    );
    as_alice(Method::PUT, format!("/{id}")).await.ok_json(check);
    let reply = as_alice(Method::DELETE, format!("/{id}")).await;
    assert_eq!(reply.status.as_u16(), 204, "[{check}] owner deletes");
    // Unowned resources stay visible to everyone, authenticated or not.
    let public = ctx.create(3).await;
    for auth in [None, Some("Bearer bob")] {
        ctx.get(&format!("/{public}"))
            .header_opt(header::AUTHORIZATION, auth)
            .send()
            .await
            .ok_json(check);
    }
}
