//! The durable-task half of [`DualResponseServer`]'s API (docs/DESIGN.md §8): create, read,
//! renew and cancel a tool call's task record. The records themselves are kept by `crate::tasks`.

use dual_core::task::{TaskId, TaskRecord};

use super::DualResponseServer;
use crate::access::refuse_grant;
use crate::{Caller, ServerError};

impl DualResponseServer {
    /// Writes a new working task of `caller`'s to the store (durable before this returns, so that
    /// every instance answers `tasks/get` for it), forgotten `ttl` from now, suggesting clients
    /// poll every `poll_interval`. Its id is 128 random bits. The caller renews it with
    /// [`renew_task`](Self::renew_task) while it works.
    ///
    /// # Errors
    /// `RESOURCE_NOT_FOUND` for a link's grant (which only reads), `STORAGE_ERROR`.
    pub async fn create_task(
        &self,
        caller: &Caller,
        ttl: std::time::Duration,
        poll_interval: std::time::Duration,
    ) -> Result<TaskRecord, ServerError> {
        refuse_grant(caller)?;
        crate::tasks::create(&self.inner, caller, ttl, poll_interval).await
    }

    /// The task `id` when `caller` created it, as it reads now: a working task whose instance
    /// stopped renewing it for the server's `query_lease` reads as failed.
    ///
    /// # Errors
    /// `RESOURCE_NOT_FOUND` for an unknown or expired task and for another principal's (the same
    /// answer), `STORAGE_ERROR`.
    pub async fn task(&self, id: TaskId, caller: &Caller) -> Result<TaskRecord, ServerError> {
        crate::tasks::read(&self.inner, id, caller).await
    }

    /// Writes the running instance's part of `task` (state, resource, progress, message, result),
    /// stamped now, with its lease renewed for the server's `query_lease` while it works. Answers
    /// whether a [`cancel_task`](Self::cancel_task) asked it to stop (on any instance), or `None`
    /// once the task is gone (expired) — and when its lease lapsed before this renewal: readers may
    /// have seen it failed, so it is written failed (`task` too) and the caller must stop.
    ///
    /// # Errors
    /// `STORAGE_ERROR`.
    pub async fn renew_task(&self, task: &mut TaskRecord) -> Result<Option<bool>, ServerError> {
        crate::tasks::renew(&self.inner, task).await
    }

    /// Cancels `caller`'s task `id`: marks it for cancellation, which the instance running it sees
    /// at its next renewal, and deletes the resource it produces, which stops its query on whichever
    /// instance runs it. An ended task is answered as it is.
    ///
    /// # Errors
    /// As [`task`](Self::task).
    pub async fn cancel_task(&self, id: TaskId, caller: &Caller) -> Result<TaskRecord, ServerError> {
        let task = crate::tasks::cancel(&self.inner, id, caller).await?;
        if !task.state.is_terminal()
            && let Some(resource) = task.resource
        {
            match self.delete_resource(resource, caller).await {
                Ok(()) | Err(ServerError::ResourceNotFound | ServerError::ResourceExpired) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(task)
    }
}
