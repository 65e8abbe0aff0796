//! A dual-response tool call as an MCP task (the `io.modelcontextprotocol/tasks` extension), kept
//! in the server's resource store so that any instance answers `tasks/get` and `tasks/cancel`
//! (feature `server`): [`DualTasks`] for clients that [declare tasks](client_supports_tasks), its
//! result rendered as [`SpawnOptions`] asks, and the [`ProgressReporter`] that sends the rows so far
//! as `notifications/progress`.

mod progress;
mod run;
mod wire;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use dual_core::mcp::RenderOptions;
use dual_core::task::TaskId;
use dual_server::{Caller, CreateResponse, DualResponseServer, ServerError};
use rmcp::model::{CreateTaskResult, ErrorData, GetTaskResult};
use rmcp::service::{RequestContext, RoleServer};
use tokio::sync::Notify;

pub use progress::ProgressReporter;

use crate::wait::WaitOptions;

/// How long a finished task stays readable with `tasks/get`, beyond the longest wait.
pub const TASK_RETENTION_MARGIN: Duration = Duration::from_secs(60);

/// The poll interval a task suggests to its client.
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Whether the client of `context` declared the tasks extension (for this request in `_meta`, or
/// for the session at `initialize`): only then may `tools/call` answer with a task.
#[must_use]
pub fn client_supports_tasks(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.supports_tasks())
}

/// Runs dual-response tool calls as durable tasks: a cheap clone around a [`DualResponseServer`],
/// shared by every session of a server, and by every instance through the server's store.
///
/// A server that advertises the tasks extension (`ServerCapabilities::builder().enable_tasks()`)
/// answers `tools/call` from a client that [supports tasks](client_supports_tasks) with
/// [`DualTasks::spawn`], and delegates `tasks/get`, `tasks/update` and `tasks/cancel` to
/// [`DualTasks::get_task`], [`DualTasks::update_task`] and [`DualTasks::cancel_task`].
///
/// * **Durable**: `spawn` writes the task (status, owner, TTL, poll interval, a lease) to the
///   server's store before it returns the `CreateTaskResult`, so `tasks/get` works on every
///   instance sharing the store. The instance running the call renews it every
///   `progress_interval` with the rows so far and the resource it produces; its final state holds
///   the tool result. A task whose instance died reads as failed once its lease (`query_lease`)
///   lapses.
/// * **Owned**: only the principal that created a task reads or cancels it; any other task id,
///   and an unknown one, is `-32602` "unknown task". Ids are 128 random bits.
/// * **Cancellable anywhere**: `tasks/cancel` marks the task and deletes the resource it produces,
///   which stops the query on whichever instance runs it (within its `progress_interval`); the
///   running instance sees the mark at its next renewal, or at once when it answered the cancel.
///
/// The task runs [`create_response`](DualResponseServer::create_response); when it returns a
/// pending resource it [waits](crate::wait::wait_for_result) for the result, sending
/// `notifications/progress` (rows so far) when the request carried a progress token. Its result
/// is the tool result of the ready response, rendered as asked, or the `isError` result of a
/// failed query.
#[derive(Clone)]
pub struct DualTasks {
    server: DualResponseServer,
    wait: WaitOptions,
    poll_interval: Duration,
    /// The tasks this instance runs, to stop at once when it answers their `tasks/cancel`.
    running: Arc<Mutex<HashMap<TaskId, Arc<Notify>>>>,
}

impl fmt::Debug for DualTasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DualTasks")
            .field("running", &self.running_here())
            .field("wait", &self.wait)
            .field("poll_interval", &self.poll_interval)
            .finish_non_exhaustive()
    }
}

/// How a task of [`DualTasks::spawn`] renders its ready response.
///
/// ```
/// use dual_core::mcp::{ProtocolVersion, RenderOptions};
/// use dual_rmcp::tasks::SpawnOptions;
///
/// let options = SpawnOptions::new(RenderOptions::new(ProtocolVersion::V2025_11_25));
/// assert_eq!(options.render.version(), ProtocolVersion::V2025_11_25);
/// assert_eq!(SpawnOptions::default().render, RenderOptions::default());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SpawnOptions {
    /// The rendering of [`to_call_tool_result`](crate::tool_result::to_call_tool_result): the
    /// request's protocol version, the text format. Default: the newest version, the table.
    pub render: RenderOptions,
    /// `Some` for a client that [negotiated MCP Apps](crate::apps::client_supports_apps): the result
    /// is rendered by [`apps_tool_result`](crate::apps::apps_tool_result) with these options.
    /// Default `None`.
    #[cfg(feature = "apps")]
    pub apps: Option<crate::apps::AppsOptions>,
}

impl SpawnOptions {
    /// Renders as `render` asks, with [`to_call_tool_result`](crate::tool_result::to_call_tool_result).
    #[must_use]
    pub fn new(render: RenderOptions) -> Self {
        Self::default().render(render)
    }

    /// Renders as `render` asks.
    #[must_use]
    pub fn render(mut self, render: RenderOptions) -> Self {
        self.render = render;
        self
    }

    /// Renders for a client that negotiated MCP Apps, as `options` asks.
    #[cfg(feature = "apps")]
    #[must_use]
    pub fn apps(mut self, options: crate::apps::AppsOptions) -> Self {
        self.apps = Some(options);
        self
    }

