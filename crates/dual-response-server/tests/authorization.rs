//! Authorization on every surface: one matrix of callers (the owner, another owner, anonymous) ×
//! operations (REST metadata, page, export, pin and delete, and MCP `resources/read`), on the memory
//! store and, with the feature `services`, on Redis and PostgreSQL.
//!
//! A caller that may not see a resource gets exactly what it gets for an id that never existed
//! (status, headers but `Date`, body; the id itself masked), and changes nothing: no pin, no delete,
//! no access counted. Without `--auth-tokens` every caller is anonymous, and a resource created with
//! an owner is still hidden from it, over MCP `resources/read` too.

mod support;

use std::time::Duration;

use dual_core::{ResourceId, ResourceRecord};
use dual_response_server::mcp_client;
use dual_serve::auth::AuthTokens;
use dual_server::{Caller, CreateResponse};
use http::{Method, header};
use rmcp::ServiceError;
use rmcp::model::{ErrorCode, ReadResourceRequestParams, ResourceContents};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use support::http::{Http, Reply};
use support::in_process::InProcess;
use support::{Backend, SQL, query, text_of, within};
use tokio::time::timeout;

/// Upper bound of one store's matrix.
const LIMIT: Duration = Duration::from_secs(120);
/// The owner of the resources under test.
const OWNER: &str = "tenant-a";
const TOKEN_A: &str = "token-of-tenant-a";
const TOKEN_B: &str = "token-of-tenant-b";
/// Rows of [`SQL`] on the small dataset.
const ROWS: u64 = dual_response_server::demo::dataset::DatasetSize::SMALL.institutions as u64;

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
    fn from_reply(reply: &Reply) -> Self {
        let mut headers: Vec<(String, String)> = reply
            .headers
            .iter()
            .filter(|(name, _)| *name != header::DATE)
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect();
        headers.sort();
        Self::Http {
            status: reply.status.as_u16(),
            headers,
            body: reply.text(),
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
                assert_eq!(error["code"], ErrorCode::RESOURCE_NOT_FOUND.0, "{what}: {error}");
            }
            (denied, answer) => panic!("{what}: expected {denied:?}, got {answer:?}"),
        }
    }
}

/// One caller: its bearer token (if any) and, when the server admits it, an MCP session.
struct Client {
    name: &'static str,
    token: Option<&'static str>,
    http: Http,
    mcp: Option<RunningService<RoleClient, ()>>,
}

impl Client {
    /// Connects as `token`'s owner, or anonymously. An anonymous caller of a server that requires
    /// tokens gets no MCP session (asserted); its `resources/read` is then a raw `POST /mcp`.
    async fn connect(
        server: &InProcess,
        name: &'static str,
        token: Option<&'static str>,
        auth: bool,
    ) -> Self {
        let url = server.running.mcp_url();
        let connecting = async {
            match token {
                Some(token) => mcp_client::connect_with_token(&url, token).await,
                None => mcp_client::connect(&url).await,
            }
        };
        let Ok(session) = timeout(Duration::from_secs(20), connecting).await else {
            panic!("{name}: MCP initialization timed out");
        };
        let mcp = match session {
            Err(_) if auth && token.is_none() => None,
            Err(e) => panic!("{name}: MCP session: {e}"),
            Ok(_) if auth && token.is_none() => panic!("{name}: an MCP session without a token"),
            Ok(session) => Some(session),
        };
        Self {
            name,
            token,
            http: Http::new(server.addr()),
            mcp,
        }
    }

    /// Runs the `query` tool with [`SQL`]; returns the resource id of the result.
    async fn create(&self) -> String {
        let mcp = self.mcp.as_ref().expect("an MCP session");
        let result = query(mcp, SQL).await;
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        let structured = result.structured_content.expect("structuredContent");
        assert_eq!(structured["metadata"]["total_count"], ROWS, "{structured}");
        structured["resource"]["uri"]
            .as_str()
            .and_then(|uri| uri.strip_prefix("resource://"))
            .expect("a resource URI")
            .to_owned()
    }

    /// Runs `op` on `id` (answers are masked by the caller of this function).
    async fn perform(&self, op: Op, id: &str) -> Answer {
        let path = format!("/resources/{id}");
        let reply = match op {
            Op::Metadata => self.send(Method::GET, &path).await,
            Op::Page => {
                let page = json!({"offset": 2, "limit": 5});
                self.http.post_json(&path, self.token, &page).await
            }
            Op::Export => self.send(Method::GET, &format!("{path}/data")).await,
            Op::Pin => self.send(Method::PUT, &path).await,
            Op::Delete => self.send(Method::DELETE, &path).await,
            Op::McpRead => return self.read_resource(id).await,
        };
        Answer::from_reply(&reply)
    }

    async fn send(&self, method: Method, path: &str) -> Reply {
        self.http
            .send(self.http.request(method, path, self.token), "")
            .await
    }

