//! `GET /{id}/data?offset=N&limit=M`: row ranges, the unit of parallel download.

use http::header;
use serde_json::Value;

use super::Target;
use super::export_checks::NDJSON;
use super::fixtures::sorted_rows;
use super::support::{Ctx, Reply};

/// Rows of the range checks: more than two executor batches.
pub(crate) const ROWS: u64 = 2_345;

/// The NDJSON lines of a 200 export, as JSON values.
fn lines(reply: &Reply, check: &str, what: &str) -> Vec<Value> {
    reply.expect_complete(&format!("{check} {what}"));
    reply.ndjson()
}

async fn ndjson<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, query: &str) -> Reply {
    ctx.data(id, query).accept(NDJSON).send().await
}

/// Ranges of varying sizes (1, a batch and more, the rest), with and without a sort, put together
/// give every row exactly once and in order.
pub(crate) async fn split_into_ranges<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, check: &str) {
    for sort in [None, Some("score:desc"), Some("id")] {
        let parsed = sort.and_then(|s| dual_core::page::parse_sort_param(s).ok());
        let expected: Vec<Value> = sorted_rows(ROWS, parsed.as_ref())
            .into_iter()
            .map(|row| row["id"].clone())
            .collect();
        let sort_param = sort.map(|s| format!("&sort={s}")).unwrap_or_default();
        let mut got = Vec::new();
        let mut offset = 0;
        for size in [1u64, 999, 1, 1_200, 7].iter().copied().cycle() {
            if offset >= ROWS {
                break;
            }
            let query = format!("offset={offset}&limit={size}{sort_param}");
            let rows = lines(&ndjson(ctx, id, &query).await, check, &query);
            let want = size.min(ROWS - offset);
            assert_eq!(rows.len() as u64, want, "[{check}] {query}: row count");
            got.extend(rows.into_iter().map(|row| row["id"].clone()));
            offset += size;
        }
        assert_eq!(got, expected, "[{check}] sort {sort:?}: every row once, in order");
        // The same in two halves, the second open-ended (no `limit`).
        let head = lines(
            &ndjson(ctx, id, &format!("limit=1000{sort_param}")).await,
            check,
            "head",
        );
        let tail = lines(
            &ndjson(ctx, id, &format!("offset=1000{sort_param}")).await,
            check,
            "tail",
        );
        let ids: Vec<Value> = head.iter().chain(&tail).map(|row| row["id"].clone()).collect();
        assert_eq!(
            ids, expected,
            "[{check}] sort {sort:?}: limit=1000, then offset=1000"
        );
    }
}

/// A limit past the end is cut there; the empty range at `total_count` is an empty export in every
/// format; `HEAD` answers a range like the `GET`.
pub(crate) async fn edges<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, check: &str) {
    let query = format!("offset={}&limit=18446744073709551615", ROWS - 3);
    let rows = lines(&ndjson(ctx, id, &query).await, check, &query);
    let ids: Vec<u64> = rows.iter().filter_map(|row| row["id"].as_u64()).collect();
    assert_eq!(ids, [ROWS - 3, ROWS - 2, ROWS - 1], "[{check}] cut at the end");

    let at_end = format!("offset={ROWS}");
    let reply = ctx.data(id, &at_end).send().await;
    assert_eq!(reply.status.as_u16(), 200, "[{check}] offset == total_count");
    assert_eq!(reply.json(), serde_json::json!([]), "[{check}] empty JSON array");
    let reply = ctx.data(id, &at_end).accept("text/csv").send().await;
    assert_eq!(
        String::from_utf8_lossy(&reply.body),
        "id,name,score,active,tags,note\r\n",
        "[{check}] an empty CSV keeps its header"
    );
    let reply = ndjson(ctx, id, &format!("offset={ROWS}&limit=5")).await;
    assert_eq!(reply.status.as_u16(), 200, "[{check}] empty NDJSON status");
    assert!(reply.body.is_empty(), "[{check}] empty NDJSON");

    let reply = ctx.head(&format!("/{id}/data?offset=10&limit=10")).send().await;
    let check = format!("{check} HEAD with a range");
    reply.expect_no_body(&check, 200);
    reply.expect_header(&check, header::CONTENT_TYPE, "application/json");
}

pub(crate) async fn bad_ranges<T: Target>(ctx: &Ctx<T>, id: dual_core::ResourceId, check: &str) {
    let before = ctx.access_count(id).await;
    let beyond = format!("offset={}", ROWS + 1);
    for (query, names) in [
        ("offset=-1", "`offset`"),
        ("offset=1.5", "`offset`"),
        ("offset=abc", "`offset`"),
        ("offset=", "`offset`"),
        (beyond.as_str(), "`offset`"),
        ("offset=18446744073709551615", "`offset`"),
        ("offset=99999999999999999999", "`offset`"),
        ("limit=0", "`limit`"),
        ("limit=-3", "`limit`"),
        ("limit=2.0", "`limit`"),
        ("limit=1&limit=2", "`limit`"),
        ("offset=1&offset=1", "`offset`"),
    ] {
        ctx.data(id, query)
            .send()
            .await
            .expect_invalid(check, query, names);
        let reply = ctx.head(&format!("/{id}/data?{query}")).send().await;
        reply.expect_no_body(&format!("{check} HEAD {query}"), 400);
    }
    // Only the two offsets beyond the total (`ROWS + 1` and `u64::MAX`) reach the server (their
    // GETs; a HEAD counts nothing): they are checked against the record's `total_count`, read by
    // the same store call that counts the access. The rest are refused before it.
    assert_eq!(
        ctx.access_count(id).await,
        before + 2,
        "[{check}] ranges refused before the server do not count; an offset beyond the total does"
    );
}
