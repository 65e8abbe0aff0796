//! Compact JWS access tokens (RFC 7515, RFC 7519, RFC 9068): the parse and the claim checks, no IO.
//!
//! Sizes are checked before anything is decoded: the whole token against [`MAX_TOKEN_BYTES`], the
//! protected header's segment against [`MAX_HEADER_SEGMENT_BYTES`]. Base64url is decoded strictly
//! (no padding, no stray bits), so one token has one encoding.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::{Map, Value};

/// Longest access token accepted, in bytes.
pub(crate) const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// Longest encoded protected header accepted, in bytes.
pub(crate) const MAX_HEADER_SEGMENT_BYTES: usize = 1024;

/// The signature algorithms accepted: asymmetric only (never `none`, never an HMAC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alg {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
    /// RSASSA-PSS with SHA-256.
    Ps256,
    /// ECDSA on P-256 with SHA-256.
    Es256,
    /// Ed25519.
    EdDsa,
}

impl Alg {
    /// The algorithm named `name` in a JWS header or a JWK, if it is one accepted.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        match name {
            "RS256" => Some(Self::Rs256),
            "PS256" => Some(Self::Ps256),
            "ES256" => Some(Self::Es256),
            "EdDSA" | "Ed25519" => Some(Self::EdDsa),
            _ => None,
        }
    }
}

/// Why a token was refused. The log says which; the client hears only `invalid_token`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TokenError {
    /// Longer than [`MAX_TOKEN_BYTES`], or a header segment longer than [`MAX_HEADER_SEGMENT_BYTES`].
    #[error("the token or its header is over the size cap")]
    TooLong,
    /// Not three base64url segments.
    #[error("not a compact JWS")]
    Malformed,
    /// The header is not a JSON object with a string `alg`.
    #[error("the header is not a JWS header")]
    Header,
    /// An algorithm outside the allow-list (`none`, HMAC, …).
    #[error("the algorithm is not allowed")]
    Algorithm,
    /// A `crit` header: an extension this server does not implement.
    #[error("the header names critical extensions")]
    Critical,
    /// The payload is not a JSON object.
    #[error("the claims are not a JSON object")]
    Claims,
    /// The issuer's key set has no key for the token's `kid` and `alg`.
    #[error("no key of the issuer matches the token's kid and alg")]
    UnknownKey,
    /// No candidate key verifies the signature.
    #[error("the signature does not verify")]
    Signature,
    /// `iss` missing or not a trusted issuer.
    #[error("the issuer is not trusted")]
    Issuer,
    /// No numeric `exp`.
    #[error("the token has no expiry")]
    NoExpiry,
    /// `exp` is past, beyond the leeway.
    #[error("the token has expired")]
    Expired,
    /// `nbf` is ahead, beyond the leeway, or not a number.
    #[error("the token is not valid yet")]
    NotYetValid,
    /// `aud` does not name this resource.
    #[error("the audience is not this resource")]
    Audience,
    /// The owner claim is missing, empty, too long or not a string.
    #[error("the owner claim is missing or not a string")]
    Owner,
    /// An opaque token the authorization server says is not active.
    #[error("the introspected token is not active")]
    Inactive,
}

/// A parsed, not yet verified, token.
#[derive(Debug)]
pub(crate) struct Jws<'a> {
    /// The header's algorithm, one accepted.
    pub(crate) alg: Alg,
    /// The header's key id.
    pub(crate) kid: Option<String>,
    /// What the signature covers: `header.payload` as sent.
    pub(crate) signing_input: &'a [u8],
    /// The decoded signature.
    pub(crate) signature: Vec<u8>,
    /// The decoded claims.
    pub(crate) claims: Map<String, Value>,
}

#[derive(Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default)]
    crit: Option<serde::de::IgnoredAny>,
}

