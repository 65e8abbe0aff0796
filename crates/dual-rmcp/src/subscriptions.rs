//! Resource subscriptions (`003_…`; feature `server`): a subscriber is told with `notifications/resources/updated`
//! when a result turns `ready` or `failed`, and when it is deleted or expires (the last
//! notification of that subscription).
//!
//! Both forms of the protocol are served by [`Subscriptions`]:
//!
//! * before 2026-07-28, `resources/subscribe` and `resources/unsubscribe` in a session
//!   ([`Subscriptions::subscribe`], [`Subscriptions::unsubscribe`]): at most
//!   [`SubscriptionOptions::max_per_session`] results per session; `unsubscribe` is answered only
//!   once nothing more can be sent for that result;
//! * from 2026-07-28 on, `subscriptions/listen` with `resourceSubscriptions`
//!   ([`Subscriptions::accepted_filter`], [`Subscriptions::listen`]): the request stays open and
//!   carries the notifications; cancelling it ends the subscription.
//!
//! Changes are found by reading each subscribed result from the server's store every
//! [`SubscriptionOptions::poll_interval`] (1 s by default), so a change made on any instance
//! sharing the store is notified within that interval. A result the caller may not read (another
//! owner's, unknown, expired) cannot be subscribed to: `resource not found`.

mod watch;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use dual_core::uri::parse_resource_uri;
use dual_server::{Caller, DualResponseServer};
use rmcp::model::{ErrorData, ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, RoleServer, SubscriptionContext};
use serde_json::json;
use tokio::sync::Mutex;

use watch::{Seen, Watched, look};

/// How many results one session (or one `subscriptions/listen` request) may watch by default.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 16;
/// How often subscribed results are read by default: the bound on how late a change is told.
pub const DEFAULT_SUBSCRIPTION_POLL: Duration = Duration::from_secs(1);

/// The bounds of [`Subscriptions`].
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SubscriptionOptions {
    /// Results one session, or one `subscriptions/listen`, may watch.
    pub max_per_session: usize,
    /// Time between two reads of the subscribed results.
    pub poll_interval: Duration,
}

impl Default for SubscriptionOptions {
    fn default() -> Self {
        Self {
            max_per_session: DEFAULT_MAX_SUBSCRIPTIONS,
            poll_interval: DEFAULT_SUBSCRIPTION_POLL,
        }
    }
}

impl SubscriptionOptions {
    /// At most `max` results per session.
    #[must_use]
    pub fn max_per_session(mut self, max: usize) -> Self {
        self.max_per_session = max;
        self
    }

    /// Reads subscribed results every `interval` (at least 10 ms).
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(10));
        self
    }
}

/// One session's subscriptions. Make one per session: a handler rmcp creates per session holds
/// one (a clone shares its subscriptions).
#[derive(Debug, Clone)]
pub struct Subscriptions {
    server: DualResponseServer,
    options: SubscriptionOptions,
    /// The session's subscribed results by URI. A tokio mutex: a notification is sent while it is
    /// held, so `unsubscribe` answers only once nothing more can be sent.
    session: Arc<Mutex<Session>>,
}

#[derive(Debug, Default)]
struct Session {
    watched: BTreeMap<String, Watched>,
    /// Whether a watcher task runs for this session.
    watching: bool,
}

impl Subscriptions {
    /// No subscriptions yet, on `server`, bounded by `options`.
    #[must_use]
    pub fn new(server: DualResponseServer, options: SubscriptionOptions) -> Self {
        Self {
            server,
            options,
            session: Arc::default(),
        }
    }

    /// Subscriptions for another session: the same server and bounds, none subscribed.
    #[must_use]
    pub fn for_new_session(&self) -> Self {
        Self::new(self.server.clone(), self.options)
    }

    /// Answers `resources/subscribe` for `caller`: `peer` will receive
    /// `notifications/resources/updated` for `uri`. Subscribing again to the same URI is
    /// acknowledged and changes nothing.
    ///
    /// # Errors
    /// `resource not found` for a URI that is not a result `caller` may read; `invalid params`
    /// naming the cap when the session watches [`SubscriptionOptions::max_per_session`] results
    /// already.
    pub async fn subscribe(
        &self,
        caller: &Caller,
        uri: &str,
        peer: Peer<RoleServer>,
    ) -> Result<(), ErrorData> {
        let watched = self.visible(caller, uri).await?;
        let mut session = self.session.lock().await;
        if session.watched.contains_key(uri) {
            return Ok(());
        }
        if session.watched.len() >= self.options.max_per_session {
            return Err(at_cap(self.options.max_per_session));
        }
        session.watched.insert(uri.to_owned(), watched);
        if !session.watching {
            session.watching = true;
            let this = self.clone();
            tokio::spawn(async move { this.watch_session(peer).await });
        }
        tracing::debug!(subscriptions = session.watched.len(), "resource subscribed");
        Ok(())
    }

