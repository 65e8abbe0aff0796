//! What a link's token signs: the claims, written as one version-prefixed string, and the
//! HMAC-SHA256 over it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use dual_core::{ResourceId, Sort, range::RowRange};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::{LinkFormat, LinkKey};

/// What a token grants, exactly as it is signed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Claims<'a> {
    /// `GET`/`HEAD {id}/data` with exactly these parameters.
    Data {
        id: ResourceId,
        format: LinkFormat,
        range: RowRange,
        sort: Option<&'a Sort>,
        expires: u64,
    },
    /// Reading `{id}` (metadata, pages, data, the view page).
    Read { id: ResourceId, expires: u64 },
}

impl Claims<'_> {
    /// The MAC input: fields joined with `\n` after `dual-response/link/v1` (docs/SECURITY.md).
    /// Unambiguous: every field but the sort has a fixed alphabet without `\n`, and the sort is
    /// followed only by the digits of `expires`.
    fn message(&self) -> String {
        const VERSION: &str = "dual-response/link/v1";
        match self {
            Self::Data {
                id,
                format,
                range,
                sort,
                expires,
            } => {
                let limit = range.limit.map(|l| l.to_string()).unwrap_or_default();
                let sort = sort.map(ToString::to_string).unwrap_or_default();
                format!(
                    "{VERSION}\ndata\n{id}\n{format}\n{offset}\n{limit}\n{sort}\n{expires}",
                    offset = range.offset
                )
            }
            Self::Read { id, expires } => format!("{VERSION}\nread\n{id}\n{expires}"),
        }
    }

    fn mac(&self, key: &LinkKey) -> Hmac<Sha256> {
        // HMAC takes a key of any length; `LinkKey` has at least 32 bytes.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key.bytes())
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
        mac.update(self.message().as_bytes());
        mac
    }

    /// The token: base64url without padding of the HMAC-SHA256 of the claims.
    pub(crate) fn sign(&self, key: &LinkKey) -> String {
        URL_SAFE_NO_PAD.encode(self.mac(key).finalize().into_bytes())
    }

    /// Whether `token` is the claims' token under `key`, compared in constant time.
    pub(crate) fn verify(&self, key: &LinkKey, token: &str) -> bool {
        let Ok(tag) = URL_SAFE_NO_PAD.decode(token) else {
            return false;
        };
        self.mac(key).verify_slice(&tag).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_is_the_documented_string() {
        let id = ResourceId::new();
        let sort = Sort::new("name", dual_core::SortOrder::Desc);
        let data = Claims::Data {
            id,
            format: LinkFormat::Csv,
            range: RowRange::new(10, Some(20)),
            sort: Some(&sort),
            expires: 1_700_000_000,
        };
        assert_eq!(
            data.message(),
            format!("dual-response/link/v1\ndata\n{id}\ncsv\n10\n20\nname:desc\n1700000000")
        );
        let whole = Claims::Data {
            id,
            format: LinkFormat::Ndjson,
            range: RowRange::ALL,
            sort: None,
            expires: 5,
        };
        assert_eq!(
            whole.message(),
            format!("dual-response/link/v1\ndata\n{id}\nndjson\n0\n\n\n5")
        );
        let read = Claims::Read { id, expires: 5 };
        assert_eq!(read.message(), format!("dual-response/link/v1\nread\n{id}\n5"));
    }

    #[test]
    fn a_token_verifies_under_its_key_only() {
        let key = LinkKey::from_bytes(&[1; 32]).expect("key");
        let other = LinkKey::from_bytes(&[2; 32]).expect("key");
        let claims = Claims::Read {
            id: ResourceId::new(),
            expires: 9,
        };
        let token = claims.sign(&key);
        assert_eq!(token.len(), 43, "32 bytes, base64url without padding");
        assert!(claims.verify(&key, &token));
        assert!(!claims.verify(&other, &token));
        assert!(!claims.verify(&key, &token[..42]));
        assert!(!claims.verify(&key, &format!("{token}=")));
        assert!(!claims.verify(&key, ""));
        assert!(!claims.verify(&key, "not base64!"));
    }
}
