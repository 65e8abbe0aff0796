//! Byte caps against the real `dual-response serve` binary (issue 21, finding 5): 2,000 rows of about
//! 100 KB. A `POST /{id}` page stays within `--max-page-bytes` and paging by `next_offset` yields
//! every row once; `resources/read` text stays within `--max-read-bytes`; a 1 MB bad identifier
//! comes back as bounded error text; the whole tool result stays within `--max-sample-bytes`.

mod support;

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};
use support::http::Http;
use support::{Instance, LIMIT, call, id_of, mcp, rest_client, text_of, within, written};
use tokio::time::timeout;

/// The hostile result: 2,000 rows whose `v` is 100,000 hex characters.
const WIDE: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 2000) \
                    SELECT x, hex(zeroblob(50000)) AS v FROM c";
/// The page cap the tests run with: 4 MB, about 40 of those rows.
const PAGE_CAP: usize = 4_000_000;
/// The tool-result cap the tests run with.
const SAMPLE_CAP: usize = 300_000;

/// How long the 200 MB query may take to run and snapshot (a debug build on a busy machine).
const CREATE_WITHIN: Duration = Duration::from_secs(240);
/// Upper bound of the 200 MB test.
const WIDE_LIMIT: Duration = Duration::from_secs(480);

/// Creates `sql` through MCP (a sample of 100 rows asked for) and returns the tool result.
async fn create(instance: &Instance, sql: &str) -> CallToolResult {
    let mcp = mcp(instance).await;
    let arguments = json!({"sql": sql, "sample_size": 100})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let result = timeout(
        CREATE_WITHIN,
        mcp.call_tool(CallToolRequestParams::new("query").with_arguments(arguments)),
    )
    .await
    .expect("the query ran within the time limit")
    .expect("tools/call answered");
    let _ = mcp.cancel().await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_pages_stay_within_the_cap_and_next_offset_reaches_every_row() {
    within(WIDE_LIMIT, async {
        let cap = PAGE_CAP.to_string();
        let sample_cap = SAMPLE_CAP.to_string();
        let instance =
            Instance::start_memory(&["--max-page-bytes", &cap, "--max-sample-bytes", &sample_cap]).await;
        let result = create(&instance, WIDE).await;

        // The whole tool result (text blocks and structuredContent) is within --max-sample-bytes.
        let bytes = serde_json::to_vec(&result).map(|v| v.len()).unwrap_or(usize::MAX);
        assert!(bytes <= SAMPLE_CAP, "the tool result is {bytes} bytes");
        let structured = result.structured_content.clone().unwrap_or_default();
        let kept = structured["metadata"]["sample_count"].as_u64().unwrap_or(0);
        assert!(
            kept >= 1,
            "rows of 100 KB fit a 300 KB result once: {structured:?}"
        );

        let parsed = dual_rmcp::client::parse_call_tool_result(&result, &rest_client(&instance))
            .expect("a dual response");
        // Every page of the snapshot: pages past the rows spooled so far would be 409 `not_ready`.
        written(&parsed).await;
        let path = format!("/resources/{}", id_of(&parsed));
        let http = Http::new(instance.addr());
        let mut offset = Some(0u64);
        let mut next_x = 1u64;
        let mut pages = 0;
        while let Some(at) = offset {
            let reply = http
                .post_json(&path, None, &json!({"offset": at, "limit": 10_000}))
                .await;
            assert_eq!(
                reply.status,
                200,
                "{}",
                reply.text().chars().take(300).collect::<String>()
            );
            assert!(
                reply.body.len() <= PAGE_CAP,
                "page at {at}: {} bytes",
                reply.body.len()
            );
            let page: Value = serde_json::from_slice(&reply.body).expect("a JSON page");
            let rows = page["data"].as_array().cloned().unwrap_or_default();
            assert_eq!(page["returned_count"], json!(rows.len()));
            assert!(
                !rows.is_empty() && rows.len() < 100,
                "cut by bytes: {} rows",
                rows.len()
            );
            for row in &rows {
                assert_eq!(row["x"], json!(next_x), "every row once, in order");
                assert_eq!(row["v"].as_str().map(str::len), Some(100_000), "whole rows");
                next_x += 1;
            }
            assert_eq!(page["has_next"], json!(next_x <= 2_000), "has_next is exact");
            offset = page["next_offset"].as_u64();
            if let Some(next) = offset {
                assert_eq!(next, at + rows.len() as u64);
            }
            pages += 1;
        }
        assert_eq!(next_x, 2_001, "all 2,000 rows");
        assert!(pages >= 50, "{pages} pages of at most 4 MB");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_page_is_cut_too() {
    within(LIMIT, async {
        let instance =
            Instance::start_memory(&["--snapshot-max-mb", "0", "--max-page-bytes", "1000000"]).await;
        let sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 100) \
                   SELECT x, hex(zeroblob(50000)) AS v FROM c";
        let result = create(&instance, sql).await;
        let parsed = dual_rmcp::client::parse_call_tool_result(&result, &rest_client(&instance))
            .expect("a dual response");
        let path = format!("/resources/{}", id_of(&parsed));
        let http = Http::new(instance.addr());
        let reply = http
            .post_json(&path, None, &json!({"offset": 5, "limit": 100}))
            .await;
        assert_eq!(reply.status, 200);
        assert!(reply.body.len() <= 1_000_000, "{} bytes", reply.body.len());
        let page = reply.json();
        assert_eq!(page["returned_count"], json!(9), "nine rows of 100 KB in 1 MB");
        assert_eq!(
            (page["has_next"].clone(), page["next_offset"].clone()),
            (json!(true), json!(14))
        );
        assert_eq!(page["data"][0]["x"], json!(6));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_read_text_stays_within_the_read_cap() {
    within(LIMIT, async {
        let instance = Instance::start_memory(&["--max-read-bytes", "262144"]).await;
        let sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 200) \
                   SELECT x, hex(zeroblob(50000)) AS v FROM c";
        let result = create(&instance, sql).await;
        let uri = result.structured_content.unwrap_or_default()["resource"]["uri"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mcp = mcp(&instance).await;
        let mut offset = 0;
        for _ in 0..3 {
            let read = mcp
                .read_resource(ReadResourceRequestParams::new(format!(
                    "{uri}?offset={offset}&limit=1000"
                )))
                .await
                .expect("resources/read");
            let text = match read.contents.as_slice() {
                [ResourceContents::TextResourceContents { text, .. }] => text.clone(),
                other => panic!("one text content, got {} items", other.len()),
            };
            assert!(
                text.len() <= 262_144,
                "{} bytes of text for the model",
                text.len()
            );
            let page: Value = serde_json::from_str(&text).expect("a JSON page");
            assert_eq!(page["returned_count"], json!(2), "two rows of 100 KB in 256 KiB");
            assert_eq!(page["next_offset"], json!(offset + 2));
            assert_eq!(page["data"][0]["x"], json!(offset + 1));
            offset += 2;
        }
        // A row alone larger than the cap is an error naming where to read on.
        let _ = mcp.cancel().await;
        let small = Instance::start_memory(&["--max-read-bytes", "65536"]).await;
        let result = create(&small, sql).await;
        let uri = result.structured_content.unwrap_or_default()["resource"]["uri"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mcp = support::mcp(&small).await;
        let error = mcp
            .read_resource(ReadResourceRequestParams::new(format!("{uri}?offset=7")))
            .await
            .expect_err("a 100 KB row alone passes 64 KiB");
        let message = error.to_string();
        assert!(message.contains("offset 8"), "{message}");
        let _ = mcp.cancel().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_megabyte_bad_identifier_comes_back_as_bounded_error_text() {
    within(LIMIT, async {
        let instance = Instance::start_memory(&["--max-error-text-bytes", "2048"]).await;
        let mcp = mcp(&instance).await;
        let identifier = "x".repeat(1 << 20);
        // SQLite names the unknown column in its error.
        let result = call(
            &mcp,
            "query",
            json!({"sql": format!("SELECT {identifier} FROM institutions")}),
        )
        .await;
        assert_eq!(result.is_error, Some(true));
        let text = text_of(&result);
        assert!(text.len() <= 2_048, "{} bytes of error text", text.len());
        assert!(
            text.contains("no such column") && text.ends_with("bytes in all]"),
            "{}",
            &text[..200.min(text.len())]
        );
        // An unknown argument named by a 1 MB key.
        let result = call(&mcp, "query", json!({"sql": "SELECT 1", identifier.clone(): 1})).await;
        assert_eq!(result.is_error, Some(true));
        let text = text_of(&result);
        assert!(text.len() <= 2_048, "{} bytes of error text", text.len());
        assert!(
            text.contains("unknown argument"),
            "{}",
            &text[..200.min(text.len())]
        );
        let _ = mcp.cancel().await;
    })
    .await;
}
