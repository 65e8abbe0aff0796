//! The common request body, `{"offset": 200, "limit": 100}` (with or without a `sort`), read straight
//! into its fields: no `serde_json::Value`, no map, no allocation but the sort's column name.
//!
//! Anything this shape refuses (an unknown or repeated field, an integral float such as `100.0`, a
//! negative number, an escaped or empty column name, an unknown order, malformed JSON) is read again
//! by [`PageRequest::from_value`](super::PageRequest::from_value), which accepts or names the error
//! exactly as before. So this is a shortcut, never a second set of rules: whenever it answers, its
//! answer is the one `from_value` would give.

use serde::Deserialize;

use super::PageRequest;
use crate::{Sort, SortOrder};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Plain<'a> {
    #[serde(default)]
    offset: Option<u64>,
    #[serde(default)]
    limit: Option<u64>,
    #[serde(default, borrow)]
    sort: Option<PlainSort<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainSort<'a> {
    field: &'a str,
    #[serde(default)]
    order: Option<&'a str>,
}

/// `body` as a [`PageRequest`] when it is an object of the common shape; `None` for anything else.
pub(super) fn parse(body: &[u8]) -> Option<PageRequest> {
    // Only an object: a derived struct would take an array too (`[1]` as `{"offset": 1}`).
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let plain: Plain<'_> = serde_json::from_slice(body).ok()?;
    let sort = match plain.sort {
        None => None,
        Some(PlainSort { field: "", .. }) => return None,
        Some(PlainSort { field, order }) => {
            let order = match order {
                None => SortOrder::Asc,
                Some(text) => SortOrder::parse(text)?,
            };
            Some(Sort::new(field, order))
        }
    };
    Some(PageRequest {
        offset: plain.offset,
        limit: plain.limit,
        sort,
    })
}
