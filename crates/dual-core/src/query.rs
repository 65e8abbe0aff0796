//! Query definitions stored as data, and sort orders.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A query stored as data: the executor `kind` that runs it and the `params` it gets.
///
/// A resource record never holds a closure, so that any instance of a deployment can serve it: each
/// instance registers an executor for every kind at start-up and re-executes the spec on demand.
///
/// ```
/// use dual_core::QuerySpec;
/// let spec = QuerySpec::new("institutions", serde_json::json!({"state": "NJ"}));
/// assert_eq!(spec.kind, "institutions");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuerySpec {
    /// The registered executor kind, e.g. `"institutions"`.
    pub kind: String,
    /// The executor's parameters, as JSON.
    #[serde(default)]
    pub params: Value,
}

impl QuerySpec {
    /// A spec for executor `kind` with `params`.
    pub fn new(kind: impl Into<String>, params: Value) -> Self {
        Self {
            kind: kind.into(),
            params,
        }
    }
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SortOrder {
    /// Smallest first.
    #[default]
    Asc,
    /// Largest first.
    Desc,
}

impl SortOrder {
    /// `"asc"` or `"desc"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Asc => "asc",
            Self::Desc => "desc",
        }
    }

    /// Parses `"asc"` or `"desc"` (lower case only, as on the wire).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "asc" => Some(Self::Asc),
            "desc" => Some(Self::Desc),
            _ => None,
        }
    }
}

/// Sort a result by one column.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Sort {
    /// A declared column's name.
    pub field: String,
    /// The direction.
    #[serde(default)]
    pub order: SortOrder,
}

impl Sort {
    /// Sort by `field` in `order`.
    pub fn new(field: impl Into<String>, order: SortOrder) -> Self {
        Self {
            field: field.into(),
            order,
        }
    }
}

impl fmt::Display for Sort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.field, self.order.as_str())
    }
}
