//! Who is calling: [`Authentication`] chooses between nobody checked, bearer tokens from a file
//! ([`AuthTokens`]) and an OAuth 2.1 resource server ([`OAuthOptions`]); the two modes are exclusive.
//! Either way the router puts the caller's [`Owner`], and the matching `dual_server::Caller`, into
//! the request's extensions, so every owner rule applies alike.
//!
//! ## OAuth 2.1 (MCP authorization)
//!
//! With [`Authentication::OAuth`], `/mcp` and `/resources` accept JWT access tokens that a trusted
//! issuer signed for this server (`aud` = the resource URI), the owner taken from a claim (`sub` by
//! default), and the server publishes its Protected Resource Metadata (RFC 9728) at
//! [`PROTECTED_RESOURCE_METADATA_PATH`] (and that path followed by `/mcp`), which MCP hosts read to
//! find the authorization server. docs/SECURITY.md lists every check.
//!
//! ```
//! use dual_serve::auth::{Authentication, OAuthOptions};
//!
//! let oauth = OAuthOptions::builder("https://login.example.com/realms/team")
//!     .resource("https://mcp.example.com/mcp")
//!     .build()
//!     .expect("valid options");
//! let mut options = dual_serve::ServeOptions::new("127.0.0.1:0".parse().expect("an address"));
//! options.authentication = Authentication::OAuth(oauth);
//! ```
//!
//! ## Bearer tokens from a file
//!
//! `dual-response serve --auth-tokens FILE`: the file holds one `TOKEN OWNER` pair per line; `#` starts a comment line. A request to `/mcp` or
//! `/resources` must carry `Authorization: Bearer TOKEN`; the router puts the token's [`Owner`], and
//! the matching `dual_server::Caller`, into the request's extensions. Resources created through MCP
//! belong to that owner, and the server shows them to no one else, over REST or `resources/read`.
//!
//! ```
//! use dual_serve::auth::{AuthTokens, Owner};
//!
//! let tokens = AuthTokens::parse("# token owner\ns3cret-a alice\ns3cret-b bob\n").expect("valid");
//! let mut headers = http::HeaderMap::new();
//! headers.insert(http::header::AUTHORIZATION, "Bearer s3cret-b".parse().expect("a header"));
//! assert_eq!(tokens.authenticate(&headers), Ok(Owner("bob".to_owned())));
//! ```

mod cache;
mod fetch;
mod file;
mod introspect;
mod jwks;
mod jwt;
mod keys;
mod metadata;
mod oauth;
mod options;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use http::HeaderMap;
use http::header::AUTHORIZATION;

pub use file::{AuthFileError, TokenFileError};
pub use metadata::PROTECTED_RESOURCE_METADATA_PATH;
pub(crate) use oauth::{OAuth, ScopeGate, Surface};
pub use options::{
    DEFAULT_FETCH_TIMEOUT, DEFAULT_INTROSPECTION_ENTRIES, DEFAULT_INTROSPECTION_TTL, DEFAULT_KEYS_LIFETIME,
    DEFAULT_LEEWAY, DEFAULT_MAX_KEYS_LIFETIME, DEFAULT_MIN_KEYS_LIFETIME, DEFAULT_OWNER_CLAIM,
    DEFAULT_UNKNOWN_KID_INTERVAL, MAX_INTROSPECTION_TTL, MAX_LEEWAY, OAuthConfigError, OAuthOptions,
    OAuthOptionsBuilder,
};

/// How `/mcp` and `/resources` authenticate callers (`ServeOptions::authentication`): one mode.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
#[expect(
    clippy::large_enum_variant,
    reason = "configuration, built once per server; a box would only make it harder to write"
)]
pub enum Authentication {
    /// Everyone is served, as one anonymous caller (the default).
    #[default]
    None,
    /// Bearer tokens from a file, each naming its owner.
    Tokens(AuthTokens),
    /// OAuth 2.1 access tokens (JWTs) of trusted issuers, the owner from a claim.
    OAuth(OAuthOptions),
}

impl Authentication {
    /// The mode's name, for the start-up log: `none`, `tokens` or `oauth`.
    #[must_use]
    pub fn mode(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Tokens(_) => "tokens",
            Self::OAuth(_) => "oauth",
        }
    }
}

/// [`Authentication`] ready to check requests.
#[derive(Debug, Clone)]
pub(crate) enum Authenticator {
    /// Everyone is served.
    None,
    /// The token file.
    Tokens(AuthTokens),
    /// The resource server.
    OAuth(OAuth),
}

impl Authenticator {
    /// The checks of `authentication`; an OAuth resource defaults to `mcp_url`.
    ///
    /// # Errors
    /// [`OAuthConfigError`] when `mcp_url` is not a usable resource or the HTTP client cannot be
    /// built.
    pub(crate) fn new(authentication: &Authentication, mcp_url: &str) -> Result<Self, OAuthConfigError> {
        Ok(match authentication {
            Authentication::None => Self::None,
            Authentication::Tokens(tokens) => Self::Tokens(tokens.clone()),
            Authentication::OAuth(options) => {
                let oauth = OAuth::new(options, mcp_url)?;
                tracing::info!(
                    resource = oauth.resource(),
                    metadata = oauth.metadata().url(),
                    issuers = ?options.issuers().collect::<Vec<_>>(),
                    "OAuth 2.1 resource server: bearer access tokens required"
                );
                Self::OAuth(oauth)
            }
        })
    }
}

/// The authenticated caller: the owner named next to the request's token in the token file, or by
/// the owner claim of its OAuth access token.
///
/// The router inserts it into the extensions of every authenticated request (rmcp passes the HTTP
/// request parts on to the MCP handler, so tools see it there too).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner(pub String);

