//! `GET /{id}` and `POST /{id}`: metadata and pages, `HEAD`, concurrency.

use http::header;
use serde_json::{Value, json};

use super::Target;
use super::fixtures::row;
use super::support::Ctx;

pub(crate) async fn metadata<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(847).await;
    let first = ctx.get(&format!("/{id}")).send().await.ok_json(check);
    let mut keys: Vec<&str> = first
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "access_count",
            "columns",
            "consistency",
            "created_at",
            "expires_at",
            "id",
            "last_accessed_at",
            "metadata",
            "name",
            "status",
            "total_count"
        ],
        "[{check}] fields"
    );
    assert_eq!(first["id"], id.to_string(), "[{check}] id");
    assert_eq!(first["status"], "ready", "[{check}] status");
    assert!(
        first["consistency"] == "snapshot" || first["consistency"] == "live",
        "[{check}] consistency"
    );
    assert_eq!(first["total_count"], 847, "[{check}] total_count");
    assert_eq!(first["name"], "Suite rows", "[{check}] name");
    assert_eq!(
        first["columns"][0],
        json!({"name": "id", "type": "integer"}),
        "[{check}] columns"
    );
    assert!(first["expires_at"].is_string(), "[{check}] expires_at");
    assert_eq!(first["access_count"], 1, "[{check}] the read counts");
    let second = ctx.get(&format!("/{id}")).send().await.ok_json(check);
    assert_eq!(second["access_count"], 2, "[{check}] every read counts");
    assert!(
        second["last_accessed_at"].is_string(),
        "[{check}] last_accessed_at"
    );
}

pub(crate) async fn page_defaults<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(250).await;
    // No Content-Type and no body: the default request.
    let page = post_page(ctx, id, None, check).await;
    assert_eq!(
        (
            &page["total_count"],
            &page["returned_count"],
            &page["offset"],
            &page["limit"],
            &page["has_next"],
            &page["has_previous"],
            &page["next_offset"]
        ),
        (
            &json!(250),
            &json!(100),
            &json!(0),
            &json!(100),
            &json!(true),
            &json!(false),
            &json!(100)
        ),
        "[{check}] {page}"
    );
    let data = page["data"].as_array().cloned().unwrap_or_default();
    assert_eq!(data.len(), 100, "[{check}] data");
    assert_eq!(
        data[7],
        Value::Object(row(7)),
        "[{check}] rows are the executor's"
    );
    // An explicit empty JSON object, and JSON nulls, are defaults too.
    for body in ["{}", "  \n", r#"{"offset": null, "limit": null, "sort": null}"#] {
        let again = post_page(ctx, id, Some(body), check).await;
        assert_eq!(again["returned_count"], 100, "[{check}] body {body:?}");
    }
    assert_eq!(ctx.access_count(id).await, 4, "[{check}] each page counts");
}

