//! Connection strings without their secrets, for logs and `Debug`; shared by every store backend.

/// `conn` with any password replaced by `***`, for URLs and key-value connection strings:
/// `redis://user:secret@host/0` becomes `redis://user:***@host/0`, `…?password=secret` becomes
/// `…?password=***`, and `host=h password=secret` becomes `host=h password=***`. Text without a
/// password is returned unchanged.
///
/// ```
/// assert_eq!(dual_store::redact_secrets("redis://:pw@host:6379/0"), "redis://:***@host:6379/0");
/// ```
#[must_use]
pub fn redact_secrets(conn: &str) -> String {
    let Some(scheme_end) = conn.find("://") else {
        return redact_key_value(conn);
    };
    let rest = &conn[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let query = redact_query(&rest[authority_end..]);
    let Some(at) = rest[..authority_end].rfind('@') else {
        return format!("{}{}{query}", &conn[..scheme_end + 3], &rest[..authority_end]);
    };
    let authority = match rest[..at].split_once(':') {
        Some((user, _)) => format!("{user}:***{}", &rest[at..authority_end]),
        None => rest[..authority_end].to_owned(),
    };
    format!("{}{authority}{query}", &conn[..scheme_end + 3])
}

/// `?password=…` in a URL's query.
fn redact_query(tail: &str) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_owned();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{path}?{}", pairs.join("&"))
}

/// `password=…` in a key-value connection string (the value may be single-quoted).
fn redact_key_value(conn: &str) -> String {
    let Some(start) = conn.find("password") else {
        return conn.to_owned();
    };
    let after_key = &conn[start + "password".len()..];
    let Some(eq) = after_key.find('=') else {
        return conn.to_owned();
    };
    let value = after_key[eq + 1..].trim_start();
    let skipped = after_key.len() - value.len();
    let value_len = if let Some(quoted) = value.strip_prefix('\'') {
        quoted.find('\'').map_or(value.len(), |end| end + 2)
    } else {
        value.find(char::is_whitespace).unwrap_or(value.len())
    };
    let value_end = start + "password".len() + skipped + value_len;
    format!("{}password=***{}", &conn[..start], &conn[value_end..])
}

#[cfg(test)]
mod tests {
    use super::redact_secrets;

    #[test]
    fn hides_passwords_only() {
        for (given, want) in [
            (
                "postgres://postgres@127.0.0.1:5432/test",
                "postgres://postgres@127.0.0.1:5432/test",
            ),
            (
                "postgres://u:s3cret@h/db?sslmode=disable",
                "postgres://u:***@h/db?sslmode=disable",
            ),
            (
                "postgresql://h/db?user=u&password=s3cret",
                "postgresql://h/db?user=u&password=***",
            ),
            ("postgres://127.0.0.1/test", "postgres://127.0.0.1/test"),
            (
                "host=h user=u password=s3cret dbname=d",
                "host=h user=u password=*** dbname=d",
            ),
            ("host=h password = 'a b' dbname=d", "host=h password=*** dbname=d"),
            ("host=h dbname=d", "host=h dbname=d"),
            ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379"),
            ("redis://:pw@host:6379/0", "redis://:***@host:6379/0"),
            ("rediss://me:p%40ss@host/1?x=1", "rediss://me:***@host/1?x=1"),
            ("redis://me@host", "redis://me@host"),
            (
                "postgres://me:s%40cret@h:5432/db?sslmode=disable&password=x",
                "postgres://me:***@h:5432/db?sslmode=disable&password=***",
            ),
            ("memory", "memory"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(redact_secrets(given), want, "{given}");
        }
    }
}
