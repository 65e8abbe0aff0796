//! A local OAuth 2.1 authorization server for tests and benches (feature `oauth-issuer`): its keys
//! generated in the process (RSA by the `openssl` CLI, P-256 and Ed25519 by ring), its metadata
//! (`/.well-known/oauth-authorization-server`), key set (`/jwks`) and RFC 7662 introspection
//! (`/introspect`) served by a small hyper server on 127.0.0.1 that counts key set fetches and
//! introspections and can be stopped; and signed access tokens.
//!
//! ```
//! use dual_testkit::oauth_issuer::{Issuer, claims, ec_key, jwks};
//!
//! # fn main() {
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let key = ec_key("k1");
//! let issuer = Issuer::start(jwks(&[&key])).await;
//! let token = key.token(&claims(&issuer.url, "http://127.0.0.1:8080/mcp", "alice"));
//! assert_eq!(token.split('.').count(), 3);
//! assert_eq!(issuer.jwks_fetches(), 0);
//! # });
//! # }
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _, RsaKeyPair, RsaPublicKeyComponents};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// What the issuer serves, changed by the tests as they go.
#[derive(Debug)]
struct Published {
    jwks: Mutex<Value>,
    cache_control: Mutex<String>,
    jwks_fetches: AtomicUsize,
    /// The introspection answers by opaque token (unknown tokens are inactive).
    introspected: Mutex<Vec<(String, Value)>>,
    introspections: AtomicUsize,
}

/// The client credentials (id, secret) the issuer's introspection endpoint expects.
pub const CLIENT: (&str, &str) = ("dual-serve", "s3cret/+");

/// An authorization server's metadata and key set on 127.0.0.1; stopped when dropped.
#[derive(Debug)]
pub struct Issuer {
    /// `http://127.0.0.1:{port}`: the issuer identifier, which tokens name as `iss`.
    pub url: String,
    published: Arc<Published>,
    task: tokio::task::JoinHandle<()>,
}