pub(crate) async fn page_arithmetic<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(250).await;
    let cases = [
        // (offset, limit) → (returned, has_next, has_previous, next_offset)
        ((0, 50), (50, true, false, json!(50))),
        ((150, 50), (50, true, true, json!(200))),
        ((200, 50), (50, false, true, Value::Null)),
        ((240, 50), (10, false, true, Value::Null)),
        ((250, 10), (0, false, true, Value::Null)),
        ((9999, 1), (0, false, true, Value::Null)),
        ((0, 250), (250, false, false, Value::Null)),
        ((0, 249), (249, true, false, json!(249))),
    ];
    for ((offset, limit), (returned, has_next, has_previous, next_offset)) in cases {
        let body = format!(r#"{{"offset": {offset}, "limit": {limit}}}"#);
        let page = post_page(ctx, id, Some(&body), check).await;
        let got = (
            page["returned_count"].as_u64(),
            page["has_next"].as_bool(),
            page["has_previous"].as_bool(),
            page["next_offset"].clone(),
        );
        assert_eq!(
            got,
            (Some(returned), Some(has_next), Some(has_previous), next_offset),
            "[{check}] offset {offset} limit {limit}"
        );
        assert_eq!(
            page["data"].as_array().map(Vec::len),
            Some(usize::try_from(returned).unwrap_or_default()),
            "[{check}] data length"
        );
        assert_eq!(
            (page["offset"].as_u64(), page["limit"].as_u64()),
            (Some(offset), Some(limit))
        );
        assert_eq!(
            page["total_count"], 250,
            "[{check}] total_count is the count at creation"
        );
        if returned > 0 {
            assert_eq!(page["data"][0]["id"], offset, "[{check}] first row");
        }
    }
    // Integral floats are integers.
    let page = post_page(ctx, id, Some(r#"{"offset": 10.0, "limit": 5.0}"#), check).await;
    assert_eq!(page["data"][0]["id"], 10, "[{check}] 10.0");
}

pub(crate) async fn page_content_types<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(20).await;
    for content_type in [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON;charset=\"UTF-8\"",
        "application/vnd.dual+json",
    ] {
        let page = ctx
            .post(&format!("/{id}"))
            .header(header::CONTENT_TYPE, content_type)
            .body(r#"{"limit": 3}"#)
            .send()
            .await
            .ok_json(check);
        assert_eq!(page["returned_count"], 3, "[{check}] {content_type}");
    }
    // An empty body needs no JSON Content-Type.
    let page = ctx
        .post(&format!("/{id}"))
        .header(header::CONTENT_TYPE, "text/plain")
        .send()
        .await
        .ok_json(check);
    assert_eq!(page["returned_count"], 20, "[{check}] empty text/plain body");
}

pub(crate) async fn page_sort<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(300).await;
    let page = post_page(
        ctx,
        id,
        Some(r#"{"offset": 0, "limit": 100, "sort": {"field": "score", "order": "desc"}}"#),
        check,
    )
    .await;
    let scores: Vec<u64> = page["data"]
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| r["score"].as_u64()).collect())
        .unwrap_or_default();
    assert_eq!(scores.len(), 100, "[{check}] rows");
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "[{check}] descending");
    let page = post_page(
        ctx,
        id,
        Some(r#"{"limit": 2, "sort": {"field": "id", "order": "desc"}}"#),
        check,
    )
    .await;
    assert_eq!(
        (page["data"][0]["id"].as_u64(), page["data"][1]["id"].as_u64()),
        (Some(299), Some(298))
    );
    // `order` defaults to ascending.
    let page = post_page(
        ctx,
        id,
        Some(r#"{"offset": 5, "limit": 1, "sort": {"field": "id"}}"#),
        check,
    )
    .await;
    assert_eq!(page["data"][0]["id"], 5, "[{check}] ascending by default");
}

pub(crate) async fn head<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(30).await;
    let get = ctx.get(&format!("/{id}")).send().await;
    let head = ctx.head(&format!("/{id}")).send().await;
    head.expect_no_body(&format!("{check} HEAD /{{id}}"), 200);
    assert_eq!(
        head.header(header::CONTENT_TYPE),
        get.header(header::CONTENT_TYPE),
        "[{check}]"
    );
    // The metadata changes with every access (count, timestamp), so the lengths agree only roughly.
    let head_len: usize = head.header(header::CONTENT_LENGTH).parse().unwrap_or_default();
    assert!(
        head_len.abs_diff(get.body.len()) <= 16,
        "[{check}] HEAD's Content-Length {head_len} is about the GET body's {}",
        get.body.len()
    );
    let head = ctx.head(&format!("/{id}/data")).accept("text/csv").send().await;
    head.expect_no_body(&format!("{check} HEAD /{{id}}/data"), 200);
    assert!(
        head.header(header::CONTENT_TYPE).starts_with("text/csv"),
        "[{check}] csv"
    );
    let missing = ctx
        .head(&format!("/{}", dual_core::ResourceId::new()))
        .send()
        .await;
    missing.expect_no_body(&format!("{check} HEAD of an unknown id"), 404);
}

pub(crate) async fn concurrent_pages<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(1000).await;
    let requests = (0..50u64).map(|i| {
        let body = format!(r#"{{"offset": {}, "limit": 10}}"#, i * 10);
        async move { (i, ctx.post(&format!("/{id}")).json(&body).send().await) }
    });
    for (i, reply) in futures_util::future::join_all(requests).await {
        let page = reply.ok_json(check);
        assert_eq!(page["data"][0]["id"], i * 10, "[{check}] page {i}");
    }
    assert_eq!(ctx.access_count(id).await, 50, "[{check}] no access is lost");
}

/// `POST /{id}`, with `body` as JSON (none: no body, no `Content-Type`); asserts a 200 JSON page.
pub(crate) async fn post_page<T: Target>(
    ctx: &Ctx<T>,
    id: dual_core::ResourceId,
    body: Option<&str>,
    check: &str,
) -> Value {
    let mut req = ctx.post(&format!("/{id}"));
    if let Some(body) = body {
        req = req.json(body);
    }
    req.send().await.ok_json(check)
}
