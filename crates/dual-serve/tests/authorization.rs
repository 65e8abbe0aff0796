//! Authorization on every surface of dual-serve with `DatabaseMcp`: one matrix of callers (the
//! owner, another owner, anonymous) × operations (REST metadata, page, export, pin and delete, and
//! MCP `resources/read`), on the memory store and, with the feature `services`, on Redis and
//! PostgreSQL.
//!
//! A caller that may not see a resource gets exactly what it gets for an id that never existed
//! (status, headers but `Date`, body; the id itself masked), and changes nothing: no pin, no delete,
//! no access counted. Without bearer tokens
//! ([`ServeOptions::authentication`](dual_serve::ServeOptions)) every caller is anonymous, and a
//! resource created with an owner is still hidden from it, over MCP `resources/read` too.

mod common;

use std::time::Duration;

use common::{Backend, INSTITUTIONS, JSON_POST, Reply, Served, within};
use dual_core::{ResourceId, ResourceRecord};
use dual_serve::auth::AuthTokens;
use dual_server::{Caller, CreateResponse};
use dual_testkit::raw_mcp::{RawMcp, exchange};
use http::StatusCode;
use serde_json::{Value, json};

/// Upper bound of one store's matrix.
const LIMIT: Duration = Duration::from_secs(120);
/// The owner of the resources under test.
const OWNER: &str = "tenant-a";
const TOKEN_A: &str = "token-of-tenant-a";
const TOKEN_B: &str = "token-of-tenant-b";
/// The query every test runs: every institution.
const SQL: &str = "SELECT id, name, state FROM institutions ORDER BY id";
/// Rows of [`SQL`].
const ROWS: u64 = INSTITUTIONS;
/// The protocol version of the MCP sessions: one with a session, before 2026-07-28.
const VERSION: &str = "2025-06-18";
/// `resources/read` of a resource the caller may not see, or that does not exist.
const RESOURCE_NOT_FOUND: i64 = -32002;

fn tokens() -> AuthTokens {
    AuthTokens::parse(&format!("{TOKEN_A} {OWNER}\n{TOKEN_B} tenant-b\n")).expect("tokens")
}

/// The operations on one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `GET /resources/{id}`.
    Metadata,
    /// `POST /resources/{id}`.
    Page,
    /// `GET /resources/{id}/data`.
    Export,
    /// MCP `resources/read` of `resource://{id}`.
    McpRead,
    /// `PUT /resources/{id}`.
    Pin,
    /// `DELETE /resources/{id}`.
    Delete,
}

/// Every operation, in the order the owner runs them: the reads, then pin, then delete.
const OPS: [Op; 6] = [
    Op::Metadata,
    Op::Page,
    Op::Export,
    Op::McpRead,
    Op::Pin,
    Op::Delete,
];

/// What an operation answered, comparable between two ids once [`Answer::masked`].
#[derive(Clone, PartialEq, Eq)]
enum Answer {
    /// An HTTP reply: status, every header but `date` (sorted), body.
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// An MCP `resources/read` over a session: the content's text, or the JSON-RPC error as JSON.
    Mcp(Result<String, String>),
}

impl Answer {
    fn from_reply(reply: Reply) -> Self {
        let mut headers: Vec<(String, String)> = reply
            .headers
            .into_iter()
            .filter(|(name, _)| name != "date")
            .collect();
        headers.sort();
        Self::Http {
            status: reply.status,
            headers,
            body: reply.body,
        }
    }

    /// The answer with every occurrence of `id` replaced by `{id}`.
    fn masked(self, id: &str) -> Self {
        let mask = |text: String| text.replace(id, "{id}");
        match self {
            Self::Http {
                status,
                headers,
                body,
            } => Self::Http {
                status,
                headers: headers.into_iter().map(|(n, v)| (n, mask(v))).collect(),
                body: mask(body),
            },
            Self::Mcp(result) => Self::Mcp(result.map(mask).map_err(mask)),
        }
    }
}

/// Bodies cut to a readable length: a failing comparison of two exports stays legible.
impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn short(text: &str) -> String {
            match text.char_indices().nth(300) {
                Some((end, _)) => format!("{}… ({} bytes)", &text[..end], text.len()),
                None => text.to_owned(),
            }
        }
        match self {
            Self::Http {
                status,
                headers,
                body,
            } => f
                .debug_struct("Http")
                .field("status", status)
                .field("headers", headers)
                .field("body", &short(body))
                .finish(),
            Self::Mcp(Ok(text)) => f.debug_tuple("Mcp::Ok").field(&short(text)).finish(),
            Self::Mcp(Err(error)) => f.debug_tuple("Mcp::Err").field(&short(error)).finish(),
        }
    }
}

