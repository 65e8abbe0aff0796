//! Resource identifiers.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use ulid::Ulid;

/// The identifier of a stored resource: a ULID, written as its 26-character Crockford base32 form.
///
/// ULIDs sort by creation time, so ids double as a rough creation order in logs and stores.
///
/// # Canonical text
///
/// [`FromStr`] accepts exactly the 26-character Crockford base32 strings whose first character is
/// `0`–`7` (26 × 5 bits is 130 bits; a first character of `8` or more would overflow the 128-bit
/// value, and the `ulid` crate silently drops the overflow, so `8…` and `0…` would name the same id).
/// Letters may be upper or lower case: `01j…` names exactly the same id as `01J…` (Crockford base32
/// is case-insensitive), and [`Display`](fmt::Display) always writes upper case. Crockford's aliases
/// (`I`, `L` for `1`, `O` for `0`) and `U` are not accepted. So two different accepted strings name
/// the same id exactly when they differ only by case.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceId(Ulid);

impl ResourceId {
    /// A fresh, random id stamped with the current time.
    #[must_use]
    pub fn new() -> Self {
        Self(Ulid::new())
    }

    /// Wraps an existing ULID.
    #[must_use]
    pub const fn from_ulid(ulid: Ulid) -> Self {
        Self(ulid)
    }

    /// The underlying ULID.
    #[must_use]
    pub const fn as_ulid(&self) -> Ulid {
        self.0
    }
}

impl Default for ResourceId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ResourceId({})", self.0)
    }
}

/// The text given to [`ResourceId::from_str`] is not a ULID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed resource id: expected a 26-character ULID")]
pub struct InvalidResourceId;

impl FromStr for ResourceId {
    type Err = InvalidResourceId;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // The first character carries only the top 3 bits of the 128-bit value: `0`–`7`.
        if s.len() != ulid::ULID_LEN || !matches!(s.as_bytes()[0], b'0'..=b'7') {
            return Err(InvalidResourceId);
        }
        Ulid::from_string(s).map(Self).map_err(|_| InvalidResourceId)
    }
}

impl Serialize for ResourceId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0; ulid::ULID_LEN];
        serializer.serialize_str(self.0.array_to_str(&mut buf))
    }
}

impl<'de> Deserialize<'de> for ResourceId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_parse_round_trip() {
        let id = ResourceId::new();
        let text = id.to_string();
        assert_eq!(text.len(), 26);
        assert_eq!(text.parse::<ResourceId>(), Ok(id));
    }

    #[test]
    fn rejects_malformed_ids() {
        for bad in [
            "",
            "abc",
            "01J0000000000000000000000!",
            "01J00000000000000000000000X",
            "../etc/passwd",
            "81J00000000000000000000000",
            "G1J00000000000000000000000",
            "R1J00000000000000000000000",
            "01I00000000000000000000000",
            "01L00000000000000000000000",
            "01O00000000000000000000000",
            "01U00000000000000000000000",
            "01J0000000000000000000000\u{e9}",
        ] {
            assert_eq!(bad.parse::<ResourceId>(), Err(InvalidResourceId), "{bad}");
        }
    }

    #[test]
    fn lowercase_names_the_same_id() {
        let id = ResourceId::new();
        assert_eq!(id.to_string().to_ascii_lowercase().parse::<ResourceId>(), Ok(id));
    }

    #[test]
    fn the_largest_id_round_trips() {
        let id = ResourceId::from_ulid(Ulid(u128::MAX));
        assert_eq!(id.to_string(), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
        assert_eq!("7ZZZZZZZZZZZZZZZZZZZZZZZZZ".parse::<ResourceId>(), Ok(id));
    }

    #[test]
    fn serde_is_a_plain_string() {
        let id = ResourceId::new();
        let json = serde_json::to_string(&id).unwrap_or_default();
        assert_eq!(json, format!("\"{id}\""));
        let back: ResourceId = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, id);
        assert!(serde_json::from_str::<ResourceId>("\"nope\"").is_err());
    }
}
