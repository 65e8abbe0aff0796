//! The OAuth 2.1 resource server at work: a bearer JWT checked against the trusted issuers' keys,
//! its claims, the owner it names and the scope of the surface asked for.
//!
//! The order of the checks: the `Authorization` header's size (before any parsing), the compact
//! JWS (sizes, alphabet, header, `alg` on the allow-list), `iss` among the trusted issuers, a key of
//! that issuer for the `kid` and `alg` (the key's type and declared `alg` must fit the token's), the
//! signature, `exp`/`nbf` with the leeway, `aud` = the resource, the owner claim, the scope.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use http::HeaderMap;
use http::header::AUTHORIZATION;

use serde_json::{Map, Value};

use super::cache::{TokenCache, digest};
use super::fetch::Http;
use super::introspect::Introspection;
use super::jwks::{self, Key};
use super::jwt::{self, TokenError};
use super::keys::{IssuerKeys, KeyPolicy, KeysUnavailable};
use super::metadata;
use super::options::{DEFAULT_KEYS_LIFETIME, MAX_OWNER_BYTES, OAuthConfigError, OAuthOptions};

/// Largest `Authorization` header value read, in bytes: checked before anything is parsed.
pub(crate) const MAX_AUTHORIZATION_BYTES: usize = jwt::MAX_TOKEN_BYTES + 16;
/// Most keys tried for a token that names no `kid`.
const MAX_CANDIDATES: usize = 8;
/// Least time between two key set fetches after one failed without usable keys.
const KEYS_RETRY_AFTER: Duration = Duration::from_secs(5);
/// Most verified tokens remembered (a token's signature is checked once, not at every request).
const VERIFIED_ENTRIES: usize = 10_000;
/// Longest a verified token is remembered; never past its `exp` (with the leeway) nor past the
/// lifetime of the key set it was verified with.
const VERIFIED_TTL: Duration = Duration::from_secs(60);

/// What a token's claims gave once they passed every check but the scope.
#[derive(Debug, Clone)]
pub(crate) struct Verified {
    owner: Arc<str>,
    scopes: Arc<[String]>,
    /// The issuer (its index) and the key set the signature was verified with: a JWT is taken from
    /// the cache only while that set is its issuer's current one (a rotation drops a removed key's
    /// tokens at once).
    issuer: usize,
    keys: Option<Arc<[Key]>>,
}

/// What a request asks for, and so which scope it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Surface {
    /// `/mcp`: no scope to connect; [`ScopeGate`] checks `tools/call` (the tool scope) and
    /// `resources/read` (the read scope) message by message.
    Mcp,
    /// `/resources`: [`OAuthOptions::read_scope`].
    Results,
}

/// The scopes of an authenticated MCP request, which the MCP endpoint checks each JSON-RPC request
/// against (in the request's extensions).
#[derive(Debug, Clone)]
pub(crate) struct ScopeGate {
    oauth: OAuth,
    scopes: Arc<[String]>,
}

impl ScopeGate {
    /// `403 insufficient_scope` when `method` needs a scope the token lacks: `tools/call` the tool
    /// scope, `resources/read` the read scope.
    pub(crate) fn refusal(&self, method: &str) -> Option<http::Response<crate::Body>> {
        let inner = &*self.oauth.inner;
        let needed = match method {
            "tools/call" => inner.tool_scope.as_ref(),
            "resources/read" => inner.read_scope.as_ref(),
            _ => None,
        }?;
        if self.scopes.iter().any(|scope| scope == needed) {
            return None;
        }
        tracing::debug!(method, "MCP request refused: the token lacks the scope");
        Some(inner.metadata.reject(&Rejection::Scope(needed.clone())))
    }
}

/// Why a request was not let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// No bearer token: `401` with the metadata URL.
    Missing,
    /// A token that did not pass a check (the log says which): `401 invalid_token`.
    Invalid(TokenError),
    /// A valid token without the scope (named): `403 insufficient_scope`.
    Scope(String),
    /// The issuer's keys expired and cannot be fetched: a retryable `503`.
    Unavailable(KeysUnavailable),
}

/// The resource server: cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct OAuth {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    resource: String,
    /// What `aud` must name (one of): the configured audiences, else the resource.
    audiences: Vec<String>,
    metadata: metadata::ResourceMetadata,
    issuers: Vec<IssuerKeys>,
    /// The issuer (its index) whose opaque tokens are introspected, and how.
    introspection: Option<(usize, Introspection)>,
    /// JWTs that passed every check but the scope, by SHA-256.
    verified: TokenCache<Verified>,
    qualify_owner: bool,
    owner_claim: String,
    leeway: f64,
    tool_scope: Option<String>,
    read_scope: Option<String>,
    policy: KeyPolicy,
    http: Http,
}

