//! JSON Web Key sets (RFC 7517, RFC 7518, RFC 8037): the signing keys of an issuer, read into ring's
//! public-key forms, and the one signature check.
//!
//! A key is kept only when it can verify an accepted algorithm: `RSA` (`n`, `e`), `EC` on `P-256`
//! (`x`, `y`: ring's `0x04 || x || y`), `OKP` on `Ed25519` (`x`). Symmetric keys (`oct`), keys for
//! encryption (`use` other than `sig`) and keys declaring another algorithm are skipped, so a token
//! can never be checked with an HMAC over public key bytes.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde::Deserialize;

use super::jwt::Alg;

/// Most keys kept from one key set.
pub(crate) const MAX_KEYS: usize = 64;

/// One verification key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    /// Its `kid`.
    pub(crate) kid: Option<String>,
    /// The algorithm its JWK declares (`alg`), if any: then only that one.
    alg: Option<Alg>,
    material: Material,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Material {
    /// Modulus and exponent, big-endian without leading zeros.
    Rsa { n: Vec<u8>, e: Vec<u8> },
    /// The uncompressed point `0x04 || x || y`.
    P256(Vec<u8>),
    /// The 32-byte public key.
    Ed25519(Vec<u8>),
}

/// Why a key set document was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JwksError {
    /// Not a JSON object with a `keys` array.
    #[error("not a JWK set: {0}")]
    Json(#[source] serde_json::Error),
}

#[derive(Deserialize)]
struct KeySet {
    keys: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct Jwk {
    kty: String,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default, rename = "use")]
    use_: Option<String>,
    #[serde(default)]
    alg: Option<String>,
    #[serde(default)]
    crv: Option<String>,
    #[serde(default)]
    n: Option<String>,
    #[serde(default)]
    e: Option<String>,
    #[serde(default)]
    x: Option<String>,
    #[serde(default)]
    y: Option<String>,
}

/// The usable keys of a JWK set document (at most [`MAX_KEYS`]); keys that cannot verify an accepted
/// algorithm are skipped.
pub(crate) fn parse_set(document: &[u8]) -> Result<Vec<Key>, JwksError> {
    let set: KeySet = serde_json::from_slice(document).map_err(JwksError::Json)?;
    Ok(set
        .keys
        .into_iter()
        .filter_map(|value| serde_json::from_value::<Jwk>(value).ok())
        .filter_map(key)
        .take(MAX_KEYS)
        .collect())
}

fn key(jwk: Jwk) -> Option<Key> {
    if jwk.use_.as_deref().is_some_and(|use_| use_ != "sig") {
        return None;
    }
    let alg = match jwk.alg.as_deref() {
        Some(name) => Some(Alg::from_name(name)?),
        None => None,
    };
    let material = match (jwk.kty.as_str(), jwk.crv.as_deref()) {
        ("RSA", _) => Material::Rsa {
            n: unsigned(decode(jwk.n.as_deref()?)?),
            e: unsigned(decode(jwk.e.as_deref()?)?),
        },
        ("EC", Some("P-256")) => {
            let (x, y) = (decode(jwk.x.as_deref()?)?, decode(jwk.y.as_deref()?)?);
            if x.len() != 32 || y.len() != 32 {
                return None;
            }
            let mut point = Vec::with_capacity(65);
            point.push(0x04);
            point.extend_from_slice(&x);
            point.extend_from_slice(&y);
            Material::P256(point)
        }
        ("OKP", Some("Ed25519")) => {
            let x = decode(jwk.x.as_deref()?)?;
            if x.len() != 32 {
                return None;
            }
            Material::Ed25519(x)
        }
        _ => return None,
    };
    let key = Key {
        kid: jwk.kid,
        alg,
        material,
    };
    // A declared algorithm of another key type (`"kty": "EC", "alg": "RS256"`) makes the key unusable.
    match alg {
        Some(alg) if !key.fits(alg) => None,
        _ => Some(key),
    }
}

fn decode(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD
        .decode(text)
        .ok()
        .filter(|bytes| !bytes.is_empty())
}

/// `bytes` without leading zero bytes (some issuers pad RSA moduli).
fn unsigned(mut bytes: Vec<u8>) -> Vec<u8> {
    let zeros = bytes.iter().take_while(|&&b| b == 0).count();
    bytes.drain(..zeros);
    bytes
}

impl Key {
    /// Whether this key may verify a token signed with `alg`: its type fits, and its JWK declares
    /// no other algorithm.
    pub(crate) fn fits(&self, alg: Alg) -> bool {
        self.alg.is_none_or(|declared| declared == alg)
            && matches!(
                (&self.material, alg),
                (Material::Rsa { .. }, Alg::Rs256 | Alg::Ps256)
                    | (Material::P256(_), Alg::Es256)
                    | (Material::Ed25519(_), Alg::EdDsa)
            )
    }