/// How a caller that may not see a resource is turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Denied {
    /// It authenticated (or no authentication is configured): `404 not_found`, MCP `-32002`.
    NotFound,
    /// It did not authenticate to a server that requires it: `401` on every path.
    Unauthorized,
}

impl Denied {
    fn assert(self, answer: &Answer, what: &str) {
        match (self, answer) {
            (Self::Unauthorized, Answer::Http { status, body, .. }) => {
                assert_eq!(*status, 401, "{what}: {body}");
            }
            (Self::NotFound, Answer::Http { status, body, .. }) => {
                assert_eq!(*status, 404, "{what}: {body}");
                let body: Value = serde_json::from_str(body).expect("a JSON error body");
                assert_eq!(body["error"], "not_found", "{what}: {body}");
            }
            (Self::NotFound, Answer::Mcp(Err(error))) => {
                let error: Value = serde_json::from_str(error).expect("a JSON-RPC error");
                assert_eq!(error["code"], RESOURCE_NOT_FOUND, "{what}: {error}");
            }
            (denied, answer) => panic!("{what}: expected {denied:?}, got {answer:?}"),
        }
    }
}

/// One caller: its bearer token (if any) and, when the server admits it, an MCP session.
struct Client {
    name: &'static str,
    token: Option<&'static str>,
    mcp: Option<RawMcp>,
}

impl Client {
    /// Connects as `token`'s owner, or anonymously. An anonymous caller of a server that requires
    /// tokens gets no MCP session (its `initialize` is `401`, asserted); its `resources/read` is
    /// then a raw `POST /mcp`.
    async fn connect(server: &Served, name: &'static str, token: Option<&'static str>, auth: bool) -> Self {
        let mcp = if auth && token.is_none() {
            let refused = RawMcp::new(server.mcp_url(), VERSION);
            let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": VERSION, "capabilities": {},
                "clientInfo": {"name": name, "version": "0"}}});
            let (status, _, body) = exchange(refused.post(&initialize)).await;
            assert_eq!(
                status,
                StatusCode::UNAUTHORIZED,
                "{name}: an MCP session without a token: {body}"
            );
            None
        } else {
            Some(RawMcp::open(server.addr(), VERSION, json!({}), token).await)
        };
        Self { name, token, mcp }
    }

    /// Runs the `query` tool with [`SQL`]; returns the resource id of the result.
    async fn create(&mut self) -> String {
        let mcp = self.mcp.as_mut().expect("an MCP session");
        let result = mcp.call("query", json!({"sql": SQL})).await;
        assert_eq!(result["isError"], false, "{result}");
        let structured = &result["structuredContent"];
        assert_eq!(structured["metadata"]["total_count"], ROWS, "{structured}");
        structured["resource"]["uri"]
            .as_str()
            .and_then(|uri| uri.strip_prefix("resource://"))
            .expect("a resource URI")
            .to_owned()
    }

    /// Runs `op` on `id` against `server` (answers are masked by the caller of this function).
    async fn perform(&mut self, server: &Served, op: Op, id: &str) -> Answer {
        let path = format!("/resources/{id}");
        let reply = match op {
            Op::Metadata => self.send(server, "GET", &path, "").await,
            Op::Page => {
                let page = json!({"offset": 2, "limit": 5}).to_string();
                self.send(server, "POST", &path, &page).await
            }
            Op::Export => self.send(server, "GET", &format!("{path}/data"), "").await,
            Op::Pin => self.send(server, "PUT", &path, "").await,
            Op::Delete => self.send(server, "DELETE", &path, "").await,
            Op::McpRead => return self.read_resource(server, id).await,
        };
        Answer::from_reply(reply)
    }

    /// `method path` with `body` (JSON, for a `POST`), and `Authorization: Bearer TOKEN` when the
    /// client has one.
    async fn send(&self, server: &Served, method: &str, path: &str, body: &str) -> Reply {
        let bearer = self.token.map(|token| format!("Bearer {token}"));
        let mut headers: Vec<(&str, &str)> = if method == "POST" {
            JSON_POST.to_vec()
        } else {
            Vec::new()
        };
        if let Some(bearer) = &bearer {
            headers.push(("Authorization", bearer.as_str()));
        }
        common::send(server.addr(), method, path, &headers, body).await
    }

    async fn read_resource(&mut self, server: &Served, id: &str) -> Answer {
        let uri = format!("resource://{id}");
        if self.mcp.is_none() {
            // No session to be had: the request a client would send, without one.
            let message = json!({
                "jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}
            });
            return Answer::from_reply(self.send(server, "POST", "/mcp", &message.to_string()).await);
        }
        let mcp = self.mcp.as_mut().expect("an MCP session");
        let read = mcp.request("resources/read", json!({"uri": uri})).await;
        if let Some(error) = read.get("error") {
            return Answer::Mcp(Err(error.to_string()));
        }
        let contents = read["result"]["contents"].as_array().cloned().unwrap_or_default();
        let [content] = contents.as_slice() else {
            panic!("{}: one content expected: {read}", self.name);
        };
        let text = content["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{}: a text content expected: {read}", self.name));
        Answer::Mcp(Ok(text.to_owned()))
    }
}

