//! One task's run on the instance that accepted the tool call: the call itself beside a renewal
//! every `progress_interval`, which writes progress and a fresh lease and learns of a cancellation
//! asked on any instance.

use std::sync::{Arc, Mutex, PoisonError};

use dual_core::ResourceId;
use dual_core::task::{TaskRecord, TaskState};
use dual_server::{Caller, CreateResponse, DualResponseServer, ServerError};
use rmcp::model::CallToolResult;
use tokio::sync::Notify;

use super::{ProgressReporter, SpawnOptions};
use crate::tool_result::{ErrorResultOptions, server_error_result};
use crate::wait::{WaitOptions, wait_for_result};

/// How many times the final state is written before the task is left to its lease.
const FINAL_WRITE_ATTEMPTS: u32 = 3;

/// What a run needs besides its task.
pub(super) struct Run {
    pub(super) server: DualResponseServer,
    pub(super) caller: Caller,
    pub(super) request: CreateResponse,
    pub(super) options: SpawnOptions,
    pub(super) progress: Option<ProgressReporter>,
    pub(super) wait: WaitOptions,
    /// Notified by a `tasks/cancel` answered on this instance.
    pub(super) cancelled: Arc<Notify>,
}

/// The call's state the renewals report: the resource once created, the rows so far.
#[derive(Default)]
struct Seen {
    resource: Option<ResourceId>,
    rows: u64,
}

impl Run {
    /// Runs the call to its end, or until it is cancelled or its task is gone, keeping `task` in
    /// the store up to date.
    pub(super) async fn run(self, mut task: TaskRecord) {
        let seen = Mutex::new(Seen::default());
        let work = self.call(&seen);
        tokio::pin!(work);
        let mut tick = tokio::time::interval(self.server.config().progress_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tokio::select! {
                result = &mut work => {
                    task.state = TaskState::Completed;
                    task.result = Some(serde_json::to_value(&result).unwrap_or_default());
                    task.status_message = Some(if result.is_error == Some(true) {
                        "the tool call ended with an error".to_owned()
                    } else {
                        "done".to_owned()
                    });
                    break;
                }
                () = self.cancelled.notified() => {
                    self.cancel(&mut task, &seen).await;
                    break;
                }
                _ = tick.tick() => {
                    report(&mut task, &seen);
                    match self.server.renew_task(&mut task).await {
                        Ok(Some(false)) => {}
                        Ok(Some(true)) => {
                            self.cancel(&mut task, &seen).await;
                            break;
                        }
                        Ok(None) => {
                            tracing::info!(task = %task.id, "task gone from the store, or failed by its lapsed lease: its call stops");
                            return;
                        }
                        Err(error) => {
                            tracing::warn!(task = %task.id, error = %dual_core::escape::log_error(&error), "task renewal failed");
                        }
                    }
                }
            }
        }
        report(&mut task, &seen);
        self.finish(&mut task).await;
    }

    /// The tool call: the tool result of the ready response, or the `isError` result of a failure.
    async fn call(&self, seen: &Mutex<Seen>) -> CallToolResult {
        let server = &self.server;
        let max_error = ErrorResultOptions::default().max_bytes(server.config().max_error_text_bytes);
        let response = match server.create_response(self.request.clone()).await {
            Ok(response) => response,
            Err(error) => return server_error_result(&error, &max_error),
        };
        lock(seen).resource = Some(response.id);
        let progress = self.progress.as_ref();
        let waited = wait_for_result(server, &self.caller, response, &self.wait, |rows| {
            lock(seen).rows = rows;
            async move {
                if let Some(progress) = progress {
                    progress.rows(rows).await;
                }
            }
        })
        .await;
        match waited {
            Ok(ready) => self.options.render_ready(server, &self.caller, &ready).await,
            Err(error) => error.tool_result(&max_error),
        }
    }

    /// Stops the call (its future is dropped by the caller of this) and deletes the resource it
    /// produced, which stops the query wherever it runs.
    async fn cancel(&self, task: &mut TaskRecord, seen: &Mutex<Seen>) {
        let resource = lock(seen).resource;
        if let Some(id) = resource {
            match self.server.delete_resource(id, &self.caller).await {
                Ok(()) | Err(ServerError::ResourceNotFound | ServerError::ResourceExpired) => {}
                Err(error) => {
                    tracing::warn!(%id, error = %dual_core::escape::log_error(&error), "a cancelled task's resource was not deleted");
                }
            }
        }
        task.state = TaskState::Cancelled;
        task.status_message = Some("cancelled".to_owned());
        tracing::info!(task = %task.id, "task cancelled");
    }

    /// Writes the final state, retrying a failed write; a task whose final state could not be
    /// written reads as failed once its lease lapses. A cancellation asked meanwhile (on any
    /// instance: its `tasks/cancel` was accepted while the task worked) wins over the outcome: the
    /// task ends `cancelled`, as the canceller was told.
    async fn finish(&self, task: &mut TaskRecord) {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.server.renew_task(task).await {
                Ok(Some(true)) if task.state != TaskState::Cancelled => {
                    task.state = TaskState::Cancelled;
                    task.result = None;
                    task.status_message = Some("cancelled".to_owned());
                    tracing::info!(task = %task.id, "task cancelled as it ended");
                }
                Ok(_) => return,
                Err(error) if attempt < FINAL_WRITE_ATTEMPTS => {
                    tracing::debug!(task = %task.id, attempt, error = %dual_core::escape::log_error(&error), "final task write failed: retrying");
                    tokio::time::sleep(self.server.config().progress_interval).await;
                }
                Err(error) => {
                    tracing::warn!(task = %task.id, error = %dual_core::escape::log_error(&error), "final task state not written: it reads as failed after its lease");
                    return;
                }
            }
        }
    }
}

/// Copies what the call has seen into `task`.
fn report(task: &mut TaskRecord, seen: &Mutex<Seen>) {
    let seen = lock(seen);
    task.resource = seen.resource.or(task.resource);
    task.rows_so_far = seen.rows;
    if !task.state.is_terminal() {
        task.status_message = Some(format!("running the query: {} rows so far", seen.rows));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
