//! [`OAuthOptions`]: the trusted issuers, the audience and the checks of an OAuth 2.1 resource
//! server, with their documented defaults, built and validated by [`OAuthOptionsBuilder`].

use std::time::Duration;

use super::fetch::is_secure_url;

/// Default of [`OAuthOptionsBuilder::leeway`]: 60 s.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);
/// Largest [`OAuthOptionsBuilder::leeway`]: 5 minutes.
pub const MAX_LEEWAY: Duration = Duration::from_secs(300);
/// Default of [`OAuthOptionsBuilder::owner_claim`].
pub const DEFAULT_OWNER_CLAIM: &str = "sub";
/// Lifetime of a key set whose response has no `Cache-Control: max-age`: 5 minutes.
pub const DEFAULT_KEYS_LIFETIME: Duration = Duration::from_secs(300);
/// Default lower bound of a key set's lifetime (`max-age=0` and `no-cache` included): 60 s.
pub const DEFAULT_MIN_KEYS_LIFETIME: Duration = Duration::from_secs(60);
/// Default upper bound of a key set's lifetime: 24 hours.
pub const DEFAULT_MAX_KEYS_LIFETIME: Duration = Duration::from_secs(24 * 3600);
/// Default of [`OAuthOptionsBuilder::unknown_kid_interval`]: 30 s.
pub const DEFAULT_UNKNOWN_KID_INTERVAL: Duration = Duration::from_secs(30);
/// Default of [`OAuthOptionsBuilder::fetch_timeout`]: 10 s.
pub const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// Default of the time to live of [`OAuthOptionsBuilder::introspection_cache`]: 60 s.
pub const DEFAULT_INTROSPECTION_TTL: Duration = Duration::from_secs(60);
/// Default of the entries of [`OAuthOptionsBuilder::introspection_cache`].
pub const DEFAULT_INTROSPECTION_ENTRIES: usize = 10_000;
/// Longest time to live of [`OAuthOptionsBuilder::introspection_cache`]: 1 hour.
pub const MAX_INTROSPECTION_TTL: Duration = Duration::from_secs(3600);
/// Longest owner claim value accepted, in bytes.
pub(crate) const MAX_OWNER_BYTES: usize = 256;

/// A trusted issuer, where its keys are, and where its opaque tokens are introspected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TrustedIssuer {
    pub(crate) issuer: String,
    pub(crate) jwks_uri: Option<String>,
    pub(crate) introspection: Option<IntrospectionClient>,
}

/// The introspection endpoint of an issuer and the server's client credentials there.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct IntrospectionClient {
    pub(crate) endpoint: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
}

impl std::fmt::Debug for IntrospectionClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionClient")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .finish()
    }
}

/// How `/mcp` and `/resources` accept OAuth 2.1 access tokens (JWTs signed by a trusted issuer,
/// issued for this server). Build it with [`OAuthOptions::builder`].
///
/// ```
/// use dual_serve::auth::OAuthOptions;
///
/// let options = OAuthOptions::builder("https://idp.example.com/realms/team")
///     .resource("https://mcp.example.com/mcp")
///     .tool_scope("mcp:tools")
///     .build()
///     .expect("valid options");
/// assert_eq!(options.owner_claim(), "sub");
/// assert_eq!(options.issuers().collect::<Vec<_>>(), ["https://idp.example.com/realms/team"]);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OAuthOptions {
    pub(crate) issuers: Vec<TrustedIssuer>,
    pub(crate) resource: Option<String>,
    pub(crate) audiences: Vec<String>,
    pub(crate) owner_claim: String,
    pub(crate) leeway: Duration,
    pub(crate) tool_scope: Option<String>,
    pub(crate) read_scope: Option<String>,
    pub(crate) min_keys_lifetime: Duration,
    pub(crate) max_keys_lifetime: Duration,
    pub(crate) unknown_kid_interval: Duration,
    pub(crate) fetch_timeout: Duration,
    pub(crate) introspection_ttl: Duration,
    pub(crate) introspection_entries: usize,
}