impl Verified {
    /// The owner the token names.
    pub(crate) fn owner(&self) -> &str {
        &self.owner
    }
}

impl OAuth {
    /// The resource server of `options`; the resource is `default_resource` unless configured.
    ///
    /// # Errors
    /// [`OAuthConfigError::Url`] for a default resource that is not a usable URL,
    /// [`OAuthConfigError::Client`] when the HTTP client cannot be built.
    pub(crate) fn new(options: &OAuthOptions, default_resource: &str) -> Result<Self, OAuthConfigError> {
        let resource = match &options.resource {
            Some(resource) => resource.clone(),
            None => {
                super::options::check_url("resource", default_resource, true)?;
                default_resource.to_owned()
            }
        };
        let scopes: Vec<String> = [&options.tool_scope, &options.read_scope]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        let metadata = metadata::ResourceMetadata::new(
            &resource,
            options.issuers().map(str::to_owned).collect(),
            scopes,
        );
        let http = Http::new(options.fetch_timeout).map_err(OAuthConfigError::Client)?;
        let issuers = options
            .issuers
            .iter()
            .map(|trusted| IssuerKeys::new(trusted.issuer.clone(), trusted.jwks_uri.clone()))
            .collect::<Vec<_>>();
        let introspection = options
            .issuers
            .iter()
            .enumerate()
            .find_map(|(index, trusted)| Some((index, trusted.introspection.as_ref()?)))
            .map(|(index, client)| {
                Introspection::new(
                    client.endpoint.clone(),
                    &client.client_id,
                    &client.client_secret,
                    options.introspection_ttl,
                    options.introspection_entries,
                )
                .map(|introspection| (index, introspection))
                .ok_or(OAuthConfigError::Introspection(
                    "the client id and secret must be printable ASCII",
                ))
            })
            .transpose()?;
        let policy = KeyPolicy {
            default_lifetime: DEFAULT_KEYS_LIFETIME,
            min_lifetime: options.min_keys_lifetime,
            max_lifetime: options.max_keys_lifetime,
            unknown_kid_interval: options.unknown_kid_interval,
            retry_after: KEYS_RETRY_AFTER,
        };
        Ok(Self {
            inner: Arc::new(Inner {
                audiences: if options.audiences.is_empty() {
                    vec![resource.clone()]
                } else {
                    options.audiences.clone()
                },
                resource,
                metadata,
                qualify_owner: issuers.len() > 1,
                issuers,
                introspection,
                verified: TokenCache::new(VERIFIED_ENTRIES),
                owner_claim: options.owner_claim.clone(),
                leeway: options.leeway.as_secs_f64(),
                tool_scope: options.tool_scope.clone(),
                read_scope: options.read_scope.clone(),
                policy,
                http,
            }),
        })
    }

    /// The resource URI tokens must name.
    pub(crate) fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// The Protected Resource Metadata.
    pub(crate) fn metadata(&self) -> &metadata::ResourceMetadata {
        &self.inner.metadata
    }

