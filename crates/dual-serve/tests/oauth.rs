//! dual-serve as an OAuth 2.1 resource server (issue 44), over real sockets, against a local issuer
//! made by the test (dual-testkit's `oauth_issuer`): its keys generated here (RSA by the `openssl`
//! CLI, P-256 and Ed25519 by ring), its metadata and key set served by a small hyper server on
//! 127.0.0.1 that counts key set fetches and can be stopped. Every wait is bounded.
//!
//! The two tests with RSA keys need the `openssl` CLI (ring verifies RSA but does not generate keys), so
//! they run with the feature `services`, as the other tests that need a tool besides the Rust toolchain
//! (`bash .ci/services` installs it); the P-256 and Ed25519 tests run everywhere.
#![cfg_attr(
    not(feature = "services"),
    allow(
        dead_code,
        unused_imports,
        reason = "helpers of the RSA tests, which need `services`"
    )
)]

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use dual_serve::Running;
use dual_serve::auth::{Authentication, OAuthOptions, OAuthOptionsBuilder};
use dual_testkit::oauth_issuer::{
    CLIENT, Issuer, Signer, b64, claims, ec_key, ed_key, jwks, now, rsa_key, signing_input,
};
use serde_json::{Value, json};

use common::{Reply, TempDb, send};

// --- the server under test ---------------------------------------------------------------------

/// Serves `db` on a free loopback port, trusting `issuer` with the settings of `configure`.
async fn serve(
    db: &TempDb,
    issuer: &Issuer,
    configure: impl FnOnce(OAuthOptionsBuilder) -> OAuthOptionsBuilder,
) -> Running {
    let oauth = configure(OAuthOptions::builder(issuer.url.clone()).fetch_timeout(Duration::from_secs(3)))
        .build()
        .expect("valid OAuth options");
    common::serve(db, |options| {
        options.authentication = Authentication::OAuth(oauth)
    })
    .await
}

/// The resource URI tokens must name: the server's MCP URL (the default).
fn resource(running: &Running) -> String {
    format!("http://{}/mcp", running.addr)
}

fn metadata_url(running: &Running) -> String {
    format!("http://{}/.well-known/oauth-protected-resource/mcp", running.addr)
}

// --- raw HTTP: common::send ------------------------------------------------------------------

const UNKNOWN_ID: &str = "/resources/01ARZ3NDEKTSV4RRFFQ69G5FAV";

fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "dual-serve-oauth-test", "version": "0"}}})
    .to_string()
}

/// `POST /mcp` of an `initialize` with `authorization` (if any).
async fn initialize_with(addr: SocketAddr, authorization: Option<&str>) -> Reply {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(authorization) = authorization {
        headers.push(("Authorization", authorization));
    }
    send(addr, "POST", "/mcp", &headers, &initialize()).await
}

/// `GET` of an unknown resource with `token`: `404` once authenticated.
async fn get_unknown(addr: SocketAddr, token: &str) -> Reply {
    let bearer = format!("Bearer {token}");
    send(addr, "GET", UNKNOWN_ID, &[("Authorization", bearer.as_str())], "").await
}

/// `GET path` with the `Authorization` header `bearer`.
async fn get_as(addr: SocketAddr, path: &str, bearer: &str) -> Reply {
    send(addr, "GET", path, &[("Authorization", bearer)], "").await
}

/// Runs the `query` tool in a new MCP session with `token`; returns the new resource's id.
async fn create_resource(addr: SocketAddr, token: &str) -> String {
    let session = open_session(addr, token).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "query", "arguments": {"sql": "SELECT * FROM t"}}});
    let reply = mcp_post(addr, token, &session, &call.to_string()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let answer = reply.answer();
    answer["result"]["structuredContent"]["resource"]["uri"]
        .as_str()
        .and_then(|uri| uri.strip_prefix("resource://"))
        .unwrap_or_else(|| panic!("a resource: {answer}"))
        .to_owned()
}

/// Opens an MCP session with `token` (initialize, initialized); returns its id.
async fn open_session(addr: SocketAddr, token: &str) -> String {
    let init = initialize_with(addr, Some(&format!("Bearer {token}"))).await;
    assert_eq!(init.status, 200, "{}", init.body);
    let session = init.header("mcp-session-id").expect("a session").to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(mcp_post(addr, token, &session, initialized).await.status, 202);
    session
}

