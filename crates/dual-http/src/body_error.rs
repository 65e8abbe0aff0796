//! The error an aborted export body ends with.

/// An export was aborted because the query failed while streaming, or (Arrow exports) a value did
/// not fit its column (the details are logged, never sent). Returned by [`ResponseBody`](crate::ResponseBody)'s
/// `poll_frame`.
#[derive(Debug, thiserror::Error)]
#[error("export aborted: the query failed while streaming")]
pub struct BodyError {
    _private: (),
}

impl BodyError {
    pub(crate) const fn new() -> Self {
        Self { _private: () }
    }
}