impl Issuer {
    /// Serves the metadata and the key set `jwks` (`max-age=3600`) on a free loopback port.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub async fn start(jwks: Value) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let published = Arc::new(Published {
            jwks: Mutex::new(jwks),
            cache_control: Mutex::new("max-age=3600".to_owned()),
            jwks_fetches: AtomicUsize::new(0),
            introspected: Mutex::new(Vec::new()),
            introspections: AtomicUsize::new(0),
        });
        let (shared, issuer) = (Arc::clone(&published), url.clone());
        let task = tokio::spawn(async move {
            // Dropped with this task when it is aborted: every connection is cut with it.
            let mut connections = JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (shared, issuer) = (Arc::clone(&shared), issuer.clone());
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let (shared, issuer) = (Arc::clone(&shared), issuer.clone());
                    async move {
                        let (parts, body) = request.into_parts();
                        let body = body
                            .collect()
                            .await
                            .map(|body| body.to_bytes())
                            .unwrap_or_default();
                        Ok::<_, std::convert::Infallible>(answer(&shared, &issuer, &parts, &body))
                    }
                });
                connections.spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { url, published, task }
    }

    /// Serves `jwks` from now on (a key rotation).
    pub fn publish(&self, jwks: Value) {
        *self.published.jwks.lock().expect("not poisoned") = jwks;
    }

    /// The `Cache-Control` of the key set from now on.
    pub fn set_cache_control(&self, value: &str) {
        *self.published.cache_control.lock().expect("not poisoned") = value.to_owned();
    }

    /// Introspection says `token` is active with `claims`.
    pub fn activate(&self, token: &str, claims: Value) {
        let mut introspected = self.published.introspected.lock().expect("not poisoned");
        introspected.push((token.to_owned(), claims));
    }

    /// How many introspection requests were received.
    #[must_use]
    pub fn introspections(&self) -> usize {
        self.published.introspections.load(Ordering::SeqCst)
    }

    /// How many times the key set was fetched.
    #[must_use]
    pub fn jwks_fetches(&self) -> usize {
        self.published.jwks_fetches.load(Ordering::SeqCst)
    }

    /// Stops answering: the listener and every open connection close.
    pub fn stop(&self) {
        self.task.abort();
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn answer(
    published: &Published,
    issuer: &str,
    request: &http::request::Parts,
    body: &[u8],
) -> hyper::Response<Full<Bytes>> {
    let (status, body, cache) = match request.uri.path() {
        "/.well-known/oauth-authorization-server" => (
            200,
            json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks"),
                   "token_endpoint": format!("{issuer}/token"),
                   "introspection_endpoint": format!("{issuer}/introspect")}),
            None,
        ),
        "/jwks" => {
            published.jwks_fetches.fetch_add(1, Ordering::SeqCst);
            let jwks = published.jwks.lock().expect("not poisoned").clone();
            let cache = published.cache_control.lock().expect("not poisoned").clone();
            (200, jwks, Some(cache))
        }
        "/introspect" => {
            published.introspections.fetch_add(1, Ordering::SeqCst);
            // RFC 6749 §2.3.1: form-encoded, joined, base64.
            let basic = format!("Basic {}", STANDARD.encode("dual-serve:s3cret%2F%2B"));
            let authorized = request
                .headers
                .get("authorization")
                .is_some_and(|value| value.as_bytes() == basic.as_bytes());
            let form = String::from_utf8_lossy(body);
            let token = form
                .split('&')
                .find_map(|pair| pair.strip_prefix("token="))
                .unwrap_or_default()
                .to_owned();
            let hint = form.split('&').any(|pair| pair == "token_type_hint=access_token");
            if !authorized || request.method != http::Method::POST || !hint {
                (401, json!({"error": "invalid_client"}), None)
            } else {
                let introspected = published.introspected.lock().expect("not poisoned");
                let claims = introspected
                    .iter()
                    .find(|(known, _)| *known == token)
                    .map_or_else(|| json!({"active": false}), |(_, claims)| claims.clone());
                (200, claims, None)
            }
        }
        _ => (404, json!({"error": "not_found"}), None),
    };
    let mut response = hyper::Response::builder()
        .status(status)
        .header("content-type", "application/json");
    if let Some(cache) = cache {
        response = response.header("cache-control", cache);
    }
    response
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a response")
}

/// A signing key of the issuer, with its `kid`.
#[derive(Clone, Debug)]
pub struct TestKey {
    /// The key id tokens name in their header.
    pub kid: String,
    /// The private key.
    pub signer: Signer,
}

/// A private key of one of the kinds the resource server accepts.
#[derive(Clone, Debug)]
pub enum Signer {
    /// RSA (RS256, PS256).
    Rsa(Arc<RsaKeyPair>),
    /// P-256 (ES256).
    Ec(Arc<EcdsaKeyPair>),
    /// Ed25519 (EdDSA).
    Ed(Arc<Ed25519KeyPair>),
}

/// Base64url without padding, as JOSE writes it.
#[must_use]
pub fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A 2048-bit RSA key, generated by the `openssl` CLI (ring verifies RSA but does not generate it).
///
/// # Panics
/// When the `openssl` CLI is missing or fails.
#[must_use]
pub fn rsa_key(kid: &str) -> TestKey {
    let output = std::process::Command::new("openssl")
        .args(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-outform", "DER"])
        .output()
        .unwrap_or_else(|error| {
            panic!("this test needs the `openssl` CLI to generate an RSA key (Debian: apt-get install openssl): {error}")
        });
    assert!(
        output.status.success(),
        "openssl genpkey failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // OpenSSL 3.0 writes the traditional `RSAPrivateKey` in DER, other versions PKCS#8.
    let pair = RsaKeyPair::from_der(&output.stdout)
        .or_else(|_| RsaKeyPair::from_pkcs8(&output.stdout))
        .expect("openssl writes an RSA private key in DER");
    TestKey {
        kid: kid.to_owned(),
        signer: Signer::Rsa(Arc::new(pair)),
    }
}

/// A new P-256 key under `kid`.
///
/// # Panics
/// When the system's random source fails.
#[must_use]
pub fn ec_key(kid: &str) -> TestKey {
    let rng = SystemRandom::new();
    let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).expect("a P-256 key");
    let pair = EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).expect("reads back");
    TestKey {
        kid: kid.to_owned(),
        signer: Signer::Ec(Arc::new(pair)),
    }
}