/// `POST /mcp` of `message` in `session` with `token`.
async fn mcp_post(addr: SocketAddr, token: &str, session: &str, message: &str) -> Reply {
    let bearer = format!("Bearer {token}");
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session),
        ("Mcp-Protocol-Version", "2025-06-18"),
    ];
    send(addr, "POST", "/mcp", &headers, message).await
}

/// A `resources/read` of the result `id`.
fn read_message(id: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
           "params": {"uri": format!("resource://{id}")}})
    .to_string()
}

fn assert_invalid_token(reply: &Reply, running: &Running, what: &str) {
    assert_eq!(reply.status, 401, "{what}: {}", reply.body);
    let challenge = format!(
        r#"Bearer error="invalid_token", resource_metadata="{}""#,
        metadata_url(running)
    );
    assert_eq!(
        reply.header("www-authenticate"),
        Some(challenge.as_str()),
        "{what}"
    );
    assert_eq!(reply.answer()["error"], "unauthorized", "{what}");
}

// --- the tests ---------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_is_public_and_every_challenge_names_it() {
    let key = ec_key("k1");
    let issuer = Issuer::start(jwks(&[&key])).await;
    let db = TempDb::new();
    let running = serve(&db, &issuer, |b| b.tool_scope("mcp:tools").read_scope("mcp:read")).await;
    let addr = running.addr;

    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let reply = send(addr, "GET", path, &[], "").await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        assert_eq!(
            reply.answer(),
            json!({"resource": resource(&running), "authorization_servers": [issuer.url],
                   "bearer_methods_supported": ["header"], "scopes_supported": ["mcp:tools", "mcp:read"]}),
            "{path}"
        );
    }
    let post = send(addr, "POST", "/.well-known/oauth-protected-resource", &[], "").await;
    assert_eq!(post.status, 405);

    let bare = format!(r#"Bearer resource_metadata="{}""#, metadata_url(&running));
    for authorization in [
        None,
        Some("Basic YWxpY2U6cHc="),
        Some("Bearer"),
        Some("Bearer   "),
    ] {
        let mcp = initialize_with(addr, authorization).await;
        assert_eq!(mcp.status, 401, "{authorization:?}: {}", mcp.body);
        assert_eq!(
            mcp.header("www-authenticate"),
            Some(bare.as_str()),
            "{authorization:?}"
        );
        let rest = match authorization {
            Some(value) => send(addr, "GET", UNKNOWN_ID, &[("Authorization", value)], "").await,
            None => send(addr, "GET", UNKNOWN_ID, &[], "").await,
        };
        assert_eq!(rest.status, 401, "{authorization:?}");
        assert_eq!(
            rest.header("www-authenticate"),
            Some(bare.as_str()),
            "{authorization:?}"
        );
    }
    let oversize = format!("Bearer {}", "a".repeat(20_000));
    let malformed_tokens = [
        "Bearer not-a-jwt",
        "Bearer a.b",
        "Bearer a.b.c.d",
        oversize.as_str(),
    ];
    for authorization in malformed_tokens {
        let reply = initialize_with(addr, Some(authorization)).await;
        assert_invalid_token(&reply, &running, &authorization[..20.min(authorization.len())]);
        assert!(
            !reply.body.contains("not-a-jwt"),
            "the token is never echoed: {}",
            reply.body
        );
    }
    // No key was needed for any of that.
    assert_eq!(issuer.jwks_fetches(), 0);
    running.shutdown().await;
}

