//! `--database URL`: what `serve` serves — `postgres://…`, `mysql://…` (or `mariadb://…`),
//! `sqlite:PATH`, or `demo`, the embedded dataset.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// The schemes `--database` accepts, for messages.
pub const ACCEPTED: &str = "postgres://USER@HOST/DB, mysql://USER@HOST/DB, sqlite:PATH or demo";

/// A database to serve.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DatabaseUrl {
    /// The embedded IPEDS-like dataset with the demo's tools (`query`, `search_institutions`).
    Demo,
    /// A SQLite file, opened read-only.
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgres://` or `postgresql://`).
    Postgres(String),
    /// A MySQL or MariaDB URL (`mysql://`; `mariadb://` is read as `mysql://`).
    Mysql(String),
}

impl DatabaseUrl {
    /// The URL with any password replaced by `***`: what logs and messages show.
    #[must_use]
    pub fn redacted(&self) -> String {
        match self {
            Self::Demo => "demo".to_owned(),
            Self::Sqlite(path) => format!("sqlite:{}", path.display()),
            Self::Postgres(url) | Self::Mysql(url) => dual_store::redact_secrets(url),
        }
    }
}

/// Never the password: [`DatabaseUrl::redacted`].
impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// Never the password: [`DatabaseUrl::redacted`].
impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// Why a `--database` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DatabaseUrlError {
    /// The scheme is none of those accepted.
    #[error("unknown database `{0}`: use {ACCEPTED}")]
    UnknownScheme(String),
    /// `sqlite:` without a path.
    #[error("`sqlite:` needs a file: sqlite:PATH")]
    NoPath,
}

impl FromStr for DatabaseUrl {
    type Err = DatabaseUrlError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("demo") {
            return Ok(Self::Demo);
        }
        let scheme = text
            .split_once(':')
            .map(|(scheme, _)| scheme.to_ascii_lowercase());
        match scheme.as_deref() {
            Some("postgres" | "postgresql") if text.contains("://") => Ok(Self::Postgres(text.to_owned())),
            Some("mysql") if text.contains("://") => Ok(Self::Mysql(text.to_owned())),
            Some("mariadb") if text.contains("://") => {
                Ok(Self::Mysql(format!("mysql{}", &text["mariadb".len()..])))
            }
            Some("sqlite") => {
                let rest = &text["sqlite:".len()..];
                let path = rest.strip_prefix("//").unwrap_or(rest);
                if path.is_empty() {
                    return Err(DatabaseUrlError::NoPath);
                }
                Ok(Self::Sqlite(PathBuf::from(path)))
            }
            _ => Err(DatabaseUrlError::UnknownScheme(dual_store::redact_secrets(text))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_accepted_form_parses() {
        let parse = |text: &str| text.parse::<DatabaseUrl>();
        assert_eq!(parse("demo"), Ok(DatabaseUrl::Demo));
        assert_eq!(
            parse("sqlite:reports.db"),
            Ok(DatabaseUrl::Sqlite("reports.db".into()))
        );
        assert_eq!(
            parse("sqlite:///var/x.db"),
            Ok(DatabaseUrl::Sqlite("/var/x.db".into()))
        );
        assert_eq!(
            parse("postgresql://r@h/db"),
            Ok(DatabaseUrl::Postgres("postgresql://r@h/db".to_owned()))
        );
        assert_eq!(
            parse("mariadb://r@h/db"),
            Ok(DatabaseUrl::Mysql("mysql://r@h/db".to_owned()))
        );
        assert_eq!(
            parse("MySQL://r@h/db"),
            Ok(DatabaseUrl::Mysql("MySQL://r@h/db".to_owned()))
        );
    }

    #[test]
    fn other_schemes_are_refused_naming_what_is_accepted_without_the_password() {
        let error = "oracle://scott:tiger@h/db"
            .parse::<DatabaseUrl>()
            .expect_err("refused");
        let message = error.to_string();
        assert!(message.contains("oracle://scott:***@h/db"), "{message}");
        assert!(!message.contains("tiger"), "{message}");
        assert!(
            message.contains("postgres://") && message.contains("sqlite:PATH"),
            "{message}"
        );
        assert_eq!("sqlite:".parse::<DatabaseUrl>(), Err(DatabaseUrlError::NoPath));
        assert!("reports.db".parse::<DatabaseUrl>().is_err());
        assert!("postgres:nothing".parse::<DatabaseUrl>().is_err());
    }

    #[test]
    fn the_password_never_shows() {
        let url: DatabaseUrl = "postgres://reader:hunter2@db/sales".parse().expect("valid");
        assert_eq!(url.to_string(), "postgres://reader:***@db/sales");
        assert_eq!(format!("{url:?}"), "postgres://reader:***@db/sales");
    }
}