    /// The tool result of `ready`, rendered as asked.
    #[cfg_attr(
        not(feature = "apps"),
        expect(
            unused_variables,
            reason = "only the apps rendering mints links for the caller"
        )
    )]
    async fn render_ready(
        &self,
        server: &DualResponseServer,
        caller: &Caller,
        ready: &dual_core::DualResponse,
    ) -> rmcp::model::CallToolResult {
        #[cfg(feature = "apps")]
        if let Some(apps) = &self.apps {
            return crate::apps::apps_tool_result(server, caller, ready, &self.render, apps).await;
        }
        crate::tool_result::to_call_tool_result(ready, &self.render)
    }
}

impl DualTasks {
    /// Tasks running tool calls on `server`, waiting with the default [`WaitOptions`].
    #[must_use]
    pub fn new(server: DualResponseServer) -> Self {
        Self {
            server,
            wait: WaitOptions::default(),
            poll_interval: DEFAULT_TASK_POLL_INTERVAL,
            running: Arc::default(),
        }
    }

    /// Waits for pending resources with `options`.
    #[must_use]
    pub fn wait_options(mut self, options: WaitOptions) -> Self {
        self.wait = options;
        self
    }

    /// Suggests clients poll every `interval` (default [`DEFAULT_TASK_POLL_INTERVAL`]).
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// How many tasks this instance is running.
    #[must_use]
    pub fn running_here(&self) -> usize {
        lock(&self.running).len()
    }

    /// Starts `request` for `caller` as a task and returns the `CreateTaskResult` to answer
    /// `tools/call` with, once the task is in the store. The result renders as `options` asks (the
    /// request's protocol version; MCP Apps for a client that negotiated it); `progress`, when given,
    /// receives the rows so far.
    ///
    /// Validate the tool's arguments before: an argument error is an immediate `isError` result,
    /// not a task.
    ///
    /// # Errors
    /// `internal error` when the store cannot keep the task (nothing runs then).
    pub async fn spawn(
        &self,
        caller: Caller,
        request: CreateResponse,
        options: &SpawnOptions,
        progress: Option<ProgressReporter>,
    ) -> Result<CreateTaskResult, ErrorData> {
        let ttl = self.wait.timeout_for(&self.server) + TASK_RETENTION_MARGIN;
        let task = self
            .server
            .create_task(&caller, ttl, self.poll_interval)
            .await
            .map_err(|error| task_error(&error, "the task could not be stored"))?;
        let answer = CreateTaskResult::new(wire::task(&task));
        let cancelled = Arc::new(Notify::new());
        lock(&self.running).insert(task.id, Arc::clone(&cancelled));
        let run = run::Run {
            server: self.server.clone(),
            caller,
            request,
            options: *options,
            progress,
            wait: self.wait,
            cancelled,
        };
        let running = Arc::clone(&self.running);
        let id = task.id;
        tokio::spawn(async move {
            run.run(task).await;
            lock(&running).remove(&id);
        });
        Ok(answer)
    }

    /// Answers `tasks/get` for `caller`, on any instance.
    ///
    /// # Errors
    /// `invalid params` for an unknown, expired or malformed task id and for another principal's
    /// task (the same answer); `internal error` when the store cannot be read.
    pub async fn get_task(&self, task_id: &str, caller: &Caller) -> Result<GetTaskResult, ErrorData> {
        let id = parse_id(task_id)?;
        let task = self
            .server
            .task(id, caller)
            .await
            .map_err(|error| unknown_or(&error, task_id))?;
        Ok(GetTaskResult::new(wire::detailed(&task)))
    }

    /// Answers `tasks/update` for `caller`. A dual-response task never asks the client for input,
    /// so answers are accepted and ignored (as the extension allows for keys it did not ask).
    ///
    /// # Errors
    /// As [`DualTasks::get_task`].
    pub async fn update_task(&self, task_id: &str, caller: &Caller) -> Result<(), ErrorData> {
        self.get_task(task_id, caller).await.map(drop)
    }

    /// Answers `tasks/cancel` for `caller`, on any instance: the task is marked and its resource
    /// deleted, so its query stops wherever it runs; it then ends `cancelled`. A task that ended
    /// already keeps its state.
    ///
    /// # Errors
    /// As [`DualTasks::get_task`].
    pub async fn cancel_task(&self, task_id: &str, caller: &Caller) -> Result<(), ErrorData> {
        let id = parse_id(task_id)?;
        self.server
            .cancel_task(id, caller)
            .await
            .map_err(|error| unknown_or(&error, task_id))?;
        if let Some(cancelled) = lock(&self.running).get(&id) {
            cancelled.notify_one();
        }
        Ok(())
    }
}

fn parse_id(task_id: &str) -> Result<TaskId, ErrorData> {
    task_id.parse().map_err(|_| unknown_task(task_id))
}

/// `-32602` naming the task, cut to a short echo.
fn unknown_task(task_id: &str) -> ErrorData {
    let shown: String = task_id.chars().take(64).collect();
    ErrorData::invalid_params(
        format!("unknown task: {}", dual_core::escape::log_safe(&shown)),
        None,
    )
}

fn unknown_or(error: &ServerError, task_id: &str) -> ErrorData {
    match error {
        ServerError::ResourceNotFound => unknown_task(task_id),
        other => task_error(other, "the task could not be read"),
    }
}

fn task_error(error: &ServerError, what: &str) -> ErrorData {
    tracing::warn!(error = %dual_core::escape::log_error(error), "{what}");
    ErrorData::internal_error(format!("{what}: {}", error.code().as_str()), None)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
