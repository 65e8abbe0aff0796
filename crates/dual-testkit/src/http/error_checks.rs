//! The error table of docs/DESIGN.md §5, plus hostile input.

use dual_core::ResourceId;
use http::{Method, header};
use serde_json::json;

use super::Target;
use super::fixtures::{EXECUTOR_SECRET, STORE_SECRET};
use super::read_checks::post_page;
use super::support::{Ctx, every_route};
use dual_http::DEFAULT_BODY_LIMIT;

pub(crate) async fn invalid_bodies<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(50).await;
    let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let cases: Vec<(String, &str)> = vec![
        ("{".into(), "JSON"),
        ("not json".into(), "JSON"),
        ("[]".into(), "object"),
        ("42".into(), "object"),
        (r#"{"offset": -1}"#.into(), "offset"),
        (r#"{"offset": 1.5}"#.into(), "offset"),
        (r#"{"offset": "1"}"#.into(), "offset"),
        (r#"{"offset": 1e400}"#.into(), "JSON"),
        (r#"{"limit": 0}"#.into(), "limit"),
        (r#"{"limit": 10001}"#.into(), "limit"),
        (r#"{"limit": -5}"#.into(), "limit"),
        (r#"{"limit": true}"#.into(), "limit"),
        (r#"{"limit": 18446744073709551616}"#.into(), "limit"),
        (r#"{"page": 2}"#.into(), "page"),
        (r#"{"sort": "score"}"#.into(), "sort"),
        (r#"{"sort": {"field": "nope"}}"#.into(), "sort.field"),
        (r#"{"sort": {"field": ""}}"#.into(), "sort.field"),
        (r#"{"sort": {"order": "desc"}}"#.into(), "sort.field"),
        (
            r#"{"sort": {"field": "score", "order": "sideways"}}"#.into(),
            "sort.order",
        ),
        (r#"{"sort": {"field": "score", "order": 1}}"#.into(), "sort.order"),
        (
            r#"{"sort": {"field": "score", "direction": "asc"}}"#.into(),
            "sort.direction",
        ),
        (nested, "JSON"),
    ];
    for (body, field) in cases {
        let reply = ctx.post(&format!("/{id}")).json(&body).send().await;
        let shown: String = body.chars().take(60).collect();
        reply.expect_invalid(check, &shown, field);
    }
    let reply = ctx
        .post(&format!("/{id}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(vec![b'{', 0xff, 0xfe, b'}'])
        .send()
        .await;
    reply.error(check, 400, "invalid_request");
    for (method, query) in [
        (Method::GET, "?x=1"),
        (Method::POST, "?limit=5"),
        (Method::PUT, "?a"),
    ] {
        let reply = ctx.req(method, &format!("/{id}{query}")).send().await;
        reply.expect_invalid(check, query, "query parameter");
    }
    // Only `{"sort": {"field": "nope"}}` reaches the store: its field is checked against the
    // record's columns, read by the same store call that counts the access. The rest are refused
    // before it.
    assert_eq!(
        ctx.access_count(id).await,
        1,
        "[{check}] requests refused before the store do not count; a sort on no column does"
    );
}

pub(crate) async fn not_found<T: Target>(ctx: &Ctx<T>, check: &str) {
    let unknown = ResourceId::new();
    let suffixes = [
        format!("/{unknown}"),
        format!("/{unknown}/data"),
        "/not-a-ulid".to_owned(),
        "/not-a-ulid/data".to_owned(),
        "/01J0000000000000000000000!".to_owned(),
        format!("/{}", "Z".repeat(4096)),
        format!("/{unknown}/other"),
        format!("/{unknown}/data/more"),
        format!("/{unknown}/"),
        "/".to_owned(),
    ];
    for suffix in &suffixes {
        for method in [Method::GET, Method::POST, Method::PUT, Method::DELETE] {
            let is_data_route = suffix.ends_with("/data");
            if is_data_route && method != Method::GET {
                continue; // 405 first: see the 405 check
            }
            let reply = ctx.req(method.clone(), suffix).send().await;
            let shown: String = suffix.chars().take(40).collect();
            reply.error(&format!("{check} {method} {shown}"), 404, "not_found");
        }
    }
}

pub(crate) async fn expired<T: Target>(ctx: &Ctx<T>, check: &str) {
    let now = ctx.server.clock().now();
    let id = saved_copy(ctx, check, |record| {
        record.expires_at = Some(now - dual_core::time::Duration::minutes(1));
    })
    .await;
    for (method, suffix) in [
        (Method::GET, format!("/{id}")),
        (Method::POST, format!("/{id}")),
        (Method::PUT, format!("/{id}")),
        (Method::GET, format!("/{id}/data")),
    ] {
        let reply = ctx.req(method.clone(), &suffix).send().await;
        reply.error(&format!("{check} {method}"), 404, "expired");
    }
}

/// A copy of a fresh resource of 10 rows under a new id, changed by `change` and saved straight to the
/// store.
async fn saved_copy<T: Target>(
    ctx: &Ctx<T>,
    check: &str,
    change: impl FnOnce(&mut dual_core::ResourceRecord),
) -> ResourceId {
    let live = ctx.create(10).await;
    let mut record = match ctx
        .server
        .get_resource(live, &dual_server::Caller::anonymous())
        .await
    {
        Ok(record) => record,
        Err(error) => panic!("[{check}] {error}"),
    };
    record.id = ResourceId::new();
    change(&mut record);
    if let Err(error) = ctx.server.store().save(&record).await {
        panic!("[{check}] could not store the changed copy: {error}");
    }
    record.id
}

/// A copy of a live resource saved with `status` (as a long-running query leaves it).
async fn copy_with_status<T: Target>(
    ctx: &Ctx<T>,
    check: &str,
    status: dual_core::status::ResourceStatus,
) -> ResourceId {
    let now = ctx.server.clock().now();
    saved_copy(ctx, check, |record| {
        record.status = status;
        record.lease_expires_at = Some(now + dual_core::time::Duration::hours(1));
        if status == dual_core::status::ResourceStatus::Failed {
            record.lease_expires_at = None;
            record.failure = Some(dual_core::status::QueryFailure::new(
                dual_core::status::FailureCode::QueryInterrupted,
                "the instance stopped",
            ));
        }
    })
    .await
}

/// docs/DESIGN.md §8: a pending resource's metadata shows its progress, its pages and exports are
/// 409 `not_ready` with `Retry-After`; a failed one's metadata shows the code, its pages and exports
/// are 500 `query_failed`, retryable as its failure.
pub(crate) async fn not_ready<T: Target>(ctx: &Ctx<T>, check: &str) {
    let pending = copy_with_status(ctx, check, dual_core::status::ResourceStatus::Pending).await;
    let body = ctx.get(&format!("/{pending}")).send().await.json();
    assert_eq!(body["status"], "pending", "[{check}] {body}");
    assert_eq!(body["progress"]["rows"], 10, "[{check}] {body}");
    for (method, suffix) in [
        (Method::POST, format!("/{pending}")),
        (Method::GET, format!("/{pending}/data")),
    ] {
        let reply = ctx.req(method.clone(), &suffix).send().await;
        reply.error(&format!("{check} {method}"), 409, "not_ready");
        assert_eq!(
            reply.header(header::RETRY_AFTER),
            "1",
            "[{check}] {method} Retry-After"
        );
        assert_eq!(reply.json()["retryable"], true, "[{check}] {method}");
    }
    let failed = copy_with_status(ctx, check, dual_core::status::ResourceStatus::Failed).await;
    let body = ctx.get(&format!("/{failed}")).send().await.json();
    assert_eq!(body["status"], "failed", "[{check}] {body}");
    assert_eq!(body["error"]["code"], "query_interrupted", "[{check}] {body}");
    let text = body.to_string();
    assert!(
        !text.contains("the instance stopped"),
        "[{check}] the model's message leaked: {text}"
    );
    for (method, suffix) in [
        (Method::POST, format!("/{failed}")),
        (Method::GET, format!("/{failed}/data")),
    ] {
        let reply = ctx.req(method.clone(), &suffix).send().await;
        let body = reply.json();
        assert_eq!(reply.status.as_u16(), 500, "[{check}] {method} {body}");
        assert_eq!(body["error"], "query_failed", "[{check}] {method}");
        assert_eq!(
            body["retryable"], true,
            "[{check}] {method}: an interrupted query may be run again"
        );
    }
}

pub(crate) async fn method_not_allowed<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(3).await;
    let item = "GET, HEAD, POST, PUT, DELETE";
    let data = "GET, HEAD";
    for (method, suffix, allow) in [
        (Method::PATCH, format!("/{id}"), item),
        (Method::OPTIONS, format!("/{id}"), item),
        (Method::TRACE, format!("/{id}"), item),
        (Method::POST, format!("/{id}/data"), data),
        (Method::PUT, format!("/{id}/data"), data),
        (Method::DELETE, format!("/{id}/data"), data),
        (Method::OPTIONS, format!("/{id}/data"), data),
        (Method::PATCH, "/not-a-ulid".to_owned(), item),
    ] {
        let reply = ctx.req(method.clone(), &suffix).send().await;
        reply.error(&format!("{check} {method}"), 405, "method_not_allowed");
        assert_eq!(reply.header(header::ALLOW), allow, "[{check}] {method} Allow");
    }
    let custom = match Method::from_bytes(b"BREW") {
        Ok(method) => method,
        Err(error) => panic!("[{check}] {error}"),
    };
    let reply = ctx.req(custom, &format!("/{id}")).send().await;
    reply.error(check, 405, "method_not_allowed");
}

pub(crate) async fn too_large<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(3).await;
    // Exactly at the limit is fine.
    let at_limit = padded(DEFAULT_BODY_LIMIT);
    let reply = ctx.post(&format!("/{id}")).json(&at_limit).send().await;
    assert_eq!(
        reply.ok_json(check)["returned_count"],
        1,
        "[{check}] body at the limit"
    );
    let over = padded(DEFAULT_BODY_LIMIT + 1);
    // Without Content-Length: caught while reading.
    let reply = ctx.post(&format!("/{id}")).json(&over).send().await;
    reply.error(check, 413, "payload_too_large");
    // With a Content-Length over the limit: refused before reading, whatever the type.
    for content_type in ["application/json", "text/plain"] {
        let reply = ctx
            .post(&format!("/{id}"))
            .header(header::CONTENT_TYPE, content_type)
            .header(header::CONTENT_LENGTH, &over.len().to_string())
            .body(over.clone())
            .send()
            .await;
        reply.error(check, 413, "payload_too_large");
    }
    // Very large: still only the limit is ever buffered.
    let huge = vec![b' '; 4 * 1024 * 1024];
    let reply = ctx
        .post(&format!("/{id}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(huge)
        .send()
        .await;
    reply.error(check, 413, "payload_too_large");
}

pub(crate) async fn not_json<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(3).await;
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("application/json; charset=latin1"),
        Some("text/json"),
        None,
    ] {
        let reply = ctx
            .post(&format!("/{id}"))
            .body(r#"{"limit": 1}"#)
            .header_opt(header::CONTENT_TYPE, content_type)
            .send()
            .await;
        reply.error(
            &format!("{check} {content_type:?}"),
            415,
            "unsupported_media_type",
        );
    }
}

pub(crate) async fn query_failed<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx
        .create_with(json!({"n": 500, "fail_fetch_over": 20}), None)
        .await;
    let reply = ctx.post(&format!("/{id}")).send().await;
    let message = reply.error(check, 500, "query_failed");
    for secret in [EXECUTOR_SECRET, "SELECT", "internal_table"] {
        assert!(
            !message.contains(secret) && !String::from_utf8_lossy(&reply.body).contains(secret),
            "[{check}] leaks {secret}"
        );
    }
    // The same resource still serves pages the executor can answer.
    let page = post_page(ctx, id, Some(r#"{"limit": 10}"#), check).await;
    assert_eq!(page["returned_count"], 10, "[{check}] small page");
}

pub(crate) async fn storage<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(3).await;
    ctx.store.set_broken(true);
    let mut replies = Vec::new();
    for (method, suffix) in every_route(id) {
        replies.push((method.clone(), ctx.req(method, &suffix).send().await));
    }
    ctx.store.set_broken(false);
    for (method, reply) in replies {
        let message = reply.error(&format!("{check} {method}"), 503, "storage_error");
        assert_eq!(reply.header(header::RETRY_AFTER), "1", "[{check}] Retry-After");
        for secret in [STORE_SECRET, "redis", "10.1.2.3"] {
            assert!(!message.contains(secret), "[{check}] leaks {secret}");
        }
    }
    ctx.get(&format!("/{id}")).send().await.ok_json(check);
}

pub(crate) async fn hostile<T: Target>(ctx: &Ctx<T>, check: &str) {
    let id = ctx.create(3).await;
    for suffix in [
        "/%00".to_owned(),
        "/..%2F..%2Fetc%2Fpasswd".to_owned(),
        "/../../etc/passwd".to_owned(),
        format!("/{id}%00"),
        format!("/{id}/data%2F"),
        format!("/{}", "%C3%A9".repeat(100)),
    ] {
        let reply = ctx.get(&suffix).send().await;
        reply.error(&format!("{check} {suffix}"), 404, "not_found");
    }
    let reply = ctx
        .data(id, "")
        .accept("garbage;;q=;;/,,*/*;q=2, text/csv;q=x")
        .send()
        .await;
    assert_eq!(
        reply.status.as_u16(),
        200,
        "[{check}] junk Accept falls back to JSON"
    );
    let reply = ctx
        .post(&format!("/{id}"))
        .header(header::CONTENT_TYPE, ";;;/+json")
        .body("{}")
        .send()
        .await;
    reply.error(check, 415, "unsupported_media_type");
    let reply = ctx
        .post(&format!("/{id}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_LENGTH, "not-a-number")
        .body(r#"{"limit": 1}"#)
        .send()
        .await;
    assert_eq!(
        reply.status.as_u16(),
        200,
        "[{check}] junk Content-Length: the body decides"
    );
}

/// `{"limit": 1}` padded with spaces to `len` bytes.
fn padded(len: usize) -> String {
    let mut body = r#"{"limit": 1}"#.to_owned();
    body.extend(std::iter::repeat_n(' ', len.saturating_sub(body.len())));
    body
}