    async fn read_resource(&self, id: &str) -> Answer {
        let uri = format!("resource://{id}");
        let Some(mcp) = &self.mcp else {
            // No session to be had: the request a client would send, without one.
            let message = json!({
                "jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}
            });
            let request = self
                .http
                .request(Method::POST, "/mcp", self.token)
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::ACCEPT, "application/json, text/event-stream");
            return Answer::from_reply(&self.http.send(request, message.to_string()).await);
        };
        let read = timeout(
            Duration::from_secs(20),
            mcp.read_resource(ReadResourceRequestParams::new(uri)),
        )
        .await
        .unwrap_or_else(|_| panic!("{}: resources/read did not answer", self.name));
        match read {
            Ok(result) => {
                let [ResourceContents::TextResourceContents { text, .. }] = result.contents.as_slice() else {
                    panic!("{}: one text content expected: {result:?}", self.name);
                };
                Answer::Mcp(Ok(text.clone()))
            }
            Err(ServiceError::McpError(error)) => {
                Answer::Mcp(Err(serde_json::to_string(&error).expect("an error serialises")))
            }
            Err(other) => panic!("{}: resources/read failed below MCP: {other}", self.name),
        }
    }

    async fn close(self) {
        if let Some(mcp) = self.mcp {
            let _ = mcp.cancel().await;
        }
    }
}

/// The record of `id`, as its owner sees it, without counting an access.
async fn record(server: &InProcess, id: &str) -> ResourceRecord {
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
async fn assert_denied_like_unknown(server: &InProcess, id: &str, callers: &[(&Client, Denied)]) {
    let before = record(server, id).await;
    assert!(before.expires_at.is_some(), "created unpinned: {before:?}");
    for &(client, denied) in callers {
        assert_like_unknown(client, id, denied, "").await;
    }
    let after = record(server, id).await;
    assert_eq!(after.expires_at, before.expires_at, "still unpinned");
    assert_eq!(after.access_count, before.access_count, "no access counted");
    assert_eq!(after.last_accessed_at, before.last_accessed_at);
}

/// The owner runs every operation on `id` successfully, deleting it last; then `id` answers the
/// owner exactly as an unknown id does.
async fn assert_owner_served(server: &InProcess, owner: &Client, id: &str) {
    let reads_before = record(server, id).await.access_count;
    for op in OPS {
        let what = format!("{} {op:?}", owner.name);
        let answer = owner.perform(op, id).await;
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
    assert_like_unknown(owner, id, Denied::NotFound, " after delete").await;
}

/// For each operation, `client`'s answer about `id` equals its answer about a fresh, never created
/// id, and is the `denied` answer.
async fn assert_like_unknown(client: &Client, id: &str, denied: Denied, when: &str) {
    for op in OPS {
        let what = format!("{} {op:?}{when}", client.name);
        let unknown = ResourceId::new().to_string();
        let answer = client.perform(op, id).await.masked(id);
        let baseline = client.perform(op, &unknown).await.masked(&unknown);
        assert_eq!(answer, baseline, "{what}: unlike an unknown id");
        denied.assert(&answer, &what);
    }
}

/// The matrix on one store, with `--auth-tokens` for tenant A and tenant B.
async fn matrix(backend: Option<Backend>) {
    within(LIMIT, async {
        let server = InProcess::start(backend, |o| {
            o.authentication = dual_serve::auth::Authentication::Tokens(tokens())
        })
        .await;
        let owner = Client::connect(&server, "tenant A", Some(TOKEN_A), true).await;
        let other = Client::connect(&server, "tenant B", Some(TOKEN_B), true).await;
        let anonymous = Client::connect(&server, "anonymous", None, true).await;
        let id = owner.create().await;
        assert_eq!(record(&server, &id).await.owner.as_deref(), Some(OWNER));

        assert_denied_like_unknown(
            &server,
            &id,
            &[(&other, Denied::NotFound), (&anonymous, Denied::Unauthorized)],
        )
        .await;
        assert_owner_served(&server, &owner, &id).await;

        for client in [owner, other, anonymous] {
            client.close().await;
        }
        server.stop().await;
    })
    .await;
}

/// Without `--auth-tokens` every caller is anonymous: a resource created with an owner (through the
/// library) is hidden from all of them, on every surface; one created without is served.
async fn without_tokens(backend: Option<Backend>) {
    within(LIMIT, async {
        let server = InProcess::start(backend, |_| {}).await;
        let create = |owner: Option<&str>| {
            let request = CreateResponse::new("sql", json!({"sql": SQL}));
            let request = match owner {
                Some(owner) => request.owner(owner),
                None => request,
            };
            let server = server.running.server.clone();
            async move { server.create_response(request).await.expect("created") }
        };
        let owned = create(Some(OWNER)).await.id.to_string();
        let anonymous = Client::connect(&server, "anonymous", None, false).await;

        assert_denied_like_unknown(&server, &owned, &[(&anonymous, Denied::NotFound)]).await;

        // The same caller is served a resource without an owner: the denial above is the owner's.
        let open = create(None).await.id.to_string();
        for op in [Op::Metadata, Op::McpRead] {
            match anonymous.perform(op, &open).await {
                Answer::Http { status, body, .. } => assert_eq!(status, 200, "{op:?}: {body}"),
                Answer::Mcp(result) => {
                    let page: Value = serde_json::from_str(&result.expect("resources/read")).expect("JSON");
                    assert_eq!(page["total_count"], ROWS, "{page}");
                }
            }
        }
        anonymous.close().await;
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
