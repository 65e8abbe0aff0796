//! What the operator adds to the built-in function list ([`FunctionPolicy`]): more functions to
//! refuse, the user-defined functions an executor found at start-up, and an allow-list mode.

use std::collections::{BTreeMap, BTreeSet};

use super::{SqlDialect, functions};

/// Which functions the model's SQL may call, beyond the built-in list of each dialect (the
/// server's files, its settings, other sessions, replication, large objects, foreign servers,
/// locks that outlive the query, SQL run from text: docs/SECURITY.md), which always applies.
///
/// - [`deny`](Self::deny) refuses one more function, with the reason its refusal gives.
/// - [`user_defined`](Self::user_defined) names functions of unknown effect — those the database
///   executors find in the database's own schemas when they connect — refused unless
///   [`allow`](Self::allow)ed.
/// - [`allow_only`](Self::allow_only) turns the policy into an allow list: only the listed
///   functions (`count`, `sum`, `lower`, …) may be called, and every other call is refused.
///
/// Names are matched on the function's last name part (`public.f` and `f` alike), in any case.
///
/// ```
/// use dual_sql::sql_guard::{FunctionPolicy, RefusalCode, SqlDialect, read_only_query_with};
///
/// let policy = FunctionPolicy::new()
///     .deny("pg_sleep", "the operator forbids waiting")
///     .user_defined(["refresh_totals", "tax_rate"])
///     .allow("tax_rate");
/// let pg = SqlDialect::PostgreSql;
/// assert!(read_only_query_with("SELECT tax_rate('FR')", pg, &policy).is_ok());
/// let refused = read_only_query_with("SELECT public.refresh_totals()", pg, &policy).unwrap_err();
/// assert_eq!(refused.code(), RefusalCode::FunctionRefused);
/// assert!(refused.to_string().contains("user-defined"));
/// assert!(read_only_query_with("SELECT pg_sleep(1)", pg, &policy).is_err());
///
/// let only = FunctionPolicy::new().allow_only(["count", "sum"]);
/// assert!(read_only_query_with("SELECT count(*), sum(x) FROM t", pg, &only).is_ok());
/// assert!(read_only_query_with("SELECT lower(name) FROM t", pg, &only).is_err());
/// // The built-in list still applies to an allow list.
/// let careless = FunctionPolicy::new().allow_only(["pg_read_file"]);
/// assert!(read_only_query_with("SELECT pg_read_file('/etc/hostname')", pg, &careless).is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionPolicy {
    denied: BTreeMap<String, String>,
    user_defined: BTreeSet<String>,
    allowed: BTreeSet<String>,
    allow_list: bool,
}

impl FunctionPolicy {
    /// The built-in list of each dialect only.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Refuses the function `name` too, giving `reason` ("it calls the payment service").
    #[must_use]
    pub fn deny(mut self, name: impl AsRef<str>, reason: impl Into<String>) -> Self {
        self.denied.insert(key(name.as_ref()), reason.into());
        self
    }

    /// Names functions of unknown effect (a database's own functions): refused unless
    /// [`allow`](Self::allow)ed.
    #[must_use]
    pub fn user_defined<I>(mut self, names: I) -> Self
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        self.user_defined
            .extend(names.into_iter().map(|name| key(name.as_ref())));
        self
    }

    /// Lets the function `name` be called: a user-defined function the operator knows only reads,
    /// or a member of the allow list. The built-in list and [`deny`](Self::deny) still win.
    #[must_use]
    pub fn allow(mut self, name: impl AsRef<str>) -> Self {
        self.allowed.insert(key(name.as_ref()));
        self
    }

    /// Allow-list mode: only `names` (and functions [`allow`](Self::allow)ed before or after) may
    /// be called; every other function call is refused.
    #[must_use]
    pub fn allow_only<I>(mut self, names: I) -> Self
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        self.allow_list = true;
        self.allowed
            .extend(names.into_iter().map(|name| key(name.as_ref())));
        self
    }

    /// Whether this is an allow list ([`allow_only`](Self::allow_only)).
    #[must_use]
    pub fn is_allow_list(&self) -> bool {
        self.allow_list
    }

    /// Why a call of `name` (its last part) is refused in `dialect`, or `None` when it may run.
    #[must_use]
    pub fn refusal(&self, name: &str, dialect: SqlDialect) -> Option<String> {
        if let Some(reason) = functions::refused(name, dialect) {
            return Some(reason.to_owned());
        }
        let name = key(name);
        if let Some(reason) = self.denied.get(&name) {
            return Some(reason.clone());
        }
        if self.allowed.contains(&name) {
            return None;
        }
        if self.allow_list {
            return Some("it is not on the operator's list of functions the SQL may call".to_owned());
        }
        self.user_defined
            .contains(&name)
            .then(|| "it is a user-defined function of unknown effect (an operator may allow it)".to_owned())
    }
}

fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}