    /// Whether `signature` is this key's signature of `message` with `alg`.
    pub(crate) fn verifies(&self, alg: Alg, message: &[u8], signature: &[u8]) -> bool {
        if !self.fits(alg) {
            return false;
        }
        match (&self.material, alg) {
            (Material::Rsa { n, e }, Alg::Rs256 | Alg::Ps256) => {
                let params = if alg == Alg::Rs256 {
                    &signature::RSA_PKCS1_2048_8192_SHA256
                } else {
                    &signature::RSA_PSS_2048_8192_SHA256
                };
                RsaPublicKeyComponents { n, e }
                    .verify(params, message, signature)
                    .is_ok()
            }
            (Material::P256(point), Alg::Es256) => {
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                    .verify(message, signature)
                    .is_ok()
            }
            (Material::Ed25519(x), Alg::EdDsa) => UnparsedPublicKey::new(&signature::ED25519, x)
                .verify(message, signature)
                .is_ok(),
            _ => false,
        }
    }
}

/// The keys of `keys` that may verify a token with `kid` and `alg`: those with that `kid`, or every
/// fitting key when the token names none.
pub(crate) fn candidates<'k>(
    keys: &'k [Key],
    kid: Option<&'k str>,
    alg: Alg,
) -> impl Iterator<Item = &'k Key> {
    keys.iter()
        .filter(move |key| key.fits(alg) && (kid.is_none() || key.kid.as_deref() == kid))
}

#[cfg(test)]
mod tests {
    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair as _};
    use serde_json::json;

    use super::*;

    fn b64(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    fn p256() -> EcdsaKeyPair {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .expect("a P-256 key");
        EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .expect("reads back")
    }

    fn ec_jwk(pair: &EcdsaKeyPair, kid: &str) -> serde_json::Value {
        let point = pair.public_key().as_ref();
        json!({"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig",
               "x": b64(&point[1..33]), "y": b64(&point[33..])})
    }

    #[test]
    fn an_ec_key_verifies_its_signatures_only() {
        let (pair, other) = (p256(), p256());
        let keys = parse_set(json!({"keys": [ec_jwk(&pair, "a")]}).to_string().as_bytes()).expect("a set");
        assert_eq!(keys.len(), 1);
        let rng = SystemRandom::new();
        let signature = pair.sign(&rng, b"message").expect("signs");
        assert!(keys[0].verifies(Alg::Es256, b"message", signature.as_ref()));
        assert!(!keys[0].verifies(Alg::Es256, b"massage", signature.as_ref()));
        assert!(!keys[0].verifies(Alg::Rs256, b"message", signature.as_ref()));
        let forged = other.sign(&rng, b"message").expect("signs");
        assert!(!keys[0].verifies(Alg::Es256, b"message", forged.as_ref()));
    }

    #[test]
    fn an_ed25519_key_verifies() {
        let rng = SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).expect("a key");
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("reads back");
        let jwk =
            json!({"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "x": b64(pair.public_key().as_ref())});
        let keys = parse_set(json!({"keys": [jwk]}).to_string().as_bytes()).expect("a set");
        let signature = pair.sign(b"message");
        assert!(keys[0].verifies(Alg::EdDsa, b"message", signature.as_ref()));
        assert!(!keys[0].verifies(Alg::EdDsa, b"other", signature.as_ref()));
        assert!(candidates(&keys, None, Alg::EdDsa).next().is_some());
        assert!(candidates(&keys, Some("x"), Alg::EdDsa).next().is_none());
    }

    #[test]
    fn keys_that_cannot_verify_an_accepted_algorithm_are_skipped() {
        let pair = p256();
        let mut wrong_alg = ec_jwk(&pair, "alg");
        wrong_alg["alg"] = json!("RS256");
        let mut encryption = ec_jwk(&pair, "enc");
        encryption["use"] = json!("enc");
        let mut es384 = ec_jwk(&pair, "es384");
        es384["alg"] = json!("ES384");
        let set = json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0", "alg": "HS256", "kid": "hmac"},
            wrong_alg, encryption, es384,
            {"kty": "EC", "crv": "P-384", "x": "AA", "y": "AA"},
            {"kty": "RSA", "n": "", "e": "AQAB"},
            {"kty": "OKP", "crv": "X25519", "x": b64(&[1; 32])},
            {"kty": "OKP", "crv": "Ed25519", "x": b64(&[1; 31])},
            {"no": "kty"},
            "not an object",
            ec_jwk(&pair, "good"),
        ]});
        let keys = parse_set(set.to_string().as_bytes()).expect("a set");
        let kids: Vec<_> = keys.iter().map(|key| key.kid.as_deref()).collect();
        assert_eq!(kids, [Some("good")]);
        assert!(parse_set(b"[]").is_err());
        assert!(parse_set(b"{\"keys\": 1}").is_err());
    }

    #[test]
    fn rsa_moduli_lose_leading_zeros() {
        let jwk = json!({"kty": "RSA", "kid": "r", "n": b64(&[0, 0, 0xc1, 2]), "e": b64(&[1, 0, 1])});
        let keys = parse_set(json!({"keys": [jwk]}).to_string().as_bytes()).expect("a set");
        assert_eq!(
            keys[0].material,
            Material::Rsa {
                n: vec![0xc1, 2],
                e: vec![1, 0, 1]
            }
        );
        assert!(keys[0].fits(Alg::Rs256) && keys[0].fits(Alg::Ps256));
        assert!(!keys[0].fits(Alg::Es256));
    }
}
