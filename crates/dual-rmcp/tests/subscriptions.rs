//! Resource subscriptions in a session (before 2026-07-28: `resources/subscribe`), an rmcp client
//! and `DatabaseMcp` in this process, its `query` tool running a gated executor: the subscriber is
//! told when a result turns ready, when it is deleted (also on another instance sharing the store)
//! and when it expires; nothing after `resources/unsubscribe`; another owner's result is not found;
//! the session's cap is a clear error. `subscriptions/listen` (2026-07-28) is tested over HTTP in
//! `protocol.rs`.
#![cfg(feature = "server")]
#![allow(deprecated, reason = "resources/subscribe is the legacy form this file tests")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Fixture, fixture};
use dual_rmcp::sql_tools::QUERY_TOOL;
use dual_rmcp::subscriptions::SubscriptionOptions;
use dual_server::{Caller, CreateResponse, DualResponseServer, QueryExecutor};
use dual_testkit::executor::Numbers;
use dual_testkit::wait::until;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ErrorCode, Implementation,
    ReadResourceRequestParams, ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};

/// The kind `DatabaseMcp`'s `query` runs.
const SQL_KIND: &str = "sql";
const POLL: Duration = Duration::from_millis(50);

/// A client that records the URIs of the `notifications/resources/updated` it receives.
#[derive(Clone, Default)]
struct Client {
    updated: Arc<Mutex<Vec<String>>>,
}

impl Client {
    fn updates(&self) -> Vec<String> {
        self.updated.lock().map(|u| u.clone()).unwrap_or_default()
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("subscriptions-test", "0"),
        )
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        if let Ok(mut updated) = self.updated.lock() {
            updated.push(params.uri);
        }
    }
}

/// Two instances running `executor` over one store and spool, a recording client in a session
/// with `DatabaseMcp` over the first (that may subscribe to `max` results at a time), and the
/// database whose schema it describes.
async fn connect(
    executor: &Arc<Numbers>,
    max: usize,
) -> (
    DualResponseServer,
    DualResponseServer,
    Client,
    RunningService<RoleClient, Client>,
    Fixture,
) {
    let (a, b) = dual_testkit::instances::two(|builder| {
        builder
            .shared_executor(SQL_KIND, Arc::clone(executor) as Arc<dyn QueryExecutor>)
            .pending_after(Duration::from_millis(30))
            .progress_interval(Duration::from_millis(20), Duration::from_secs(2))
    });
    let f = fixture("dual-rmcp-subscriptions-");
    let mcp = f.database_mcp_on(&a).with_subscriptions(
        SubscriptionOptions::default()
            .max_per_session(max)
            .poll_interval(POLL),
    );
    let client = Client::default();
    let session = common::connect(mcp, client.clone()).await;
    (a, b, client, session, f)
}