    /// Answers `resources/unsubscribe`: once this returns, nothing more is sent for `uri`.
    /// Unsubscribing from a URI not subscribed to is acknowledged too.
    pub async fn unsubscribe(&self, uri: &str) {
        self.session.lock().await.watched.remove(uri);
    }

    /// How many results the session watches.
    pub async fn len(&self) -> usize {
        self.session.lock().await.watched.len()
    }

    /// Whether the session watches nothing.
    pub async fn is_empty(&self) -> bool {
        self.len().await == 0
    }

    /// The session's watcher: reads each result every poll interval and notifies changes, until
    /// nothing is watched or the client is gone.
    async fn watch_session(self, peer: Peer<RoleServer>) {
        let mut tick = tokio::time::interval(self.options.poll_interval);
        loop {
            tick.tick().await;
            let watched = {
                let mut session = self.session.lock().await;
                if session.watched.is_empty() || peer.is_transport_closed() {
                    session.watching = false;
                    return;
                }
                session.watched.clone()
            };
            for (uri, before) in watched {
                let Some(now) = look(&self.server, &before.caller, before.id).await else {
                    continue;
                };
                if now == before.seen {
                    continue;
                }
                let mut session = self.session.lock().await;
                // Unsubscribed meanwhile: nothing is sent.
                let Some(entry) = session.watched.get_mut(&uri) else {
                    continue;
                };
                entry.seen = now;
                let sent = peer
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone()))
                    .await;
                if now == Seen::Gone {
                    session.watched.remove(&uri);
                }
                if sent.is_err() {
                    session.watched.clear();
                    session.watching = false;
                    return;
                }
            }
        }
    }

    /// What `subscriptions/listen` accepts of `requested` (2026-07-28): the resource URIs of this
    /// server's scheme, up to the cap (more are refused by [`Subscriptions::listen`]).
    #[must_use]
    pub fn accepted_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let scheme = &self.server.config().uri_scheme;
        let uris: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| parse_resource_uri(uri).is_some_and(|parsed| parsed.scheme == scheme.as_str()))
            .take(self.options.max_per_session)
            .cloned()
            .collect();
        let mut accepted = SubscriptionFilter::new();
        accepted.resource_subscriptions = (!uris.is_empty()).then_some(uris);
        accepted
    }

    /// Runs one `subscriptions/listen` for `caller` until it is cancelled, or until every watched
    /// result is gone (then it ends gracefully).
    ///
    /// # Errors
    /// `invalid params` naming the cap when more results were asked for than
    /// [`SubscriptionOptions::max_per_session`]; `resource not found` when one of them is not a
    /// result `caller` may read.
    pub async fn listen(&self, caller: &Caller, context: SubscriptionContext) -> Result<(), ErrorData> {
        let asked = context
            .requested()
            .resource_subscriptions
            .as_ref()
            .map_or(0, Vec::len);
        if asked > self.options.max_per_session {
            return Err(at_cap(self.options.max_per_session));
        }
        let mut watched = Vec::new();
        for uri in context.accepted().resource_subscriptions.iter().flatten() {
            watched.push(self.visible(caller, uri).await?);
        }
        let mut tick = tokio::time::interval(self.options.poll_interval);
        while !watched.is_empty() {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                _ = tick.tick() => {}
            }
            for entry in &mut watched {
                let Some(now) = look(&self.server, &entry.caller, entry.id).await else {
                    continue;
                };
                if now != entry.seen {
                    entry.seen = now;
                    if context
                        .sink()
                        .notify_resource_updated(entry.uri.clone())
                        .await
                        .is_err()
                    {
                        return Ok(());
                    }
                }
            }
            watched.retain(|entry| entry.seen != Seen::Gone);
        }
        Ok(())
    }

    /// The result at `uri` as `caller` sees it now, or `resource not found`.
    async fn visible(&self, caller: &Caller, uri: &str) -> Result<Watched, ErrorData> {
        let not_found = || {
            let shown: String = uri.chars().take(256).collect();
            ErrorData::resource_not_found("Resource not found or expired", Some(json!({"uri": shown})))
        };
        let parsed = parse_resource_uri(uri)
            .filter(|parsed| parsed.scheme == self.server.config().uri_scheme)
            .ok_or_else(not_found)?;
        let seen = look(&self.server, caller, parsed.id).await;
        match seen {
            Some(Seen::Gone) => Err(not_found()),
            Some(seen) => Ok(Watched {
                uri: uri.to_owned(),
                id: parsed.id,
                caller: caller.clone(),
                seen,
            }),
            None => Err(ErrorData::internal_error(
                "the resource could not be read; try again later",
                None,
            )),
        }
    }
}

fn at_cap(max: usize) -> ErrorData {
    ErrorData::invalid_params(
        format!("at most {max} resource subscriptions per session; unsubscribe from one first"),
        Some(json!({"max_subscriptions": max})),
    )
}