/// Builds [`OAuthOptions`]; every setting has a documented default.
#[derive(Debug, Clone)]
#[must_use]
pub struct OAuthOptionsBuilder {
    options: OAuthOptions,
}

/// Why [`OAuthOptionsBuilder::build`] (or the server starting with the options) refused them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthConfigError {
    /// An issuer, JWKS or resource URL that is not an absolute HTTPS URL (HTTP only to a loopback
    /// host), or has a fragment.
    #[error(
        "the {what} `{url}` must be an absolute https:// URL (http:// only to a loopback host), without a fragment"
    )]
    Url {
        /// Which URL: `issuer`, `JWKS URL`, `introspection endpoint` or `resource`.
        what: &'static str,
        /// The URL.
        url: String,
    },
    /// An audience that is empty, longer than 1,024 bytes or not printable ASCII without spaces.
    #[error("the audience `{0}` must be 1 to 1024 printable ASCII characters without spaces")]
    Audience(String),
    /// The same issuer given twice.
    #[error("the issuer `{0}` is given twice")]
    DuplicateIssuer(String),
    /// A leeway above [`MAX_LEEWAY`].
    #[error("the leeway must be at most {} s", MAX_LEEWAY.as_secs())]
    Leeway,
    /// An empty owner claim name.
    #[error("the owner claim must be named")]
    OwnerClaim,
    /// A scope that is empty or has a character RFC 6749 does not allow in a scope token.
    #[error("the scope `{0}` is not a valid scope token")]
    Scope(String),
    /// Key lifetime bounds that are zero or the wrong way round.
    #[error("the key lifetime bounds must satisfy 0 < min <= max")]
    KeysLifetime,
    /// A zero fetch timeout.
    #[error("the fetch timeout must be greater than zero")]
    FetchTimeout,
    /// Introspection at more than one issuer (an opaque token does not say whose it is), or an
    /// introspection cache of no entries or a time to live of zero or above
    /// [`MAX_INTROSPECTION_TTL`].
    #[error("introspection: {0}")]
    Introspection(&'static str),
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client of the issuer checks: {0}")]
    Client(#[source] reqwest::Error),
}

impl OAuthOptions {
    /// A builder trusting `issuer` (its exact `iss` value, e.g. `https://idp.example.com/realms/team`),
    /// its keys discovered from its metadata.
    pub fn builder(issuer: impl Into<String>) -> OAuthOptionsBuilder {
        OAuthOptionsBuilder {
            options: Self {
                issuers: vec![TrustedIssuer {
                    issuer: issuer.into(),
                    jwks_uri: None,
                    introspection: None,
                }],
                resource: None,
                audiences: Vec::new(),
                owner_claim: DEFAULT_OWNER_CLAIM.to_owned(),
                leeway: DEFAULT_LEEWAY,
                tool_scope: None,
                read_scope: None,
                min_keys_lifetime: DEFAULT_MIN_KEYS_LIFETIME,
                max_keys_lifetime: DEFAULT_MAX_KEYS_LIFETIME,
                unknown_kid_interval: DEFAULT_UNKNOWN_KID_INTERVAL,
                fetch_timeout: DEFAULT_FETCH_TIMEOUT,
                introspection_ttl: DEFAULT_INTROSPECTION_TTL,
                introspection_entries: DEFAULT_INTROSPECTION_ENTRIES,
            },
        }
    }

    /// The trusted issuers, in the order given.
    pub fn issuers(&self) -> impl Iterator<Item = &str> {
        self.issuers.iter().map(|trusted| trusted.issuer.as_str())
    }

    /// The configured resource URI (the Protected Resource Metadata's `resource`, and the audience
    /// tokens must name unless [`audiences`](Self::audiences) are configured); `None`: the server's
    /// MCP URL.
    #[must_use]
    pub fn resource(&self) -> Option<&str> {
        self.resource.as_deref()
    }

    /// The configured audiences, one of which a token's `aud` must name; empty: the resource.
    pub fn audiences(&self) -> impl Iterator<Item = &str> {
        self.audiences.iter().map(String::as_str)
    }

    /// The claim that names the owner.
    #[must_use]
    pub fn owner_claim(&self) -> &str {
        &self.owner_claim
    }

    /// The leeway of `exp` and `nbf`.
    #[must_use]
    pub fn leeway(&self) -> Duration {
        self.leeway
    }

    /// The scope MCP `tools/call` requires, if any.
    #[must_use]
    pub fn tool_scope(&self) -> Option<&str> {
        self.tool_scope.as_deref()
    }

    /// The scope `/resources` and MCP `resources/read` require, if any.
    #[must_use]
    pub fn read_scope(&self) -> Option<&str> {
        self.read_scope.as_deref()
    }
}

impl OAuthOptionsBuilder {
    /// Trusts one more issuer, its keys discovered from its metadata. With several issuers, the
    /// owner is `ISSUER#CLAIM` (the issuer, `#`, the owner claim), so that the same subject at two
    /// issuers is two owners.
    pub fn trust(mut self, issuer: impl Into<String>) -> Self {
        self.options.issuers.push(TrustedIssuer {
            issuer: issuer.into(),
            jwks_uri: None,
            introspection: None,
        });
        self
    }

    /// Fetches the keys of the issuer given last from `uri` instead of discovering its `jwks_uri`.
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        if let Some(last) = self.options.issuers.last_mut() {
            last.jwks_uri = Some(uri.into());
        }
        self
    }

    /// Introspects (RFC 7662) the opaque access tokens of the issuer given last at `endpoint`,
    /// authenticating as the client `client_id` with `client_secret` (HTTP Basic). A bearer token
    /// that is not a JWS is then sent there; an active answer must name this resource in `aud`,
    /// and the owner claim, as a JWT's claims. At most one issuer introspects.
    pub fn introspection(
        mut self,
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        if let Some(last) = self.options.issuers.last_mut() {
            last.introspection = Some(IntrospectionClient {
                endpoint: endpoint.into(),
                client_id: client_id.into(),
                client_secret: client_secret.into(),
            });
        }
        self
    }

    /// Bounds of the introspection cache, keyed by the token's SHA-256: at most `max_entries`
    /// answers (the oldest go first), each kept for `ttl` at most, never past the token's `exp`
    /// (default [`DEFAULT_INTROSPECTION_ENTRIES`], [`DEFAULT_INTROSPECTION_TTL`]; `ttl` at most
    /// [`MAX_INTROSPECTION_TTL`]).
    pub fn introspection_cache(mut self, max_entries: usize, ttl: Duration) -> Self {
        self.options.introspection_entries = max_entries;
        self.options.introspection_ttl = ttl;
        self
    }

    /// The resource URI the Protected Resource Metadata names (RFC 9728 `resource`), which tokens
    /// must name in `aud` (RFC 8707) unless [`audience`](Self::audience) says otherwise; default:
    /// the server's MCP URL (`{base}/mcp`, from `ServeOptions::base_url`).
    pub fn resource(mut self, uri: impl Into<String>) -> Self {
        self.options.resource = Some(uri.into());
        self
    }

    /// An audience tokens may name in `aud` instead of the resource; repeat it to accept several
    /// (a token must name one of them). Once any is given, the resource URI itself is accepted only
    /// when it is given too. For identity providers whose `aud` is not the resource URL: Microsoft
    /// Entra v2 access tokens name the API's application (client) id, a GUID (or its `api://…`
    /// application ID URI for v1 tokens); default: the resource alone.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.options.audiences.push(audience.into());
        self
    }

    /// The claim naming the owner (default [`DEFAULT_OWNER_CLAIM`]); its value must be a string of
    /// at most 256 bytes.
    pub fn owner_claim(mut self, claim: impl Into<String>) -> Self {
        self.options.owner_claim = claim.into();
        self
    }

    /// The clock skew allowed on `exp` and `nbf` (default [`DEFAULT_LEEWAY`], at most
    /// [`MAX_LEEWAY`]).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.options.leeway = leeway;
        self
    }

    /// A scope MCP `tools/call` requires (default: none): a token without it gets `403
    /// insufficient_scope` for a tool call (it may still connect, list and read).
    pub fn tool_scope(mut self, scope: impl Into<String>) -> Self {
        self.options.tool_scope = Some(scope.into());
        self
    }

    /// A scope `/resources` and MCP `resources/read` require (default: none): a token without it
    /// gets `403 insufficient_scope`. Capability links need no token and no scope.
    pub fn read_scope(mut self, scope: impl Into<String>) -> Self {
        self.options.read_scope = Some(scope.into());
        self
    }

    /// Bounds of a key set's lifetime, whatever its `Cache-Control` says (default
    /// [`DEFAULT_MIN_KEYS_LIFETIME`] to [`DEFAULT_MAX_KEYS_LIFETIME`]; without `max-age`,
    /// [`DEFAULT_KEYS_LIFETIME`] within them).
    pub fn keys_lifetime(mut self, min: Duration, max: Duration) -> Self {
        self.options.min_keys_lifetime = min;
        self.options.max_keys_lifetime = max;
        self
    }

    /// Least time between two key set refreshes caused by tokens naming an unknown `kid` (default
    /// [`DEFAULT_UNKNOWN_KID_INTERVAL`]).
    pub fn unknown_kid_interval(mut self, interval: Duration) -> Self {
        self.options.unknown_kid_interval = interval;
        self
    }

    /// Time a metadata or key set request may take in all (default [`DEFAULT_FETCH_TIMEOUT`]).
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.options.fetch_timeout = timeout;
        self
    }

    /// Checks the options.
    ///
    /// # Errors
    /// [`OAuthConfigError`] naming the first setting that cannot work.
    pub fn build(self) -> Result<OAuthOptions, OAuthConfigError> {
        let options = self.options;
        for (index, trusted) in options.issuers.iter().enumerate() {
            check_url("issuer", &trusted.issuer, false)?;
            if let Some(uri) = &trusted.jwks_uri {
                check_url("JWKS URL", uri, true)?;
            }
            if let Some(client) = &trusted.introspection {
                check_url("introspection endpoint", &client.endpoint, true)?;
            }
            if options.issuers[..index]
                .iter()
                .any(|earlier| earlier.issuer == trusted.issuer)
            {
                return Err(OAuthConfigError::DuplicateIssuer(trusted.issuer.clone()));
            }
        }
        if let Some(resource) = &options.resource {
            check_url("resource", resource, true)?;
        }
        if let Some(audience) = options.audiences.iter().find(|audience| !is_audience(audience)) {
            return Err(OAuthConfigError::Audience(audience.clone()));
        }
        if options.leeway > MAX_LEEWAY {
            return Err(OAuthConfigError::Leeway);
        }
        if options.owner_claim.is_empty() {
            return Err(OAuthConfigError::OwnerClaim);
        }
        for scope in [&options.tool_scope, &options.read_scope].into_iter().flatten() {
            if !is_scope_token(scope) {
                return Err(OAuthConfigError::Scope(scope.clone()));
            }
        }
        if options.min_keys_lifetime.is_zero() || options.min_keys_lifetime > options.max_keys_lifetime {
            return Err(OAuthConfigError::KeysLifetime);
        }
        if options.fetch_timeout.is_zero() {
            return Err(OAuthConfigError::FetchTimeout);
        }
        if options
            .issuers
            .iter()
            .filter(|trusted| trusted.introspection.is_some())
            .count()
            > 1
        {
            return Err(OAuthConfigError::Introspection(
                "at most one issuer may introspect",
            ));
        }
        if options.introspection_entries == 0
            || options.introspection_ttl.is_zero()
            || options.introspection_ttl > MAX_INTROSPECTION_TTL
        {
            return Err(OAuthConfigError::Introspection(
                "the cache needs at least one entry and a time to live of at most an hour",
            ));
        }
        Ok(options)
    }
}

