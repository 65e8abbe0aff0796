//! Connection URLs without their secrets, for logs and `Debug`.

/// `url` with any password replaced by `***`: `redis://user:secret@host/0` becomes
/// `redis://user:***@host/0`. Text that is not a URL with credentials is returned unchanged.
pub(crate) fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_owned();
    };
    let Some((user, _)) = rest[..at].split_once(':') else {
        return url.to_owned();
    };
    format!("{}{user}:***{}", &url[..scheme_end + 3], &rest[at..])
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn hides_passwords_only() {
        assert_eq!(redact_url("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert_eq!(redact_url("redis://:pw@host:6379/0"), "redis://:***@host:6379/0");
        assert_eq!(
            redact_url("rediss://me:p%40ss@host/1?x=1"),
            "rediss://me:***@host/1?x=1"
        );
        assert_eq!(redact_url("redis://me@host"), "redis://me@host");
        assert_eq!(redact_url("not a url"), "not a url");
    }
}
