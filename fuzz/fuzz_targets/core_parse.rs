//! dual-core's parsers of untrusted text: `ResourceId` from a string, `uri::parse_resource_uri`,
//! `page::parse_sort_param`, and `PageRequest::from_json` followed by `validate`.
//! Each either rejects the input or returns a value that survives its own round trip.

#![no_main]

use dual_core::page::{PageLimits, parse_sort_param};
use dual_core::uri::{parse_resource_uri, resource_uri};
use dual_core::{Column, ColumnType, PageRequest, ResourceId};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    page_request(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(id) = text.parse::<ResourceId>() {
        assert_eq!(
            id.to_string().parse::<ResourceId>(),
            Ok(id),
            "display/parse round trip of {text:?}"
        );
        // docs/SECURITY.md: two accepted strings name the same id only when they differ by case.
        assert!(text.eq_ignore_ascii_case(&id.to_string()), "{text:?} is {id}");
    }
    if let Some(parsed) = parse_resource_uri(text) {
        assert!(!parsed.scheme.is_empty());
        let rebuilt = resource_uri(parsed.scheme, parsed.id);
        let again = parse_resource_uri(&rebuilt).expect("a URI built from a parsed one parses");
        assert_eq!(
            (again.scheme, again.id, again.query),
            (parsed.scheme, parsed.id, None)
        );
    }
    if let Ok(sort) = parse_sort_param(text) {
        assert!(!sort.field.is_empty());
        assert_eq!(parse_sort_param(&sort.to_string()), Ok(sort));
    }
});

/// A `POST /{id}` body: parsed, validated against two columns, and round-tripped through JSON.
fn page_request(body: &[u8]) {
    let Ok(request) = PageRequest::from_json(body) else {
        return;
    };
    let json = serde_json::to_vec(&request).expect("a PageRequest serialises");
    assert_eq!(
        PageRequest::from_json(&json).as_ref(),
        Ok(&request),
        "round trip of {json:?}"
    );
    let columns = [
        Column::new("id", ColumnType::Integer),
        Column::new("name", ColumnType::String),
    ];
    let limits = PageLimits {
        default_limit: 100,
        max_limit: 1000,
    };
    if let Ok(page) = request.validate(limits, &columns) {
        assert!((1..=limits.max_limit).contains(&page.limit));
        assert_eq!(page.offset, request.offset.unwrap_or(0));
        assert!(page.fetch_limit() > page.limit);
        if let Some(sort) = &page.sort {
            assert!(columns.iter().any(|c| c.name == sort.field));
        }
    }
}
