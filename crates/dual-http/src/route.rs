//! Paths below the mount prefix: `/{id}`, `/{id}/data`, `/{id}/profile`, `/{id}/query` and `/{id}/view`.

/// Which of the API's paths a request is for, with the id text (not yet validated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route<'a> {
    /// `/{id}`: metadata, page, pin, delete.
    Item(&'a str),
    /// `/{id}/data`: the streamed export.
    Data(&'a str),
    /// `/{id}/view`: the result view, as an HTML page.
    View(&'a str),
    /// `/{id}/profile`: the column profile.
    Profile(&'a str),
    /// `/{id}/query`: SQL over the stored result, answered with a new result.
    Query(&'a str),
}

impl Route<'_> {
    /// The `Allow` header of the route.
    pub(crate) const fn allow(self, cors: bool) -> &'static str {
        match (self, cors) {
            (Self::Item(_), false) => "GET, HEAD, POST, PUT, DELETE",
            (Self::Item(_), true) => "GET, HEAD, POST, PUT, DELETE, OPTIONS",
            (Self::Data(_) | Self::View(_) | Self::Profile(_), false) => "GET, HEAD",
            (Self::Data(_) | Self::View(_) | Self::Profile(_), true) => "GET, HEAD, OPTIONS",
            (Self::Query(_), false) => "POST",
            (Self::Query(_), true) => "POST, OPTIONS",
        }
    }
}

/// Matches `path` below `prefix` (`""` or `/a/b`, no trailing slash). `None` for anything else: a path
/// outside the prefix, an empty id, extra segments, a trailing slash.
pub(crate) fn route<'a>(prefix: &str, path: &'a str) -> Option<Route<'a>> {
    let rest = path.strip_prefix(prefix)?.strip_prefix('/')?;
    let mut segments = rest.split('/');
    let id = segments.next().filter(|id| !id.is_empty())?;
    match (segments.next(), segments.next()) {
        (None, _) => Some(Route::Item(id)),
        (Some("data"), None) => Some(Route::Data(id)),
        (Some("view"), None) => Some(Route::View(id)),
        (Some("profile"), None) => Some(Route::Profile(id)),
        (Some("query"), None) => Some(Route::Query(id)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_below_the_prefix() {
        assert_eq!(route("", "/abc"), Some(Route::Item("abc")));
        assert_eq!(route("", "/abc/data"), Some(Route::Data("abc")));
        assert_eq!(route("/resources", "/resources/abc"), Some(Route::Item("abc")));
        assert_eq!(
            route("/resources", "/resources/abc/data"),
            Some(Route::Data("abc"))
        );
        assert_eq!(route("/a/b", "/a/b/x/data"), Some(Route::Data("x")));
        assert_eq!(route("/r", "/r/x/view"), Some(Route::View("x")));
        assert_eq!(route("/r", "/r/x/profile"), Some(Route::Profile("x")));
        assert_eq!(route("/r", "/r/x/query"), Some(Route::Query("x")));
    }

    #[test]
    fn rejects_everything_else() {
        for (prefix, path) in [
            ("", "/"),
            ("", ""),
            ("", "//data"),
            ("", "/abc/"),
            ("", "/abc/data/"),
            ("", "/abc/other"),
            ("", "/abc/data/x"),
            ("", "/abc/view/"),
            ("", "/abc/view/x"),
            ("", "/abc/profile/"),
            ("", "/abc/profile/x"),
            ("", "/abc/query/"),
            ("", "/abc/query/x"),
            ("/resources", "/abc"),
            ("/resources", "/resources"),
            ("/resources", "/resources/"),
            ("/resources", "/resourcesabc"),
            ("/resources", "/other/resources/abc"),
        ] {
            assert_eq!(route(prefix, path), None, "{prefix:?} {path:?}");
        }
    }
}