/// Parses a compact JWS; checks sizes first, then the alphabet, then the header, then the claims.
pub(crate) fn parse(token: &[u8]) -> Result<Jws<'_>, TokenError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(TokenError::TooLong);
    }
    let mut segments = token.split(|&b| b == b'.');
    let (Some(header), Some(payload), Some(signature), None) =
        (segments.next(), segments.next(), segments.next(), segments.next())
    else {
        return Err(TokenError::Malformed);
    };
    if header.len() > MAX_HEADER_SEGMENT_BYTES {
        return Err(TokenError::TooLong);
    }
    if [header, payload, signature]
        .iter()
        .any(|segment| segment.is_empty() || !segment.iter().all(|&b| is_base64url(b)))
    {
        return Err(TokenError::Malformed);
    }
    let header: Header = serde_json::from_slice(&decode(header)?).map_err(|_| TokenError::Header)?;
    if header.crit.is_some() {
        return Err(TokenError::Critical);
    }
    let alg = Alg::from_name(&header.alg).ok_or(TokenError::Algorithm)?;
    let claims: Map<String, Value> =
        serde_json::from_slice(&decode(payload)?).map_err(|_| TokenError::Claims)?;
    let signature = decode(signature)?;
    let signing_input = token
        .get(..token.len() - signature_len(token))
        .ok_or(TokenError::Malformed)?;
    Ok(Jws {
        alg,
        kid: header.kid,
        signing_input,
        signature,
        claims,
    })
}

/// The length of the last segment with its leading dot.
fn signature_len(token: &[u8]) -> usize {
    token.iter().rev().position(|&b| b == b'.').map_or(0, |at| at + 1)
}

fn is_base64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

fn decode(segment: &[u8]) -> Result<Vec<u8>, TokenError> {
    URL_SAFE_NO_PAD.decode(segment).map_err(|_| TokenError::Malformed)
}

/// The claim `name` as a string.
pub(crate) fn string_claim<'c>(claims: &'c Map<String, Value>, name: &str) -> Option<&'c str> {
    claims.get(name).and_then(Value::as_str)
}

/// Checks `exp` (required when `exp_required`, as in a JWT; optional in an introspection answer) and
/// `nbf` (when present) against `now` (seconds since the epoch) with `leeway` seconds either way.
pub(crate) fn check_time(
    claims: &Map<String, Value>,
    now: f64,
    leeway: f64,
    exp_required: bool,
) -> Result<(), TokenError> {
    match claims.get("exp") {
        None if !exp_required => {}
        exp => {
            let exp = exp
                .and_then(Value::as_f64)
                .filter(|exp| exp.is_finite())
                .ok_or(TokenError::NoExpiry)?;
            if now > exp + leeway {
                return Err(TokenError::Expired);
            }
        }
    }
    if let Some(nbf) = claims.get("nbf") {
        let nbf = nbf
            .as_f64()
            .filter(|nbf| nbf.is_finite())
            .ok_or(TokenError::NotYetValid)?;
        if nbf > now + leeway {
            return Err(TokenError::NotYetValid);
        }
    }
    Ok(())
}

/// Checks that `aud` (a string or an array of strings) names one of `accepted` exactly.
pub(crate) fn check_audience(claims: &Map<String, Value>, accepted: &[String]) -> Result<(), TokenError> {
    let is_accepted = |aud: &str| accepted.iter().any(|accepted| accepted == aud);
    let named = match claims.get("aud") {
        Some(Value::String(aud)) => is_accepted(aud),
        Some(Value::Array(auds)) => auds.iter().filter_map(Value::as_str).any(is_accepted),
        _ => false,
    };
    if named { Ok(()) } else { Err(TokenError::Audience) }
}