/// The configured tokens. Cheap to clone; its `Debug` output shows owners, never tokens.
#[derive(Clone)]
pub struct AuthTokens {
    entries: Arc<[Entry]>,
}

struct Entry {
    token: Box<[u8]>,
    owner: String,
}

/// Why a request was not authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthFailure {
    /// No `Authorization: Bearer …` header.
    #[error("missing bearer token")]
    Missing,
    /// A bearer token that is not configured.
    #[error("invalid bearer token")]
    Invalid,
}

impl AuthFailure {
    /// The `WWW-Authenticate` challenge of this failure's `401` (RFC 6750: `error="invalid_token"` for a
    /// wrong token) and its message.
    pub(crate) fn challenge(self) -> (&'static str, &'static str) {
        match self {
            Self::Invalid => (r#"Bearer error="invalid_token""#, "the bearer token is not valid"),
            Self::Missing => ("Bearer", "this endpoint requires `Authorization: Bearer TOKEN`"),
        }
    }
}

impl AuthTokens {
    /// Reads and parses a token file.
    ///
    /// # Errors
    /// [`AuthFileError`] when the file cannot be read or a line is malformed (naming the line).
    pub fn from_file(path: &Path) -> Result<Self, AuthFileError> {
        file::read(path)
    }

    /// Parses the text of a token file: `TOKEN OWNER` per line, blank lines and `#` comment lines
    /// ignored. Tokens are printable ASCII (they travel in a header) and unique.
    ///
    /// # Errors
    /// [`TokenFileError`] naming the first malformed line, or [`TokenFileError::Empty`].
    pub fn parse(text: &str) -> Result<Self, TokenFileError> {
        let pairs = file::parse(text)?;
        let entries = pairs
            .into_iter()
            .map(|(token, owner)| Entry {
                token: token.into_bytes().into_boxed_slice(),
                owner,
            })
            .collect();
        Ok(Self { entries })
    }

    /// The number of configured tokens.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no token is configured (never true for parsed tokens).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The owner of the request's bearer token.
    ///
    /// The presented token is compared with every configured token, in time that depends on the
    /// lengths only, never on which token matched or where the bytes differ.
    ///
    /// # Errors
    /// [`AuthFailure`] for a missing or unknown token.
    pub fn authenticate(&self, headers: &HeaderMap) -> Result<Owner, AuthFailure> {
        let presented = bearer_token(headers).ok_or(AuthFailure::Missing)?;
        let mut hit = usize::MAX;
        for (index, entry) in self.entries.iter().enumerate() {
            // All-ones when equal, zero otherwise: select without a branch on the secret.
            let mask = usize::from(constant_time_eq(&entry.token, presented)).wrapping_neg();
            hit = (index & mask) | (hit & !mask);
        }
        self.entries
            .get(hit)
            .map(|entry| Owner(entry.owner.clone()))
            .ok_or(AuthFailure::Invalid)
    }
}

impl fmt::Debug for AuthTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthTokens")
            .field(
                "owners",
                &self.entries.iter().map(|e| e.owner.as_str()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// The token of `Authorization: Bearer TOKEN` (scheme case-insensitive), if any.
fn bearer_token(headers: &HeaderMap) -> Option<&[u8]> {
    let value = headers.get(AUTHORIZATION)?.as_bytes();
    let (scheme, token) = value.split_at_checked(7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let token = token.trim_ascii();
    (!token.is_empty()).then_some(token)
}

/// Compares `a` and `b` in time that depends on their lengths only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let byte = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        diff |= usize::from(byte(a, i) ^ byte(b, i));
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            AUTHORIZATION,
            HeaderValue::from_str(authorization).expect("a header value"),
        );
        headers
    }

    fn tokens() -> AuthTokens {
        AuthTokens::parse("tok-alice alice\ntok-bob bob\n").expect("valid")
    }

    #[test]
    fn the_right_token_names_its_owner() {
        let tokens = tokens();
        assert_eq!(
            tokens.authenticate(&headers("Bearer tok-alice")),
            Ok(Owner("alice".to_owned()))
        );
        assert_eq!(
            tokens.authenticate(&headers("bearer  tok-bob ")),
            Ok(Owner("bob".to_owned()))
        );
    }

    #[test]
    fn wrong_or_missing_tokens_fail() {
        let tokens = tokens();
        for wrong in [
            "Bearer tok-alicf",
            "Bearer tok-alice2",
            "Bearer tok",
            "Bearer alice",
        ] {
            assert_eq!(
                tokens.authenticate(&headers(wrong)),
                Err(AuthFailure::Invalid),
                "{wrong}"
            );
        }
        for missing in ["tok-alice", "Basic dG9rLWFsaWNlOg==", "Bearer", "Bearer   "] {
            assert_eq!(
                tokens.authenticate(&headers(missing)),
                Err(AuthFailure::Missing),
                "{missing}"
            );
        }
        assert_eq!(tokens.authenticate(&HeaderMap::new()), Err(AuthFailure::Missing));
    }

    #[test]
    fn constant_time_eq_is_equality() {
        assert!(constant_time_eq(b"", b""));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abc\0"));
        assert!(!constant_time_eq(b"abc\0", b"abc"));
        assert!(!constant_time_eq(b"", b"a"));
    }

    #[test]
    fn debug_never_shows_tokens() {
        let shown = format!("{:?}", tokens());
        assert!(shown.contains("alice"), "{shown}");
        assert!(!shown.contains("tok-"), "{shown}");
    }
}