    /// What the request's bearer token grants (its owner, its scopes), when it passes every check
    /// and, for `/resources`, carries the read scope.
    pub(crate) async fn authenticate(
        &self,
        headers: &HeaderMap,
        surface: Surface,
    ) -> Result<Verified, Rejection> {
        let inner = &*self.inner;
        let mut values = headers.get_all(AUTHORIZATION).iter();
        let Some(value) = values.next() else {
            return Err(Rejection::Missing);
        };
        if value.len() > MAX_AUTHORIZATION_BYTES {
            return Err(Rejection::Invalid(TokenError::TooLong));
        }
        if values.next().is_some() {
            return Err(Rejection::Invalid(TokenError::Malformed));
        }
        let token = super::bearer_token(headers).ok_or(Rejection::Missing)?;
        let digest = digest(token);
        if let Some(verified) = inner.verified.get(&digest)
            && let Some(keys) = &verified.keys
            && inner
                .issuers
                .get(verified.issuer)
                .is_some_and(|issuer| issuer.is_current(keys))
        {
            return self.scoped(verified, surface);
        }
        match jwt::parse(token) {
            Ok(jws) => {
                let (index, issuer) = jwt::string_claim(&jws.claims, "iss")
                    .and_then(|iss| {
                        inner
                            .issuers
                            .iter()
                            .enumerate()
                            .find(|(_, keys)| keys.issuer() == iss)
                    })
                    .ok_or(Rejection::Invalid(TokenError::Issuer))?;
                let keys = issuer
                    .keys_for(&inner.http, &inner.policy, jws.kid.as_deref())
                    .await
                    .map_err(Rejection::Unavailable)?;
                let mut candidates = jwks::candidates(&keys.keys, jws.kid.as_deref(), jws.alg)
                    .take(MAX_CANDIDATES)
                    .peekable();
                if candidates.peek().is_none() {
                    return Err(Rejection::Invalid(TokenError::UnknownKey));
                }
                if !candidates.any(|key| key.verifies(jws.alg, jws.signing_input, &jws.signature)) {
                    return Err(Rejection::Invalid(TokenError::Signature));
                }
                let mut verified = self.verify_claims(&jws.claims, issuer, index, true)?;
                verified.keys = Some(Arc::clone(&keys.keys));
                // Remembered while the token, its key set and the cache's own bound all live.
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_secs_f64();
                let token_left = jws
                    .claims
                    .get("exp")
                    .and_then(Value::as_f64)
                    .and_then(|exp| Duration::try_from_secs_f64(exp + inner.leeway - now).ok())
                    .unwrap_or(Duration::ZERO);
                let expires = (Instant::now() + VERIFIED_TTL.min(token_left)).min(keys.expires);
                inner.verified.insert(digest, verified.clone(), expires);
                self.scoped(verified, surface)
            }
            // Not a JWS: an opaque token, which only introspection can tell about.
            Err(TokenError::Malformed) if inner.introspection.is_some() => {
                self.introspect(token, surface).await
            }
            Err(error) => Err(Rejection::Invalid(error)),
        }
    }

    /// The owner of the opaque `token`, as the issuer's introspection endpoint describes it.
    async fn introspect(&self, token: &[u8], surface: Surface) -> Result<Verified, Rejection> {
        let inner = &*self.inner;
        let Some((index, introspection)) = &inner.introspection else {
            return Err(Rejection::Invalid(TokenError::Malformed));
        };
        let issuer = inner
            .issuers
            .get(*index)
            .ok_or(Rejection::Invalid(TokenError::Issuer))?;
        let claims = introspection
            .introspect(&inner.http, token)
            .await
            .map_err(|retry_after| Rejection::Unavailable(KeysUnavailable { retry_after }))?
            .ok_or(Rejection::Invalid(TokenError::Inactive))?;
        if jwt::string_claim(&claims, "iss").is_some_and(|iss| iss != issuer.issuer()) {
            return Err(Rejection::Invalid(TokenError::Issuer));
        }
        let verified = self.verify_claims(&claims, issuer, *index, false)?;
        self.scoped(verified, surface)
    }

    /// The owner and scopes of the verified `claims` of `issuer`, after the time, audience and owner
    /// checks.
    fn verify_claims(
        &self,
        claims: &Map<String, Value>,
        issuer: &IssuerKeys,
        index: usize,
        exp_required: bool,
    ) -> Result<Verified, Rejection> {
        let inner = &*self.inner;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        jwt::check_time(claims, now, inner.leeway, exp_required).map_err(Rejection::Invalid)?;
        jwt::check_audience(claims, &inner.audiences).map_err(Rejection::Invalid)?;
        let owner = jwt::string_claim(claims, &inner.owner_claim)
            .filter(|owner| !owner.is_empty() && owner.len() <= MAX_OWNER_BYTES)
            .ok_or(Rejection::Invalid(TokenError::Owner))?;
        let owner = if inner.qualify_owner {
            format!("{}#{owner}", issuer.issuer())
        } else {
            owner.to_owned()
        };
        Ok(Verified {
            owner: owner.into(),
            scopes: jwt::scopes(claims).into(),
            issuer: index,
            keys: None,
        })
    }

    /// The owner of `verified`, when it has the scope `surface` needs.
    fn scoped(&self, verified: Verified, surface: Surface) -> Result<Verified, Rejection> {
        let inner = &*self.inner;
        if surface == Surface::Results
            && let Some(needed) = &inner.read_scope
            && !verified.scopes.iter().any(|scope| scope == needed)
        {
            return Err(Rejection::Scope(needed.clone()));
        }
        Ok(verified)
    }

    /// The gate of an MCP request `verified` authenticated.
    pub(crate) fn gate(&self, verified: &Verified) -> ScopeGate {
        ScopeGate {
            oauth: self.clone(),
            scopes: Arc::clone(&verified.scopes),
        }
    }
}
