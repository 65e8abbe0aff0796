//! Capability links: short-lived URLs that read one resource without an `Authorization` header.
//!
//! [`DualResponseServer::download_link`](crate::DualResponseServer::download_link) mints a *data*
//! link (one export: format, range and sort fixed) and
//! [`DualResponseServer::view_link`](crate::DualResponseServer::view_link) a *read* link (the
//! `/{id}/view` page and the REST reads it makes), each after authorizing the caller. A link is the
//! REST URL with `expires=<unix seconds>&token=<base64url HMAC-SHA256>` appended; `dual-http`
//! verifies it with [`Links`] before any store access and answers a bad one exactly like an unknown
//! id. docs/SECURITY.md ("Capability links") describes the model.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use dual_server::{Caller, CreateResponse, DualResponseServer, LinkFormat};
//! use dual_core::range::RowRange;
//! # let server = DualResponseServer::builder()
//! #     .base_url("https://api.example.com/resources")
//! #     .executor("numbers", dual_testkit::executor::Numbers::new())
//! #     .build()?;
//! let created = server
//!     .create_response(CreateResponse::new("numbers", serde_json::json!({"n": 10})).owner("alice"))
//!     .await?;
//! let alice = Caller::owner("alice");
//! let link = server
//!     .download_link(created.id, &alice, LinkFormat::Csv, RowRange::ALL, None)
//!     .await?;
//! assert!(link.url.starts_with(&format!(
//!     "https://api.example.com/resources/{}/data?format=csv&expires=", created.id
//! )));
//! // Nobody else can mint one: another owner's id is not found.
//! assert!(server
//!     .view_link(created.id, &Caller::owner("mallory"))
//!     .await
//!     .is_err());
//! # Ok(()) }
//! ```

mod claims;
mod format;
mod key;

use std::time::Duration;

use dual_core::{ResourceId, Sort, range::RowRange};
use time::OffsetDateTime;

use crate::Caller;
pub(crate) use claims::Claims;

pub use format::{LinkFormat, UnknownLinkFormat};
pub use key::{LinkKey, LinkKeyError, MIN_LINK_KEY_BYTES};

/// Default lifetime of a link: 10 minutes.
pub const DEFAULT_LINK_LIFETIME: Duration = Duration::from_secs(10 * 60);
/// Longest lifetime of a link: 24 hours.
pub const MAX_LINK_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

/// A minted link: the URL to open and when it stops working.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DownloadLink {
    /// The absolute URL, from the server's `base_url`, with `expires` and `token` in its query.
    pub url: String,
    /// The instant the link expires (whole seconds, UTC).
    pub expires_at: OffsetDateTime,
}

/// The server's link signer and verifier: its key and the lifetime of the links it mints.
///
/// Verification is pure (an HMAC and a clock comparison, no store access): it yields the
/// [`Caller`] a valid token stands for, a *grant* that may see that one resource and nothing else,
/// may not pin or delete it, and counts as anonymous for quotas.
#[derive(Debug, Clone)]
pub struct Links {
    pub(crate) key: LinkKey,
    lifetime: Duration,
}

impl Links {
    pub(crate) fn new(key: LinkKey, lifetime: Duration) -> Self {
        Self { key, lifetime }
    }

    /// How long a link minted now lives.
    #[must_use]
    pub fn lifetime(&self) -> Duration {
        self.lifetime
    }

    /// The grant of a read link: `Some` when `token` signs reading `id` until `expires` (unix
    /// seconds) and `now` is before `expires`.
    #[must_use]
    pub fn verify_read(
        &self,
        id: ResourceId,
        expires: u64,
        token: &str,
        now: OffsetDateTime,
    ) -> Option<Caller> {
        self.grant(Claims::Read { id, expires }, expires, token, now)
    }

    /// The grant of a data link: `Some` when `token` signs exactly this export (`format`, `range`,
    /// `sort`) of `id` until `expires` (unix seconds) and `now` is before `expires`.
    #[must_use]
    #[expect(clippy::too_many_arguments, reason = "the signed claims, one argument each")]
    pub fn verify_data(
        &self,
        id: ResourceId,
        format: LinkFormat,
        range: RowRange,
        sort: Option<&Sort>,
        expires: u64,
        token: &str,
        now: OffsetDateTime,
    ) -> Option<Caller> {
        self.grant(data_claims(id, format, range, sort, expires), expires, token, now)
    }

    fn grant(&self, claims: Claims<'_>, expires: u64, token: &str, now: OffsetDateTime) -> Option<Caller> {
        // The MAC first, always: the time a request takes says nothing about its expiry.
        let valid = claims.verify(&self.key, token);
        // A link lives until its `expires`, and never longer than this server's lifetime from now
        // (plus a minute for clocks that disagree across instances): lowering the lifetime cuts
        // the links minted before, and an `expires` far ahead was not minted here.
        let latest = now + self.lifetime + CLOCK_SKEW;
        let live = expiry(expires).is_some_and(|at| now < at && at <= latest);
        let id = match claims {
            Claims::Data { id, .. } | Claims::Read { id, .. } => id,
        };
        (valid && live).then(|| Caller::grant(id))
    }

    /// The `expires` of a link minted at `now`, and its instant: rounded up to the second, so a link
    /// lives at least its lifetime (a lifetime of 1 s is never dead on arrival).
    pub(crate) fn expires(&self, now: OffsetDateTime) -> (u64, OffsetDateTime) {
        let at = now + self.lifetime;
        let whole = at.unix_timestamp() + i64::from(at.nanosecond() > 0);
        let seconds = u64::try_from(whole).unwrap_or(0);
        (seconds, expiry(seconds).unwrap_or(at))
    }
}

/// How far the clocks of two instances sharing a key may disagree: a link is accepted until at most
/// this long past `now + lifetime`.
const CLOCK_SKEW: Duration = Duration::from_secs(60);

/// The instant of `expires` unix seconds; `None` past the calendar's end.
fn expiry(expires: u64) -> Option<OffsetDateTime> {
    i64::try_from(expires)
        .ok()
        .and_then(|s| OffsetDateTime::from_unix_timestamp(s).ok())
}

/// The claims a data link signs: minting ([`DualResponseServer::download_link`]) and
/// [`Links::verify_data`] build them alike, so a link verifies exactly what was minted.
///
/// [`DualResponseServer::download_link`]: crate::DualResponseServer::download_link
pub(crate) fn data_claims(
    id: ResourceId,
    format: LinkFormat,
    range: RowRange,
    sort: Option<&Sort>,
    expires: u64,
) -> Claims<'_> {
    Claims::Data {
        id,
        format,
        range,
        sort,
        expires,
    }
}
