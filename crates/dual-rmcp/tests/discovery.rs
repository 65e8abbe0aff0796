//! `resources/list` and the prompts over a server: each caller sees only its own results (an
//! anonymous caller the anonymous ones), page by page with a cursor, newest first; the prompts
//! refuse what they cannot serve with a clear `invalid params`.

use std::sync::Arc;

use dual_core::mcp::ProtocolVersion;
use dual_rmcp::prompts::{MAX_PROMPT_ARGUMENT_BYTES, Prompts};
use dual_server::{Caller, CreateResponse, DualResponseServer, QueryExecutor};
use dual_testkit::executor::Numbers;
use rmcp::model::{CacheScope, ErrorCode, JsonObject};
use serde_json::{Value, json};

fn server() -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://127.0.0.1:1/resources")
        .shared_executor("numbers", Arc::new(Numbers::new()) as Arc<dyn QueryExecutor>)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn create(server: &DualResponseServer, owner: Option<&str>, n: u64) -> String {
    let mut request = CreateResponse::new("numbers", json!({"n": n})).name(format!("numbers {n}"));
    if let Some(owner) = owner {
        request = request.owner(owner);
    }
    server
        .create_response(request)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .uri
}

fn args(value: Value) -> JsonObject {
    value.as_object().cloned().unwrap_or_default()
}

/// The messages of prompt `name` for `caller` with `arguments`, as JSON text.
async fn prompt_text(
    prompts: &Prompts,
    server: &DualResponseServer,
    caller: &Caller,
    name: &str,
    arguments: Value,
) -> String {
    let prompt = prompts
        .get(server, caller, name, Some(&args(arguments)))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    serde_json::to_string(&prompt.messages).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_caller_pages_through_its_own_results_newest_first() {
    let server = server();
    let mut alices = Vec::new();
    for n in 1..=5 {
        alices.push(create(&server, Some("alice"), n).await);
        create(&server, Some("bob"), n).await;
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let anonymous = create(&server, None, 9).await;
    alices.reverse();

    let alice = Caller::owner("alice");
    let version = ProtocolVersion::V2026_07_28;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = dual_rmcp::resources::list_resources(&server, &alice, cursor.as_deref(), 2, version)
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(page.resources.len() <= 2);
        assert_eq!(
            (page.ttl_ms, page.cache_scope),
            (Some(0), Some(CacheScope::Private))
        );
        for resource in &page.resources {
            assert_eq!(resource.mime_type.as_deref(), Some("application/json"));
            let description = resource.description.clone().unwrap_or_default();
            assert!(
                description.contains("rows, 4 columns (id, name, enrollment, public)")
                    && description.contains("expires"),
                "{description}"
            );
            assert!(
                resource
                    .annotations
                    .as_ref()
                    .and_then(|a| a.last_modified.as_ref())
                    .is_some()
            );
        }
        seen.extend(page.resources.iter().map(|r| r.uri.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, alices, "alice's five, newest first, nobody else's");

    let anonymous_list =
        dual_rmcp::resources::list_resources(&server, &Caller::anonymous(), None, 50, version)
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
    let uris: Vec<&str> = anonymous_list.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [anonymous.as_str()],
        "an anonymous caller sees the anonymous result only"
    );
    assert_eq!(anonymous_list.cache_scope, Some(CacheScope::Public));

    // Older versions get neither caching hints nor lastModified (2025-06-18 brought it).
    let old = dual_rmcp::resources::list_resources(&server, &alice, None, 1, ProtocolVersion::V2025_03_26)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!((old.ttl_ms, old.cache_scope), (None, None));
    assert!(old.resources[0].annotations.is_none());
    assert!(old.next_cursor.is_some());

    for bad in ["", "nonsense", "../etc/passwd"] {
        let error = dual_rmcp::resources::list_resources(&server, &alice, Some(bad), 2, version)
            .await
            .err()
            .unwrap_or_else(|| panic!("cursor {bad:?} accepted"));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    }
    // A page size of 0 lists one; a huge one is capped.
    let one = dual_rmcp::resources::list_resources(&server, &alice, None, 0, version)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(one.resources.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_explain_a_result_only_to_whoever_may_read_it() {
    let server = server();
    let prompts = Prompts::new("query");
    let uri = create(&server, Some("alice"), 12).await;
    let alice = Caller::owner("alice");
    let text = prompt_text(&prompts, &server, &alice, "explore_result", json!({"uri": uri})).await;
    assert!(
        text.contains("12 rows") && text.contains("- id (integer)"),
        "{text}"
    );

    let too_long = "x".repeat(MAX_PROMPT_ARGUMENT_BYTES + 1);
    for (caller, name, arguments) in [
        (Caller::owner("bob"), "explore_result", Some(json!({"uri": uri}))),
        (Caller::anonymous(), "explore_result", Some(json!({"uri": uri}))),
        (
            alice.clone(),
            "explore_result",
            Some(json!({"uri": "resource://01J00000000000000000000000"})),
        ),
        (
            alice.clone(),
            "explore_result",
            Some(json!({"uri": "https://example.com/x"})),
        ),
        (alice.clone(), "explore_result", None),
        (alice.clone(), "explore_result", Some(json!({"uri": 7}))),
        (alice.clone(), "answer_from_data", Some(json!({"question": "  "}))),
        (
            alice.clone(),
            "answer_from_data",
            Some(json!({"question": too_long})),
        ),
        (alice.clone(), "drop_everything", None),
    ] {
        let arguments = arguments.map(args);
        let error = prompts
            .get(&server, &caller, name, arguments.as_ref())
            .await
            .err()
            .unwrap_or_else(|| panic!("{name} {arguments:?} for {caller:?} answered"));
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}");
        assert!(error.message.len() < 200, "{}", error.message);
    }
    let listed = serde_json::to_value(prompts.list()).unwrap_or_default();
    assert_eq!(listed["prompts"][0]["arguments"][0]["required"], true);
    let text = prompt_text(
        &prompts,
        &server,
        &alice,
        "answer_from_data",
        json!({"question": "How many?"}),
    )
    .await;
    assert!(
        text.contains("`query`") && text.contains("exact total count"),
        "{text}"
    );
    assert!(
        !text.contains("describe_schema"),
        "no schema tool was named: {text}"
    );
}
