//! Executors by kind.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::{QueryExecutor, ServerError};

/// The executors a server knows, by kind.
#[derive(Clone, Default)]
pub(crate) struct Registry {
    executors: HashMap<String, Arc<dyn QueryExecutor>>,
}

impl Registry {
    pub(crate) fn insert(&mut self, kind: String, executor: Arc<dyn QueryExecutor>) {
        self.executors.insert(kind, executor);
    }

    pub(crate) fn get(&self, kind: &str) -> Result<&Arc<dyn QueryExecutor>, ServerError> {
        self.executors
            .get(kind)
            .ok_or_else(|| ServerError::UnknownQueryKind(kind.to_owned()))
    }

    pub(crate) fn kinds(&self) -> impl Iterator<Item = &str> {
        self.executors.keys().map(String::as_str)
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut kinds: Vec<_> = self.kinds().collect();
        kinds.sort_unstable();
        f.debug_struct("Registry").field("kinds", &kinds).finish()
    }
}