/// A new Ed25519 key under `kid`.
///
/// # Panics
/// When the system's random source fails.
#[must_use]
pub fn ed_key(kid: &str) -> TestKey {
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).expect("an Ed25519 key");
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("reads back");
    TestKey {
        kid: kid.to_owned(),
        signer: Signer::Ed(Arc::new(pair)),
    }
}

impl TestKey {
    /// The public JWK.
    #[must_use]
    pub fn jwk(&self) -> Value {
        match &self.signer {
            Signer::Rsa(pair) => {
                let public = RsaPublicKeyComponents::<Vec<u8>>::from(pair.public());
                json!({"kty": "RSA", "kid": self.kid, "use": "sig", "n": b64(&public.n), "e": b64(&public.e)})
            }
            Signer::Ec(pair) => {
                let point = pair.public_key().as_ref();
                json!({"kty": "EC", "crv": "P-256", "kid": self.kid, "x": b64(&point[1..33]), "y": b64(&point[33..])})
            }
            Signer::Ed(pair) => {
                json!({"kty": "OKP", "crv": "Ed25519", "kid": self.kid, "x": b64(pair.public_key().as_ref())})
            }
        }
    }

    /// The key's natural algorithm.
    #[must_use]
    pub fn alg(&self) -> &'static str {
        match self.signer {
            Signer::Rsa(_) => "RS256",
            Signer::Ec(_) => "ES256",
            Signer::Ed(_) => "EdDSA",
        }
    }

    /// A token with `claims`, signed with the key's algorithm under its `kid`.
    #[must_use]
    pub fn token(&self, claims: &Value) -> String {
        self.token_as(self.alg(), &self.kid, claims)
    }

    /// A token with `claims` signed with `alg` (`RS256`/`PS256` for RSA) under `kid`.
    ///
    /// # Panics
    /// When signing fails.
    #[must_use]
    pub fn token_as(&self, alg: &str, kid: &str, claims: &Value) -> String {
        let input = signing_input(&json!({"alg": alg, "kid": kid, "typ": "at+jwt"}), claims);
        let rng = SystemRandom::new();
        let signature = match &self.signer {
            Signer::Rsa(pair) => {
                let padding: &'static dyn signature::RsaEncoding = if alg == "PS256" {
                    &signature::RSA_PSS_SHA256
                } else {
                    &signature::RSA_PKCS1_SHA256
                };
                let mut signature = vec![0; pair.public().modulus_len()];
                pair.sign(padding, &rng, input.as_bytes(), &mut signature)
                    .expect("signs");
                signature
            }
            Signer::Ec(pair) => pair
                .sign(&rng, input.as_bytes())
                .expect("signs")
                .as_ref()
                .to_vec(),
            Signer::Ed(pair) => pair.sign(input.as_bytes()).as_ref().to_vec(),
        };
        format!("{input}.{}", b64(&signature))
    }
}

/// The first two parts of a JWT: `header` and `claims`, base64url, joined by a dot.
#[must_use]
pub fn signing_input(header: &Value, claims: &Value) -> String {
    format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    )
}

/// A key set (JWKS) of the public `keys`.
#[must_use]
pub fn jwks(keys: &[&TestKey]) -> Value {
    json!({"keys": keys.iter().map(|key| key.jwk()).collect::<Vec<_>>()})
}

/// Seconds since 1970.
///
/// # Panics
/// When the clock is before 1970.
#[must_use]
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

/// Claims of a token for `sub`, issued by `iss` for `aud`, valid for five minutes.
#[must_use]
pub fn claims(iss: &str, aud: &str, sub: &str) -> Value {
    let now = now();
    json!({"iss": iss, "aud": aud, "sub": sub, "iat": now, "nbf": now, "exp": now + 300,
           "scope": "mcp:tools mcp:read", "client_id": "test-client"})
}
