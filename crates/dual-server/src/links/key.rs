//! The secret links are signed with.

use std::fmt;
use std::sync::Arc;

/// Fewest bytes a [`LinkKey`] has: 32, the output size of SHA-256.
pub const MIN_LINK_KEY_BYTES: usize = 32;

/// The secret capability links are signed with (HMAC-SHA256): at least 32 bytes.
///
/// The default, [`LinkKey::random`], is drawn once per server from the operating system's RNG, so a
/// link verifies only on the instance that minted it and no longer after a restart. Instances that
/// share a store and serve each other's links share one key: give each the same bytes with
/// [`DualResponseServerBuilder::link_key`](crate::DualResponseServerBuilder::link_key). Changing the
/// key revokes every link signed with the old one.
///
/// `Debug` never shows the key.
///
/// ```
/// use dual_server::LinkKey;
/// let key = LinkKey::from_bytes(&[7; 32])?;
/// assert_eq!(format!("{key:?}"), "LinkKey(<redacted>)");
/// assert!(LinkKey::from_bytes(b"too short").is_err());
/// # Ok::<(), dual_server::links::LinkKeyError>(())
/// ```
#[derive(Clone)]
pub struct LinkKey(Arc<[u8]>);

impl LinkKey {
    /// A key made of `bytes` (copied), which must be at least [`MIN_LINK_KEY_BYTES`] long.
    ///
    /// # Errors
    /// [`LinkKeyError::TooShort`] for fewer than 32 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, LinkKeyError> {
        if bytes.len() < MIN_LINK_KEY_BYTES {
            return Err(LinkKeyError::TooShort { len: bytes.len() });
        }
        Ok(Self(bytes.into()))
    }

    /// 32 fresh bytes from the operating system's random number generator: the default key of a
    /// server, which lives as long as its process.
    ///
    /// # Panics
    /// When the operating system has no random number generator to read (`getrandom` fails), as
    /// no secret can be made without one.
    #[must_use]
    pub fn random() -> Self {
        let mut bytes = [0_u8; MIN_LINK_KEY_BYTES];
        // A server cannot sign anything without an OS RNG; every supported platform has one.
        getrandom::fill(&mut bytes).expect("the operating system's random number generator");
        Self(bytes.as_slice().into())
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for LinkKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LinkKey(<redacted>)")
    }
}

/// Why bytes are not a [`LinkKey`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkKeyError {
    /// Fewer than [`MIN_LINK_KEY_BYTES`] bytes.
    #[error("a link key must be at least 32 bytes, got {len}")]
    TooShort {
        /// How many bytes were given.
        len: usize,
    },
}