/// A pending result of the `query` tool: its URI.
async fn pending_result(client: &RunningService<RoleClient, Client>) -> String {
    let result = client
        .call_tool(
            CallToolRequestParams::new(QUERY_TOOL).with_arguments(
                json!({"sql": "SELECT id FROM slow"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("tools/call");
    let structured = result.structured_content.unwrap_or(Value::Null);
    assert_eq!(structured["metadata"]["status"], "pending", "{structured}");
    structured["resource"]["uri"].as_str().expect("a URI").to_owned()
}

/// A pending result of the `query` tool, subscribed to: its URI.
async fn subscribed_result(client: &RunningService<RoleClient, Client>) -> String {
    let uri = pending_result(client).await;
    client
        .peer()
        .subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .expect("resources/subscribe");
    uri
}

fn id_of(uri: &str) -> dual_core::ResourceId {
    uri.trim_start_matches("resource://")
        .parse()
        .expect("a resource id")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_is_told_when_its_result_is_ready_and_when_it_is_deleted_elsewhere() {
    let executor = Arc::new(Numbers::new().steps([2, 3]));
    let (_a, b, client, session, _f) = connect(&executor, 4).await;
    let uri = subscribed_result(&session).await;
    tokio::time::sleep(POLL * 4).await;
    assert!(
        client.updates().is_empty(),
        "nothing changed yet: {:?}",
        client.updates()
    );

    executor.open();
    until("told it is ready", async || client.updates().len() == 1).await;
    assert_eq!(client.updates(), std::slice::from_ref(&uri));

    // Deleted through the other instance: told once more, and then never again.
    b.delete_resource(id_of(&uri), &Caller::anonymous())
        .await
        .expect("deleted on B");
    until("told it is gone", async || client.updates().len() == 2).await;
    tokio::time::sleep(POLL * 4).await;
    assert_eq!(
        client.updates(),
        [uri.clone(), uri],
        "nothing after the result is gone"
    );
    session.cancel().await.expect("closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_to_the_profile_is_told_when_it_is_complete() {
    let executor = Arc::new(Numbers::new().steps([2, 3]));
    let (_a, _b, client, session, _f) = connect(&executor, 4).await;
    let uri = format!("{}/profile", pending_result(&session).await);
    session
        .peer()
        .subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .expect("resources/subscribe");
    let read = async || {
        let read = session
            .peer()
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .expect("resources/read");
        match read.contents.as_slice() {
            [ResourceContents::TextResourceContents { text, .. }] => {
                serde_json::from_str::<Value>(text).unwrap_or(Value::Null)
            }
            other => panic!("one text content: {other:?}"),
        }
    };
    assert_eq!(
        read().await["status"],
        "pending",
        "nothing profiled before the rows come"
    );
    executor.open();
    until("told the profile changed", async || !client.updates().is_empty()).await;
    assert!(
        client.updates().iter().all(|told| *told == uri),
        "{:?}",
        client.updates()
    );
    until("the profile is complete", async || {
        read().await["complete"] == true
    })
    .await;
    let profile = read().await;
    assert!(profile["rows"].as_u64().is_some_and(|rows| rows > 0), "{profile}");
    session.cancel().await.expect("closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_sent_after_unsubscribe_and_strangers_and_the_cap_are_refused() {
    let executor = Arc::new(Numbers::new().steps([2, 3]));
    let (a, _b, client, session, _f) = connect(&executor, 2).await;
    let uri = pending_result(&session).await;
    let peer = session.peer();
    peer.subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .expect("subscribe");
    peer.subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .expect("subscribing twice is acknowledged");
    peer.unsubscribe(UnsubscribeRequestParams::new(uri.clone()))
        .await
        .expect("unsubscribe is acknowledged");
    executor.open();
    tokio::time::sleep(POLL * 6).await;
    assert!(
        client.updates().is_empty(),
        "unsubscribed: {:?}",
        client.updates()
    );

    // Another owner's result is not found, like an unknown one or a URI that is no result.
    let bobs = a
        .create_response(CreateResponse::new(SQL_KIND, json!({"sql": "SELECT 1"})).owner("bob"))
        .await
        .expect("bob's result");
    for stranger in [
        bobs.uri.clone(),
        "resource://01J00000000000000000000000".to_owned(),
        "https://x/y".to_owned(),
    ] {
        let error = peer
            .subscribe(SubscribeRequestParams::new(stranger.clone()))
            .await
            .expect_err("not subscribable");
        let rmcp::ServiceError::McpError(error) = error else {
            panic!("{stranger}: {error:?}");
        };
        assert_eq!(error.code, ErrorCode::RESOURCE_NOT_FOUND, "{stranger}: {error:?}");
    }

    // The cap (2 here): a third result is refused, naming the cap.
    let expiring = a
        .create_response(
            CreateResponse::new(SQL_KIND, json!({"sql": "SELECT 1"})).expiration(Duration::from_millis(400)),
        )
        .await
        .expect("a result");
    let other = a
        .create_response(CreateResponse::new(SQL_KIND, json!({"sql": "SELECT 2"})))
        .await
        .expect("a result");
    let third = a
        .create_response(CreateResponse::new(SQL_KIND, json!({"sql": "SELECT 3"})))
        .await
        .expect("a result");
    peer.subscribe(SubscribeRequestParams::new(expiring.uri.clone()))
        .await
        .expect("1 of 2");
    peer.subscribe(SubscribeRequestParams::new(other.uri.clone()))
        .await
        .expect("2 of 2");
    let error = peer
        .subscribe(SubscribeRequestParams::new(third.uri.clone()))
        .await
        .expect_err("over the cap");
    let rmcp::ServiceError::McpError(error) = error else {
        panic!("{error:?}");
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(error.message.contains("at most 2"), "{}", error.message);

    // The expiring one is told when it expires, and frees its place.
    until("told it expired", async || {
        client.updates() == [expiring.uri.clone()]
    })
    .await;
    tokio::time::sleep(POLL * 2).await;
    peer.subscribe(SubscribeRequestParams::new(third.uri))
        .await
        .expect("a place is free again");
    session.cancel().await.expect("closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_is_told_when_its_query_fails() {
    let executor = Arc::new(Numbers::new().steps([2, 3]).then_fail());
    let (a, _b, client, session, _f) = connect(&executor, 4).await;
    let uri = subscribed_result(&session).await;
    executor.open();
    executor.open();
    until("told it failed", async || client.updates().len() == 1).await;
    let record = a
        .get_resource(id_of(&uri), &Caller::anonymous())
        .await
        .expect("the failed result is still there");
    assert_eq!(record.status, dual_core::status::ResourceStatus::Failed);
    session.cancel().await.expect("closed");
}
