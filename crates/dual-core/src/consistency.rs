//! Whether a resource's rows are a snapshot or follow the data.

use serde::{Deserialize, Serialize};

/// How a resource's pages and exports relate to its `total_count` (docs/DESIGN.md §3).
///
/// Records written before snapshots existed carry no such field and read as [`Consistency::Live`],
/// which is what they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Consistency {
    /// One execution at creation wrote the whole result to the spool: pages, sorted pages and
    /// exports serve exactly the rows `total_count` counted, however the source data changes.
    Snapshot,
    /// Pages and exports re-execute the query, so they follow the data (a result over the snapshot
    /// size cap, a server without snapshots, or a record from before snapshots).
    #[default]
    Live,
}

impl Consistency {
    /// `snapshot` or `live`, the wire word.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Snapshot => "snapshot",
            Self::Live => "live",
        }
    }
}

impl std::fmt::Display for Consistency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Consistency {
    type Err = UnknownConsistency;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "snapshot" => Ok(Self::Snapshot),
            "live" => Ok(Self::Live),
            _ => Err(UnknownConsistency),
        }
    }
}

/// A string that is neither `snapshot` nor `live`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("consistency must be `snapshot` or `live`")]
pub struct UnknownConsistency;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_words_round_trip_and_default_to_live() {
        for c in [Consistency::Snapshot, Consistency::Live] {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{c}\""));
            assert_eq!(serde_json::from_str::<Consistency>(&json).unwrap(), c);
            assert_eq!(c.as_str().parse::<Consistency>(), Ok(c));
        }
        assert_eq!(Consistency::default(), Consistency::Live);
        assert!("Snapshot".parse::<Consistency>().is_err());
    }
}