/// The token's scopes: `scope` (a space-separated string, RFC 9068) or `scp` (an array or a
/// string, as Microsoft Entra and Okta send it).
pub(crate) fn scopes(claims: &Map<String, Value>) -> Vec<String> {
    let mut scopes = Vec::new();
    for name in ["scope", "scp"] {
        match claims.get(name) {
            Some(Value::String(text)) => scopes.extend(text.split_ascii_whitespace().map(str::to_owned)),
            Some(Value::Array(items)) => {
                scopes.extend(items.iter().filter_map(Value::as_str).map(str::to_owned))
            }
            _ => {}
        }
    }
    scopes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn b64(value: &Value) -> String {
        URL_SAFE_NO_PAD.encode(value.to_string())
    }

    fn token(header: &Value, claims: &Value) -> String {
        format!("{}.{}.c2ln", b64(header), b64(claims))
    }

    fn claims(value: &Value) -> Map<String, Value> {
        value.as_object().cloned().expect("an object")
    }

    #[test]
    fn a_well_formed_token_parses() {
        let text = token(
            &json!({"alg": "ES256", "kid": "k1", "typ": "at+jwt"}),
            &json!({"sub": "alice"}),
        );
        let jws = parse(text.as_bytes()).expect("parses");
        assert_eq!(jws.alg, Alg::Es256);
        assert_eq!(jws.kid.as_deref(), Some("k1"));
        assert_eq!(jws.signature, b"sig");
        assert_eq!(
            jws.signing_input,
            text.rsplit_once('.').expect("dots").0.as_bytes()
        );
        assert_eq!(string_claim(&jws.claims, "sub"), Some("alice"));
    }

    #[test]
    fn only_asymmetric_algorithms_pass() {
        for alg in ["none", "None", "HS256", "HS512", "RS384", "ES384", "rs256", ""] {
            let text = token(&json!({"alg": alg}), &json!({}));
            assert_eq!(parse(text.as_bytes()).err(), Some(TokenError::Algorithm), "{alg}");
        }
        for alg in ["RS256", "PS256", "ES256", "EdDSA"] {
            let text = token(&json!({"alg": alg}), &json!({}));
            assert!(parse(text.as_bytes()).is_ok(), "{alg}");
        }
    }

    #[test]
    fn malformed_tokens_are_refused() {
        let header = b64(&json!({"alg": "RS256"}));
        let payload = b64(&json!({"sub": "a"}));
        for bad in [
            String::new(),
            "a.b".to_owned(),
            format!("{header}.{payload}"),
            format!("{header}.{payload}.c2ln.c2ln"),
            format!("{header}.{payload}."),
            format!(".{payload}.c2ln"),
            format!("{header}.{payload}.c2ln="),
            format!("{header}.{payload}.c2l+"),
            format!("{header} .{payload}.c2ln"),
            // A stray bit in the last character: not the canonical encoding.
            format!("{header}.{payload}.c2l"),
        ] {
            assert_eq!(parse(bad.as_bytes()).err(), Some(TokenError::Malformed), "{bad}");
        }
        let not_json = format!("{}.{payload}.c2ln", URL_SAFE_NO_PAD.encode("{alg"));
        assert_eq!(parse(not_json.as_bytes()).err(), Some(TokenError::Header));
        let no_alg = token(&json!({"kid": "k"}), &json!({}));
        assert_eq!(parse(no_alg.as_bytes()).err(), Some(TokenError::Header));
        let twice = format!(
            "{}.{payload}.c2ln",
            URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256","alg":"none"}"#)
        );
        assert_eq!(parse(twice.as_bytes()).err(), Some(TokenError::Header));
        let crit = token(&json!({"alg": "RS256", "crit": ["exp"]}), &json!({}));
        assert_eq!(parse(crit.as_bytes()).err(), Some(TokenError::Critical));
        let array = format!("{header}.{}.c2ln", URL_SAFE_NO_PAD.encode("[1]"));
        assert_eq!(parse(array.as_bytes()).err(), Some(TokenError::Claims));
    }

    #[test]
    fn sizes_are_checked_before_decoding() {
        let long = "a".repeat(MAX_TOKEN_BYTES + 1);
        assert_eq!(parse(long.as_bytes()).err(), Some(TokenError::TooLong));
        // An oversize header is refused even though it is not base64url at all.
        let header = "!".repeat(MAX_HEADER_SEGMENT_BYTES + 1);
        assert_eq!(
            parse(format!("{header}.e30.c2ln").as_bytes()).err(),
            Some(TokenError::TooLong)
        );
    }

    #[test]
    fn expiry_and_not_before_have_a_leeway() {
        let now = 1_000_000.0;
        assert_eq!(
            check_time(&claims(&json!({"exp": now + 1.0})), now, 0.0, true),
            Ok(())
        );
        assert_eq!(
            check_time(&claims(&json!({"exp": now - 30.0})), now, 60.0, true),
            Ok(())
        );
        assert_eq!(
            check_time(&claims(&json!({"exp": now - 61.0})), now, 60.0, true),
            Err(TokenError::Expired)
        );
        assert_eq!(
            check_time(&claims(&json!({})), now, 60.0, true),
            Err(TokenError::NoExpiry)
        );
        assert_eq!(check_time(&claims(&json!({})), now, 60.0, false), Ok(()));
        assert_eq!(
            check_time(&claims(&json!({"exp": now - 61.0})), now, 60.0, false),
            Err(TokenError::Expired)
        );
        assert_eq!(
            check_time(&claims(&json!({"exp": "soon"})), now, 60.0, true),
            Err(TokenError::NoExpiry)
        );
        let exp = now + 600.0;
        assert_eq!(
            check_time(&claims(&json!({"exp": exp, "nbf": now + 30.0})), now, 60.0, true),
            Ok(())
        );
        assert_eq!(
            check_time(&claims(&json!({"exp": exp, "nbf": now + 61.0})), now, 60.0, true),
            Err(TokenError::NotYetValid)
        );
        assert_eq!(
            check_time(&claims(&json!({"exp": exp, "nbf": "now"})), now, 60.0, true),
            Err(TokenError::NotYetValid)
        );
    }

    #[test]
    fn the_audience_is_a_string_or_an_array() {
        let resource = "https://mcp.example.com/mcp";
        let accepted = [resource.to_owned()];
        let resource = &accepted[..];
        assert_eq!(
            check_audience(&claims(&json!({"aud": accepted[0]})), resource),
            Ok(())
        );
        assert_eq!(
            check_audience(&claims(&json!({"aud": ["other", accepted[0]]})), resource),
            Ok(())
        );
        for aud in [
            json!("https://mcp.example.com"),
            json!(["other"]),
            json!(null),
            json!([]),
            json!(5),
        ] {
            assert_eq!(
                check_audience(&claims(&json!({"aud": aud})), resource),
                Err(TokenError::Audience),
                "{aud}"
            );
        }
        assert_eq!(
            check_audience(&claims(&json!({})), resource),
            Err(TokenError::Audience)
        );
    }

    #[test]
    fn any_accepted_audience_passes() {
        // Microsoft Entra v2: `aud` is the API's client id (or its `api://` URI).
        let guid = "6f1c2b9e-3d4a-4e5f-9a8b-7c6d5e4f3a2b";
        let accepted = [guid.to_owned(), format!("api://{guid}")];
        for aud in [
            json!(guid),
            json!(format!("api://{guid}")),
            json!(["other", guid]),
        ] {
            assert_eq!(
                check_audience(&claims(&json!({"aud": aud})), &accepted),
                Ok(()),
                "{aud}"
            );
        }
        for aud in [
            json!("https://mcp.example.com/mcp"),
            json!(guid.to_uppercase()),
            json!([]),
        ] {
            assert_eq!(
                check_audience(&claims(&json!({"aud": aud})), &accepted),
                Err(TokenError::Audience),
                "{aud}"
            );
        }
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        assert_eq!(scopes(&claims(&json!({"scope": "a  b"}))), ["a", "b"]);
        assert_eq!(scopes(&claims(&json!({"scp": ["a", 1, "c"]}))), ["a", "c"]);
        assert_eq!(scopes(&claims(&json!({"scp": "d"}))), ["d"]);
        assert!(scopes(&claims(&json!({"scope": 5}))).is_empty());
    }
}
