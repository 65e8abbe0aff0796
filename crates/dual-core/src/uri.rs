//! Resource URIs (`resource://{id}`) and REST URLs (`{base_url}/{id}`).

use crate::ResourceId;

/// The default URI scheme.
pub const DEFAULT_URI_SCHEME: &str = "resource";

/// `scheme://id`, e.g. `resource://01J…`.
#[must_use]
pub fn resource_uri(scheme: &str, id: ResourceId) -> String {
    format!("{scheme}://{id}")
}

/// `base_url/id`, with exactly one slash between them whatever `base_url` ends with.
#[must_use]
pub fn resource_url(base_url: &str, id: ResourceId) -> String {
    format!("{}/{id}", base_url.trim_end_matches('/'))
}

/// `scheme://id/profile`: the URI of the column profile of the resource `id`.
#[must_use]
pub fn profile_uri(scheme: &str, id: ResourceId) -> String {
    format!("{scheme}://{id}/profile")
}

/// A resource URI taken apart: `scheme://id[/profile]?query`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParsedUri<'a> {
    /// The scheme, e.g. `resource`.
    pub scheme: &'a str,
    /// The id part (validated as a ULID).
    pub id: ResourceId,
    /// The URI names the resource's column profile (`scheme://id/profile`), not its rows.
    pub profile: bool,
    /// The text after `?`, if any (used by MCP `resources/read` to address pages).
    pub query: Option<&'a str>,
}

/// Takes apart `scheme://id[/profile][?query]`. Returns `None` when there is no `://`, the scheme is
/// empty or the id is not a ULID.
#[must_use]
pub fn parse_resource_uri(uri: &str) -> Option<ParsedUri<'_>> {
    let (scheme, rest) = uri.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    {
        return None;
    }
    let (id, query) = match rest.split_once('?') {
        Some((id, query)) => (id, Some(query)),
        None => (rest, None),
    };
    let id = id.trim_end_matches('/');
    let (id, profile) = match id.strip_suffix("/profile") {
        Some(id) => (id, true),
        None => (id, false),
    };
    let id = id.parse().ok()?;
    Some(ParsedUri {
        scheme,
        id,
        profile,
        query,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_parses() {
        let id = ResourceId::new();
        let uri = resource_uri("resource", id);
        let parsed = parse_resource_uri(&uri).expect("parses");
        assert_eq!((parsed.scheme, parsed.id, parsed.query), ("resource", id, None));
        assert!(!parsed.profile);
        let profile_text = profile_uri("resource", id);
        let profile = parse_resource_uri(&profile_text).expect("parses");
        assert!(profile.profile && profile.id == id && profile.query.is_none());
        assert!(parse_resource_uri(&format!("{uri}/other")).is_none());
        let paged = format!("{uri}?offset=100&limit=100");
        assert_eq!(
            parse_resource_uri(&paged).and_then(|p| p.query),
            Some("offset=100&limit=100")
        );
        assert_eq!(
            resource_url("http://h/resources/", id),
            format!("http://h/resources/{id}")
        );
        assert_eq!(
            resource_url("http://h/resources", id),
            format!("http://h/resources/{id}")
        );
    }

    #[test]
    fn rejects_non_resource_uris() {
        for bad in [
            "",
            "resource:/x",
            "://01J0000000000000000000000",
            "resource://nope",
            "http://example.com/",
        ] {
            assert!(parse_resource_uri(bad).is_none(), "{bad}");
        }
    }
}