/// The record of `id`, as its owner sees it, without counting an access.
async fn record(server: &Served, id: &str) -> ResourceRecord {
    let id: ResourceId = id.parse().expect("a resource id");
    server
        .running
        .server
        .get_resource(id, &Caller::owner(OWNER))
        .await
        .expect("the owner still has the resource")
}

/// Each of `callers` is denied `id` exactly as an unknown id ([`assert_like_unknown`]); afterwards
/// the resource is unchanged: there, unpinned, no access counted.
async fn assert_denied_like_unknown(server: &Served, id: &str, callers: Vec<(&mut Client, Denied)>) {
    let before = record(server, id).await;
    assert!(before.expires_at.is_some(), "created unpinned: {before:?}");
    for (client, denied) in callers {
        assert_like_unknown(server, client, id, denied, "").await;
    }
    let after = record(server, id).await;
    assert_eq!(after.expires_at, before.expires_at, "still unpinned");
    assert_eq!(after.access_count, before.access_count, "no access counted");
    assert_eq!(after.last_accessed_at, before.last_accessed_at);
}

/// The owner runs every operation on `id` successfully, deleting it last; then `id` answers the
/// owner exactly as an unknown id does.
async fn assert_owner_served(server: &Served, owner: &mut Client, id: &str) {
    let reads_before = record(server, id).await.access_count;
    for op in OPS {
        let what = format!("{} {op:?}", owner.name);
        let answer = owner.perform(server, op, id).await;
        let (status, body) = match &answer {
            Answer::Http { status, body, .. } => (*status, body.as_str()),
            Answer::Mcp(Ok(text)) => (200, text.as_str()),
            Answer::Mcp(Err(error)) => panic!("{what}: {error}"),
        };
        let json: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        match op {
            Op::Metadata => {
                assert_eq!(status, 200, "{what}: {body}");
                assert_eq!(json["id"], id, "{what}: {json}");
                assert_eq!(json["total_count"], ROWS, "{what}: {json}");
                assert!(json["expires_at"].is_string(), "{what}: unpinned: {json}");
            }
            Op::Page => {
                assert_eq!(status, 200, "{what}: {body}");
                assert_eq!(json["total_count"], ROWS, "{what}: {json}");
                assert_eq!(
                    (json["offset"].as_u64(), json["returned_count"].as_u64()),
                    (Some(2), Some(5))
                );
            }
            Op::McpRead => {
                assert_eq!(json["total_count"], ROWS, "{what}: {json}");
                assert!(json["returned_count"].as_u64() > Some(0), "{what}: {json}");
            }
            Op::Export => {
                assert_eq!(status, 200, "{what}: {body}");
                assert_eq!(
                    json.as_array().map(Vec::len),
                    Some(ROWS as usize),
                    "{what}: every row"
                );
            }
            Op::Pin => {
                assert_eq!(status, 200, "{what}: {body}");
                assert_eq!(json, json!({"status": "pinned", "expires_at": null}), "{what}");
                let pinned = record(server, id).await;
                assert_eq!(pinned.expires_at, None, "{what}: pinned");
                // The four reads above were counted: the denied ones could have been.
                assert_eq!(pinned.access_count, reads_before + 4, "{what}: accesses");
            }
            Op::Delete => assert_eq!(status, 204, "{what}: {body}"),
        }
    }
    assert_like_unknown(server, owner, id, Denied::NotFound, " after delete").await;
}

