//! The memory store's MCP sessions: state text by id, with an expiry.

use std::collections::HashMap;
use std::sync::Mutex;

use time::OffsetDateTime;

use super::lock;

#[derive(Debug, Default)]
pub(super) struct Sessions(Mutex<HashMap<String, (String, OffsetDateTime)>>);

impl Sessions {
    pub(super) fn save(&self, id: &str, state: &str, expires_at: OffsetDateTime) {
        lock(&self.0).insert(id.to_owned(), (state.to_owned(), expires_at));
    }

    pub(super) fn load(&self, id: &str, now: OffsetDateTime) -> Option<String> {
        lock(&self.0)
            .get(id)
            .filter(|(_, expires_at)| *expires_at > now)
            .map(|(state, _)| state.clone())
    }

    pub(super) fn delete(&self, id: &str) -> bool {
        lock(&self.0).remove(id).is_some()
    }

    pub(super) fn purge(&self, now: OffsetDateTime) {
        lock(&self.0).retain(|_, (_, expires_at)| *expires_at > now);
    }

    pub(super) fn clear(&self) {
        drop(std::mem::take(&mut *lock(&self.0)));
    }
}
