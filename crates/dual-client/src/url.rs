//! Resource URLs: resolving them against the base URL, and the export URL with its `sort` parameter.

use dual_core::Sort;
use http::Uri;

/// The REST URL of a resource.
///
/// With a base URL, `{base_url}/{id}`, the id taken from the URI (`scheme://id`) or else from the URL's
/// last path segment. Without one, the URL as given, which must be absolute `http(s)`.
pub(crate) fn resolve(
    base_url: Option<&str>,
    uri: Option<&str>,
    url: Option<&str>,
) -> Result<String, String> {
    if let Some(base) = base_url {
        let id = uri
            .and_then(id_from_uri)
            .or_else(|| url.and_then(id_from_url))
            .ok_or_else(|| {
                format!(
                    "cannot find a resource id in `{}`",
                    uri.or(url).unwrap_or_default()
                )
            })?;
        return Ok(format!("{base}/{id}"));
    }
    match url {
        Some(url) => {
            check_http_url(url)?;
            Ok(url.trim_end_matches('/').to_owned())
        }
        None => Err(format!(
            "`{}` has no REST URL: configure a base URL (DualResponseClientBuilder::base_url) to fetch it",
            uri.unwrap_or_default()
        )),
    }
}

fn check_http_url(url: &str) -> Result<(), String> {
    let parsed: Uri = url.parse().map_err(|_| format!("`{url}` is not a valid URL"))?;
    match parsed.scheme_str() {
        Some("http" | "https") if parsed.authority().is_some() => Ok(()),
        _ => Err(format!("`{url}` is not an absolute http(s) URL")),
    }
}

/// The id of `scheme://id[?query]`, for any scheme but the web's own.
fn id_from_uri(uri: &str) -> Option<&str> {
    let (scheme, rest) = uri.split_once("://")?;
    let scheme_ok = !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        && !matches!(
            scheme.to_ascii_lowercase().as_str(),
            "http" | "https" | "file" | "data"
        );
    if !scheme_ok {
        return None;
    }
    let id = rest.split(['?', '#']).next()?.trim_end_matches('/');
    valid_id(id).then_some(id)
}

/// The last path segment of an `http(s)` URL.
fn id_from_url(url: &str) -> Option<&str> {
    let path = url.split(['?', '#']).next()?;
    let (_, after_scheme) = path.split_once("://")?;
    let (_, path) = after_scheme.split_once('/')?;
    let id = path.trim_end_matches('/').rsplit('/').next()?;
    valid_id(id).then_some(id)
}

/// Ids are single path segments of unreserved characters (ULIDs, UUIDs and the like).
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id != "."
        && id != ".."
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b))
}

/// `{url}/data`, with `?sort=field:order` when sorting.
pub(crate) fn export_url(url: &str, sort: Option<&Sort>) -> String {
    let mut out = format!("{url}/data");
    push_sort(&mut out, '?', sort);
    out
}

/// `{url}/data?offset={offset}&limit={limit}`, with `&sort=field:order` when sorting.
pub(crate) fn range_url(url: &str, offset: u64, limit: u64, sort: Option<&Sort>) -> String {
    let mut out = format!("{url}/data?offset={offset}&limit={limit}");
    push_sort(&mut out, '&', sort);
    out
}

/// Appends `{separator}sort=field:order` when sorting.
fn push_sort(out: &mut String, separator: char, sort: Option<&Sort>) {
    if let Some(sort) = sort {
        out.push(separator);
        out.push_str("sort=");
        percent_encode(&sort.field, out);
        out.push(':');
        out.push_str(sort.order.as_str());
    }
}

/// Percent-encodes everything but unreserved characters.
fn percent_encode(text: &str, out: &mut String) {
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dual_core::SortOrder;

    #[test]
    fn resolves_with_and_without_base_url() {
        let base = Some("http://b/res");
        assert_eq!(
            resolve(base, Some("resource://01J"), Some("http://x/y/zz")).as_deref(),
            Ok("http://b/res/01J")
        );
        assert_eq!(
            resolve(base, None, Some("http://x/resources/abc-1/")).as_deref(),
            Ok("http://b/res/abc-1")
        );
        assert_eq!(
            resolve(None, Some("resource://01J"), Some("http://x/resources/01J/")).as_deref(),
            Ok("http://x/resources/01J")
        );
        assert!(resolve(None, Some("resource://01J"), None).is_err_and(|e| e.contains("base URL")));
        assert!(resolve(None, None, Some("ftp://x/1")).is_err());
        assert!(resolve(None, None, Some("/relative/1")).is_err());
        assert!(resolve(base, Some("resource://a/b"), None).is_err());
        assert!(resolve(base, Some("https://evil/x/../"), None).is_err());
        assert_eq!(
            resolve(base, Some("resource://a?offset=5"), None).as_deref(),
            Ok("http://b/res/a")
        );
    }

    #[test]
    fn export_url_encodes_the_sort_field() {
        assert_eq!(export_url("http://h/r/1", None), "http://h/r/1/data");
        let sort = Sort::new("first name&x", SortOrder::Desc);
        assert_eq!(
            export_url("http://h/r/1", Some(&sort)),
            "http://h/r/1/data?sort=first%20name%26x:desc"
        );
        assert_eq!(
            range_url("http://h/r/1", 5, 10, None),
            "http://h/r/1/data?offset=5&limit=10"
        );
        assert_eq!(
            range_url("http://h/r/1", 0, 1, Some(&sort)),
            "http://h/r/1/data?offset=0&limit=1&sort=first%20name%26x:desc"
        );
    }
}