/// For each operation, `client`'s answer about `id` equals its answer about a fresh, never created
/// id, and is the `denied` answer.
async fn assert_like_unknown(server: &Served, client: &mut Client, id: &str, denied: Denied, when: &str) {
    for op in OPS {
        let what = format!("{} {op:?}{when}", client.name);
        let unknown = ResourceId::new().to_string();
        let answer = client.perform(server, op, id).await.masked(id);
        let baseline = client.perform(server, op, &unknown).await.masked(&unknown);
        assert_eq!(answer, baseline, "{what}: unlike an unknown id");
        denied.assert(&answer, &what);
    }
}

/// The matrix on one store, with bearer tokens for tenant A and tenant B.
async fn matrix(backend: Option<Backend>) {
    within(LIMIT, async {
        let server = Served::start(backend, |o| {
            o.authentication = dual_serve::auth::Authentication::Tokens(tokens());
        })
        .await;
        let mut owner = Client::connect(&server, "tenant A", Some(TOKEN_A), true).await;
        let mut other = Client::connect(&server, "tenant B", Some(TOKEN_B), true).await;
        let mut anonymous = Client::connect(&server, "anonymous", None, true).await;
        let id = owner.create().await;
        assert_eq!(record(&server, &id).await.owner.as_deref(), Some(OWNER));

        assert_denied_like_unknown(
            &server,
            &id,
            vec![
                (&mut other, Denied::NotFound),
                (&mut anonymous, Denied::Unauthorized),
            ],
        )
        .await;
        assert_owner_served(&server, &mut owner, &id).await;
        server.stop().await;
    })
    .await;
}

/// Without bearer tokens every caller is anonymous: a resource created with an owner (through the
/// library) is hidden from all of them, on every surface; one created without is served.
async fn without_tokens(backend: Option<Backend>) {
    within(LIMIT, async {
        let server = Served::start(backend, |_| {}).await;
        let create = |owner: Option<&str>| {
            let request = CreateResponse::new(dual_serve::SQL_KIND, json!({"sql": SQL}));
            let request = match owner {
                Some(owner) => request.owner(owner),
                None => request,
            };
            let server = server.running.server.clone();
            async move { server.create_response(request).await.expect("created") }
        };
        let owned = create(Some(OWNER)).await.id.to_string();
        let mut anonymous = Client::connect(&server, "anonymous", None, false).await;

        assert_denied_like_unknown(&server, &owned, vec![(&mut anonymous, Denied::NotFound)]).await;

        // The same caller is served a resource without an owner: the denial above is the owner's.
        let open = create(None).await.id.to_string();
        for op in [Op::Metadata, Op::McpRead] {
            match anonymous.perform(&server, op, &open).await {
                Answer::Http { status, body, .. } => assert_eq!(status, 200, "{op:?}: {body}"),
                Answer::Mcp(result) => {
                    let page: Value = serde_json::from_str(&result.expect("resources/read")).expect("JSON");
                    assert_eq!(page["total_count"], ROWS, "{page}");
                }
            }
        }
        server.stop().await;
    })
    .await;
}

/// Three tests of `scenario` (an async fn of the store's backend, `None` for the memory store):
/// `memory` on the memory store and, with the feature `services`, `redis` on Redis and `postgres` on
/// PostgreSQL.
macro_rules! on_every_store {
    ($scenario:ident: $memory:ident, $redis:ident, $postgres:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $memory() {
            $scenario(None).await;
        }

        #[cfg(feature = "services")]
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $redis() {
            $scenario(Some(Backend::Redis)).await;
        }

        #[cfg(feature = "services")]
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $postgres() {
            $scenario(Some(Backend::Postgres)).await;
        }
    };
}

on_every_store!(matrix: matrix_on_the_memory_store, matrix_on_redis, matrix_on_postgres);
on_every_store!(
    without_tokens: without_tokens_an_owned_resource_is_hidden_on_the_memory_store,
    without_tokens_an_owned_resource_is_hidden_on_redis,
    without_tokens_an_owned_resource_is_hidden_on_postgres
);
