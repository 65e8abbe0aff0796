//! Sorted pages against the real `dual-response serve` (issue 21): a snapshot over `--sort-max-rows` is
//! refused with `400 invalid_request` naming `sort` and what to do instead, while its unsorted pages
//! are served; with every derivation slot taken (`--sort-concurrency 1 --sort-wait-ms 0`), a further
//! sort is the retryable `503 overloaded` with `Retry-After`, and the orders derived are then cached.
//! Needs nothing but the toolchain.

mod support;

use http::StatusCode;
use serde_json::{Value, json};
use support::http::{Http, Reply};
use support::{Instance, LIMIT, call, id_of, mcp, rest_client, text_of, within, written};

/// 200,000 rows with a 64-character string: deriving its order takes a while, even optimised.
const WIDE: &str = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000) \
                    SELECT i, hex(randomblob(32)) AS wide FROM n";

/// Runs `sql` through the `query` tool and returns the resource's REST path.
async fn create(instance: &Instance, sql: &str) -> String {
    let mcp = mcp(instance).await;
    let result = call(&mcp, "query", json!({ "sql": sql })).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let _ = mcp.cancel().await;
    let parsed =
        dual_rmcp::client::parse_call_tool_result(&result, &rest_client(instance)).expect("a dual response");
    // The tool call answers at the first sample; a sort needs every row written.
    written(&parsed).await;
    let id = id_of(&parsed);
    format!("/resources/{id}")
}

async fn sorted_page(http: &Http, path: &str, field: &str, order: &str) -> Reply {
    let body = json!({ "limit": 5, "sort": { "field": field, "order": order } });
    http.post_json(path, None, &body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_over_the_sort_row_limit_is_refused_naming_sort_and_what_to_do() {
    within(LIMIT, async {
        let instance = Instance::start_memory(&["--sort-max-rows", "10"]).await;
        let path = create(&instance, "SELECT id, name FROM institutions LIMIT 11").await;
        let http = Http::new(instance.addr());

        let refused = sorted_page(&http, &path, "name", "asc").await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text());
        let body = refused.json();
        assert_eq!(body["error"], "invalid_request", "{body}");
        assert_eq!(body["retryable"], false, "{body}");
        let message = body["message"].as_str().unwrap_or_default();
        for expected in [
            "`sort` refused",
            "11 rows, more than the 10",
            "without `sort`",
            "export `/data` and sort it locally",
        ] {
            assert!(message.contains(expected), "{expected:?} in {message:?}");
        }
        let export = http
            .send(
                http.request(http::Method::GET, &format!("{path}/data?sort=name:desc"), None),
                "",
            )
            .await;
        assert_eq!(export.status, StatusCode::BAD_REQUEST, "{}", export.text());
        assert_eq!(export.json()["error"], "invalid_request");

        // Unsorted, the same resource is served.
        let page = http.post_json(&path, None, &json!({ "limit": 11 })).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text());
        assert_eq!(page.json()["data"].as_array().map(Vec::len), Some(11));
        // At the limit, it is sorted.
        let small = create(&instance, "SELECT id, name FROM institutions LIMIT 10").await;
        let sorted = sorted_page(&http, &small, "id", "desc").await;
        assert_eq!(sorted.status, StatusCode::OK, "{}", sorted.text());
        assert_eq!(sorted.json()["data"][0]["id"], 10);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_every_sort_slot_taken_a_further_sort_is_overloaded_then_orders_are_cached() {
    within(LIMIT, async {
        let instance = Instance::start_memory(&["--sort-concurrency", "1", "--sort-wait-ms", "0"]).await;
        let path = create(&instance, WIDE).await;
        let http = Http::new(instance.addr());

        // Four different orders at once: one slot, no wait, so those that find it taken are refused.
        let sorts = [("wide", "asc"), ("wide", "desc"), ("i", "desc"), ("i", "asc")];
        let replies = futures_util::future::join_all(
            sorts
                .iter()
                .map(|(field, order)| sorted_page(&http, &path, field, order)),
        )
        .await;
        let mut overloaded = 0;
        for (reply, sort) in replies.iter().zip(sorts) {
            if reply.status == StatusCode::OK {
                assert_eq!(reply.json()["data"].as_array().map(Vec::len), Some(5), "{sort:?}");
            } else {
                reply.assert_overloaded(&format!("{sort:?}"));
                let message = reply.json()["message"].as_str().unwrap_or_default().to_owned();
                assert!(message.contains("retry in"), "{message}");
                overloaded += 1;
            }
        }
        assert!(
            (1..=3).contains(&overloaded),
            "one slot and no wait: at least one of four sorts at once is refused, at least one served ({overloaded} refused)"
        );

        // One at a time, every order is derived (or served from the cache), and is right.
        let mut first: Option<Value> = None;
        for (field, order) in sorts {
            let reply = sorted_page(&http, &path, field, order).await;
            assert_eq!(reply.status, StatusCode::OK, "{field} {order}: {}", reply.text());
            if (field, order) == ("i", "desc") {
                assert_eq!(reply.json()["data"][0]["i"], 200_000);
            }
            if (field, order) == ("i", "asc") {
                first = Some(reply.json()["data"][0].clone());
            }
        }
        assert_eq!(first.map(|row| row["i"].clone()), Some(json!(1)));
    })
    .await;
}