#[cfg(feature = "services")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn valid_tokens_of_every_algorithm_let_their_subjects_in_and_keep_them_apart() {
    let (rsa, ec, ed) = (rsa_key("rsa-1"), ec_key("ec-1"), ed_key("ed-1"));
    let issuer = Issuer::start(jwks(&[&rsa, &ec, &ed])).await;
    let db = TempDb::new();
    let running = serve(&db, &issuer, |b| b).await;
    let (addr, aud) = (running.addr, resource(&running));

    let alice = rsa.token(&claims(&issuer.url, &aud, "alice"));
    let bob = ec.token(&claims(&issuer.url, &aud, "bob"));
    for (alg, token) in [
        ("RS256", alice.clone()),
        (
            "PS256",
            rsa.token_as("PS256", "rsa-1", &claims(&issuer.url, &aud, "carol")),
        ),
        ("ES256", bob.clone()),
        ("EdDSA", ed.token(&claims(&issuer.url, &aud, "dave"))),
    ] {
        let reply = get_unknown(addr, &token).await;
        assert_eq!(
            reply.status, 404,
            "{alg}: authenticated, and no such resource: {}",
            reply.body
        );
        let init = initialize_with(addr, Some(&format!("Bearer {token}"))).await;
        assert_eq!(init.status, 200, "{alg}: {}", init.body);
    }
    // The audience may be an array naming the resource among others.
    let mut several = claims(&issuer.url, &aud, "erin");
    several["aud"] = json!(["https://other.example.com", aud]);
    assert_eq!(get_unknown(addr, &ec.token(&several)).await.status, 404);

    let id = create_resource(addr, &alice).await;
    let path = format!("/resources/{id}");
    let (alice_bearer, bob_bearer) = (format!("Bearer {alice}"), format!("Bearer {bob}"));
    let as_alice = get_as(addr, &path, &alice_bearer).await;
    assert_eq!(as_alice.status, 200, "the owner reads it: {}", as_alice.body);
    let bob_headers = [
        ("Authorization", bob_bearer.as_str()),
        ("Content-Type", "application/json"),
    ];
    let page = r#"{"offset": 0, "limit": 2}"#;
    for (method, path, body) in [
        ("GET", path.clone(), ""),
        ("POST", path.clone(), page),
        ("GET", format!("{path}/data?format=csv"), ""),
        ("PUT", path.clone(), ""),
        ("DELETE", path.clone(), ""),
    ] {
        let as_bob = send(addr, method, &path, &bob_headers, body).await;
        assert_eq!(
            as_bob.status, 404,
            "{method} {path}: another subject does not see it: {}",
            as_bob.body
        );
    }
    // Nor over MCP: `resources/read` in bob's own session is the unknown-resource error.
    let session = open_session(addr, &bob).await;
    let reply = mcp_post(addr, &bob, &session, &read_message(&id)).await;
    let answer = reply.answer();
    assert!(
        answer.get("error").is_some(),
        "bob cannot read alice's result: {answer}"
    );
    // And the owner still has it (nothing bob did touched it).
    let again = get_as(addr, &path, &alice_bearer).await;
    assert_eq!(again.status, 200, "{}", again.body);
    // One key set fetch served every token.
    assert_eq!(issuer.jwks_fetches(), 1);
    running.shutdown().await;
}