/// Refuses a URL that is not HTTPS (or loopback HTTP) or has a fragment; an issuer has no query
/// either (RFC 8414 §2).
pub(crate) fn check_url(what: &'static str, url: &str, query_allowed: bool) -> Result<(), OAuthConfigError> {
    let refused = || OAuthConfigError::Url {
        what,
        url: url.to_owned(),
    };
    if !is_secure_url(url) || url.contains('#') || (!query_allowed && url.contains('?')) {
        return Err(refused());
    }
    Ok(())
}

/// An audience: 1 to 1,024 bytes of printable ASCII without spaces (a URI or an identifier).
fn is_audience(audience: &str) -> bool {
    (1..=1024).contains(&audience.len()) && audience.bytes().all(|b| b.is_ascii_graphic())
}

/// RFC 6749 §3.3: `%x21 / %x23-5B / %x5D-7E`, at least one.
fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_documented_ones() {
        let options = OAuthOptions::builder("https://idp.example.com")
            .build()
            .expect("valid");
        assert_eq!(options.leeway(), DEFAULT_LEEWAY);
        assert_eq!(options.owner_claim(), DEFAULT_OWNER_CLAIM);
        assert_eq!(options.resource(), None);
        assert_eq!(options.audiences().count(), 0);
        assert_eq!((options.tool_scope(), options.read_scope()), (None, None));
        assert_eq!(options.unknown_kid_interval, DEFAULT_UNKNOWN_KID_INTERVAL);
    }

    #[test]
    fn settings_that_cannot_work_are_refused() {
        let builder = || OAuthOptions::builder("https://idp.example.com");
        for (builder, what) in [
            (OAuthOptions::builder("http://idp.example.com"), "issuer"),
            (
                OAuthOptions::builder("https://idp.example.com?tenant=1"),
                "issuer",
            ),
            (OAuthOptions::builder("idp.example.com"), "issuer"),
            (builder().jwks_uri("http://idp.example.com/keys"), "JWKS URL"),
            (builder().resource("https://mcp.example.com/mcp#x"), "resource"),
        ] {
            match builder.build() {
                Err(OAuthConfigError::Url { what: named, .. }) => assert_eq!(named, what),
                other => panic!("{what}: {other:?}"),
            }
        }
        assert!(matches!(
            builder().trust("https://idp.example.com").build(),
            Err(OAuthConfigError::DuplicateIssuer(_))
        ));
        assert!(matches!(
            builder().leeway(MAX_LEEWAY + Duration::from_secs(1)).build(),
            Err(OAuthConfigError::Leeway)
        ));
        assert!(matches!(
            builder().owner_claim("").build(),
            Err(OAuthConfigError::OwnerClaim)
        ));
        for audience in ["", "two words", "tab\t", &"a".repeat(1025)] {
            assert!(
                matches!(
                    builder().audience("api://ok").audience(audience).build(),
                    Err(OAuthConfigError::Audience(_))
                ),
                "{audience}"
            );
        }
        for scope in ["", "two words", "quote\"", "back\\slash"] {
            assert!(
                matches!(
                    builder().tool_scope(scope).build(),
                    Err(OAuthConfigError::Scope(_))
                ),
                "{scope}"
            );
        }
        assert!(matches!(
            builder()
                .keys_lifetime(Duration::from_secs(10), Duration::from_secs(5))
                .build(),
            Err(OAuthConfigError::KeysLifetime)
        ));
        assert!(matches!(
            builder()
                .keys_lifetime(Duration::ZERO, Duration::from_secs(5))
                .build(),
            Err(OAuthConfigError::KeysLifetime)
        ));
        assert!(matches!(
            builder().fetch_timeout(Duration::ZERO).build(),
            Err(OAuthConfigError::FetchTimeout)
        ));
        let local = OAuthOptions::builder("http://127.0.0.1:9/issuer")
            .jwks_uri("http://127.0.0.1:9/keys")
            .trust("https://other.example.com")
            .read_scope("mcp:read")
            .build()
            .expect("loopback HTTP is allowed");
        assert_eq!(local.issuers().count(), 2);
        assert_eq!(
            local.issuers[0].jwks_uri.as_deref(),
            Some("http://127.0.0.1:9/keys")
        );
        assert_eq!(local.issuers[1].jwks_uri, None);
    }
}