#[cfg(feature = "services")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_token_is_refused_as_invalid_token() {
    let (rsa, ec, impostor) = (rsa_key("rsa-1"), ec_key("ec-1"), ec_key("ec-1"));
    let issuer = Issuer::start(jwks(&[&rsa, &ec])).await;
    let db = TempDb::new();
    let running = serve(&db, &issuer, |b| b.leeway(Duration::from_secs(30))).await;
    let (addr, aud, iss) = (running.addr, resource(&running), issuer.url.clone());
    let good = claims(&iss, &aud, "alice");
    let with = |name: &str, value: Value| {
        let mut claims = good.clone();
        claims[name] = value;
        claims
    };
    let now = now();

    // HS256 keyed with the RSA public key's bytes: the classic algorithm confusion.
    let Signer::Rsa(pair) = &rsa.signer else {
        unreachable!("an RSA key")
    };
    let input = signing_input(&json!({"alg": "HS256", "kid": "rsa-1"}), &good);
    let hmac = ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, pair.public().as_ref()),
        input.as_bytes(),
    );
    let hs256 = format!("{input}.{}", b64(hmac.as_ref()));
    let none = format!("{}.", signing_input(&json!({"alg": "none"}), &good));
    let none_signed = format!(
        "{}.c2ln",
        signing_input(&json!({"alg": "none", "kid": "ec-1"}), &good)
    );
    // A valid token whose payload is swapped for another subject's.
    let valid = ec.token(&good);
    let mut parts: Vec<&str> = valid.split('.').collect();
    let bob = b64(with("sub", json!("bob")).to_string().as_bytes());
    parts[1] = bob.as_str();
    let tampered = parts.join(".");
    let untrusted = Issuer::start(jwks(&[&ec])).await;

    for (what, token) in [
        ("expired", ec.token(&with("exp", json!(now - 3600)))),
        (
            "expired beyond the leeway",
            ec.token(&with("exp", json!(now - 40))),
        ),
        ("not yet valid", ec.token(&with("nbf", json!(now + 3600)))),
        (
            "no expiry",
            ec.token(&{
                let mut claims = good.clone();
                claims.as_object_mut().expect("an object").remove("exp");
                claims
            }),
        ),
        (
            "wrong audience",
            ec.token(&with("aud", json!("https://other.example.com/mcp"))),
        ),
        ("no audience", ec.token(&with("aud", json!(null)))),
        ("wrong issuer", ec.token(&with("iss", json!(untrusted.url)))),
        ("no subject", ec.token(&with("sub", json!(null)))),
        ("a number as subject", ec.token(&with("sub", json!(42)))),
        ("alg none", none),
        ("alg none with a signature", none_signed),
        ("HS256 keyed with the RSA public key", hs256),
        (
            "RS256 under the EC key's kid",
            rsa.token_as("RS256", "ec-1", &good),
        ),
        ("another key under the same kid", impostor.token(&good)),
        ("a tampered payload", tampered),
    ] {
        let reply = get_unknown(addr, &token).await;
        assert_invalid_token(&reply, &running, what);
        let reply = initialize_with(addr, Some(&format!("Bearer {token}"))).await;
        assert_invalid_token(&reply, &running, what);
    }
    // Within the leeway, an expired token still passes.
    assert_eq!(
        get_unknown(addr, &ec.token(&with("exp", json!(now - 10))))
            .await
            .status,
        404
    );
    assert_eq!(get_unknown(addr, &valid).await.status, 404);
    // None of the bad tokens named an unknown kid: one fetch in all.
    assert_eq!(issuer.jwks_fetches(), 1);
    assert_eq!(untrusted.jwks_fetches(), 0, "an untrusted issuer is never asked");
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_kid_costs_one_refresh_which_picks_up_a_rotation() {
    let (old, new) = (ec_key("2026-01"), ed_key("2026-02"));
    let issuer = Issuer::start(jwks(&[&old])).await;
    let db = TempDb::new();
    let running = serve(&db, &issuer, |b| b).await;
    let (addr, aud) = (running.addr, resource(&running));

    let before = old.token(&claims(&issuer.url, &aud, "alice"));
    assert_eq!(get_unknown(addr, &before).await.status, 404);
    assert_eq!(issuer.jwks_fetches(), 1);

    // The issuer rotates: the new key replaces the old one.
    issuer.publish(jwks(&[&new]));
    let after = new.token(&claims(&issuer.url, &aud, "alice"));
    assert_eq!(
        get_unknown(addr, &after).await.status,
        404,
        "the new key is fetched"
    );
    assert_eq!(
        issuer.jwks_fetches(),
        2,
        "exactly one refresh for the unknown kid"
    );
    assert_eq!(get_unknown(addr, &after).await.status, 404);

    // More unknown kids within the interval: no more fetches.
    let ghost = ec_key("ghost").token(&claims(&issuer.url, &aud, "alice"));
    for token in [&ghost, &before] {
        assert_invalid_token(&get_unknown(addr, token).await, &running, "an unknown kid");
    }
    assert_eq!(
        issuer.jwks_fetches(),
        2,
        "refreshes for unknown kids are rate-limited"
    );
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_keys_outlive_the_issuer_until_their_lifetime_then_503() {
    let key = ec_key("k1");
    let issuer = Issuer::start(jwks(&[&key])).await;
    issuer.set_cache_control("public, max-age=4");
    let db = TempDb::new();
    let running = serve(&db, &issuer, |b| {
        b.keys_lifetime(Duration::from_secs(1), Duration::from_secs(3600))
    })
    .await;
    let (addr, aud) = (running.addr, resource(&running));
    let token = key.token(&claims(&issuer.url, &aud, "alice"));

    assert_eq!(get_unknown(addr, &token).await.status, 404);
    issuer.stop();
    assert_eq!(
        get_unknown(addr, &token).await.status,
        404,
        "the cached keys still work"
    );
    // Real time: the keys' lifetime (max-age=4) runs out on the server's clock.
    tokio::time::sleep(Duration::from_millis(4200)).await;
    for _ in 0..2 {
        let reply = get_unknown(addr, &token).await;
        assert_eq!(reply.status, 503, "{}", reply.body);
        let retry_after: u64 = reply
            .header("retry-after")
            .and_then(|value| value.parse().ok())
            .expect("a Retry-After in seconds");
        assert!((1..=5).contains(&retry_after), "{retry_after}");
        assert_eq!(reply.answer()["retryable"], true);
    }
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_surface_requires_its_scope() {
    let key = ec_key("k1");
    let issuer = Issuer::start(jwks(&[&key])).await;
    let db = TempDb::new();
    let running = serve(&db, &issuer, |b| b.tool_scope("mcp:tools").read_scope("mcp:read")).await;
    let (addr, aud) = (running.addr, resource(&running));
    let scoped = |scope: &str| {
        let mut claims = claims(&issuer.url, &aud, "alice");
        claims["scope"] = json!(scope);
        key.token(&claims)
    };
    let challenge = |scope: &str| {
        format!(
            r#"Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{}""#,
            metadata_url(&running)
        )
    };

    // The tool scope alone: tools run, results are not read (REST or `resources/read`).
    let tools_only = scoped("mcp:tools");
    let id = create_resource(addr, &tools_only).await;
    let tools_session = open_session(addr, &tools_only).await;
    let read = mcp_post(addr, &tools_only, &tools_session, &read_message(&id)).await;
    assert_eq!(read.status, 403, "{}", read.body);
    assert_eq!(
        read.header("www-authenticate"),
        Some(challenge("mcp:read").as_str())
    );
    let rest = get_unknown(addr, &tools_only).await;
    assert_eq!(rest.status, 403, "{}", rest.body);
    assert_eq!(
        rest.header("www-authenticate"),
        Some(challenge("mcp:read").as_str())
    );
    assert_eq!(rest.answer()["error"], "insufficient_scope");

    // The read scope alone: the same owner's results are read, no tool runs.
    let read_only = scoped("openid mcp:read");
    assert_eq!(get_unknown(addr, &read_only).await.status, 404);
    let read_session = open_session(addr, &read_only).await;
    let read = mcp_post(addr, &read_only, &read_session, &read_message(&id)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert!(read.answer()["result"]["contents"].is_array(), "{}", read.body);
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                      "params": {"name": "query", "arguments": {"sql": "SELECT 1"}}});
    let refused = mcp_post(addr, &read_only, &read_session, &call.to_string()).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(
        refused.header("www-authenticate"),
        Some(challenge("mcp:tools").as_str())
    );
    // A message whose method is ambiguous is not let through.
    let twice = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","method":"tools/call","params":{"name":"query","arguments":{"sql":"SELECT 1"}}}"#;
    assert_eq!(mcp_post(addr, &read_only, &read_session, twice).await.status, 400);

    // Microsoft Entra's and Okta's `scp` array counts too.
    let mut claims = claims(&issuer.url, &aud, "alice");
    claims.as_object_mut().expect("an object").remove("scope");
    claims["scp"] = json!(["mcp:read"]);
    assert_eq!(get_unknown(addr, &key.token(&claims)).await.status, 404);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opaque_tokens_are_introspected_and_the_answers_cached() {
    let key = ec_key("k1");
    let issuer = Issuer::start(jwks(&[&key])).await;
    let db = TempDb::new();
    let endpoint = format!("{}/introspect", issuer.url);
    let running = serve(&db, &issuer, |b| b.introspection(endpoint, CLIENT.0, CLIENT.1)).await;
    let (addr, aud) = (running.addr, resource(&running));
    let active = |sub: &str, aud: &str| {
        json!({"active": true, "sub": sub, "aud": aud, "iss": issuer.url, "exp": now() + 300,
               "scope": "mcp:tools", "token_type": "Bearer"})
    };
    issuer.activate("opaque~alice", active("alice", &aud));
    issuer.activate(
        "opaque~elsewhere",
        active("alice", "https://other.example.com/mcp"),
    );
    let mut expired = active("alice", &aud);
    expired["exp"] = json!(now() - 3600);
    issuer.activate("opaque~expired", expired);
    let mut foreign = active("alice", &aud);
    foreign["iss"] = json!("https://other.example.com");
    issuer.activate("opaque~foreign", foreign);

    for _ in 0..2 {
        let reply = get_unknown(addr, "opaque~alice").await;
        assert_eq!(
            reply.status, 404,
            "authenticated, and no such resource: {}",
            reply.body
        );
    }
    assert_eq!(issuer.introspections(), 1, "the answer is cached");
    let init = initialize_with(addr, Some("Bearer opaque~alice")).await;
    assert_eq!(init.status, 200, "{}", init.body);

    for token in [
        "opaque~unknown",
        "opaque~elsewhere",
        "opaque~expired",
        "opaque~foreign",
    ] {
        assert_invalid_token(&get_unknown(addr, token).await, &running, token);
        assert_invalid_token(&get_unknown(addr, token).await, &running, token);
    }
    assert_eq!(issuer.introspections(), 5, "refusals are cached too");
    // JWTs are still checked locally, never introspected.
    assert_eq!(
        get_unknown(addr, &key.token(&claims(&issuer.url, &aud, "bob")))
            .await
            .status,
        404
    );
    assert_eq!(issuer.introspections(), 5);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_introspection_endpoint_that_refuses_the_server_is_a_retryable_503() {
    let issuer = Issuer::start(jwks(&[])).await;
    let db = TempDb::new();
    let endpoint = format!("{}/introspect", issuer.url);
    let running = serve(&db, &issuer, |b| b.introspection(endpoint, CLIENT.0, "wrong")).await;
    issuer.activate(
        "opaque~alice",
        json!({"active": true, "sub": "alice", "aud": resource(&running)}),
    );
    for _ in 0..3 {
        let reply = get_unknown(running.addr, "opaque~alice").await;
        assert_eq!(reply.status, 503, "{}", reply.body);
        assert!(reply.header("retry-after").is_some());
        assert_eq!(reply.answer()["retryable"], true);
    }
    assert_eq!(
        issuer.introspections(),
        1,
        "no new request within the retry interval"
    );
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_audience_such_as_an_entra_client_id_is_accepted_apart_from_the_resource() {
    // Microsoft Entra v2 access tokens name the API's application (client) id in `aud`.
    const CLIENT_ID: &str = "6f1c2b9e-3d4a-4e5f-9a8b-7c6d5e4f3a2b";
    let key = ec_key("k1");
    let issuer = Issuer::start(jwks(&[&key])).await;
    let db = TempDb::new();
    let entra = serve(&db, &issuer, |b| b.audience(CLIENT_ID)).await;
    let plain = serve(&db, &issuer, |b| b).await;
    let token_for = |running: &Running, aud: &str| {
        let mut claims = claims(&issuer.url, &resource(running), "alice");
        claims["aud"] = json!(aud);
        key.token(&claims)
    };

    // Configured: the client id passes, the resource URL alone no longer does.
    let guid = token_for(&entra, CLIENT_ID);
    assert_eq!(get_unknown(entra.addr, &guid).await.status, 404, "authenticated");
    let init = initialize_with(entra.addr, Some(&format!("Bearer {guid}"))).await;
    assert_eq!(init.status, 200, "{}", init.body);
    let url = token_for(&entra, &resource(&entra));
    assert_invalid_token(&get_unknown(entra.addr, &url).await, &entra, "the resource URL");
    // The metadata still publishes the resource URL.
    let metadata = send(
        entra.addr,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    )
    .await;
    assert_eq!(metadata.answer()["resource"], json!(resource(&entra)));

    // Not configured: the client id is refused, the resource URL passes.
    let guid = token_for(&plain, CLIENT_ID);
    assert_invalid_token(&get_unknown(plain.addr, &guid).await, &plain, "a client id");
    assert_eq!(
        get_unknown(plain.addr, &token_for(&plain, &resource(&plain)))
            .await
            .status,
        404
    );
    entra.shutdown().await;
    plain.shutdown().await;
}
