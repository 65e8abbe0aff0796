//! A dual-response tool call as an MCP task (the `io.modelcontextprotocol/tasks` extension), on
//! rmcp's [`TaskManager`].

use std::fmt;

use dual_core::mcp::RenderOptions;
use dual_server::{Caller, CreateResponse, DualResponseServer};
use rmcp::model::{CreateTaskResult, ErrorData, GetTaskResult};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};

use crate::{ProgressReporter, WaitOptions, wait_for_result};

/// How long a finished task stays readable with `tasks/get`, beyond the longest wait.
const TASK_RETENTION_MARGIN_MS: u64 = 60_000;

/// The poll interval a task suggests to its client, in milliseconds.
const TASK_POLL_INTERVAL_MS: u64 = 500;

/// Whether the client of `context` declared the tasks extension (for this request in `_meta`, or
/// for the session at `initialize`): only then may `tools/call` answer with a task.
#[must_use]
pub fn client_supports_tasks(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|capabilities| capabilities.supports_tasks())
}

/// Runs dual-response tool calls as tasks: a cheap clone around a [`DualResponseServer`] and an rmcp
/// [`TaskManager`], shared by every session of a server.
///
/// A server that advertises the tasks extension (`ServerCapabilities::builder().enable_tasks()`)
/// answers `tools/call` from a client that [supports tasks](client_supports_tasks) with
/// [`DualTasks::spawn`], and delegates `tasks/get` and `tasks/cancel` to
/// [`DualTasks::get_task`] and [`DualTasks::cancel_task`]. The task runs
/// [`create_response`](DualResponseServer::create_response); when it returns a pending resource it
/// [waits](wait_for_result) for the result, sending `notifications/progress` (rows so far) when the
/// request carried a progress token. Its result is the tool result of the ready response, rendered
/// as asked, or the `isError` result of a failed query. `tasks/cancel` stops the query: the task
/// deletes the pending resource, which drops the executor's work, and ends `cancelled`.
#[derive(Clone)]
pub struct DualTasks {
    server: DualResponseServer,
    manager: TaskManager,
    wait: WaitOptions,
}

impl fmt::Debug for DualTasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DualTasks")
            .field("running", &self.manager.running_task_count())
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

/// How a task renders its ready response.
#[derive(Debug, Clone, Copy)]
enum Rendering {
    /// [`to_call_tool_result_with`](crate::to_call_tool_result_with).
    Plain(RenderOptions),
    /// [`apps_tool_result`](crate::apps_tool_result).
    #[cfg(feature = "apps")]
    Apps(RenderOptions, crate::AppsOptions),
}

impl Rendering {
    #[cfg_attr(
        not(feature = "apps"),
        expect(
            unused_variables,
            reason = "only the apps rendering mints links for the caller"
        )
    )]
    async fn render(
        &self,
        server: &DualResponseServer,
        caller: &Caller,
        ready: &dual_core::DualResponse,
    ) -> rmcp::model::CallToolResult {
        match self {
            Self::Plain(render) => crate::to_call_tool_result_with(ready, render),
            #[cfg(feature = "apps")]
            Self::Apps(render, apps) => crate::apps_tool_result(server, caller, ready, render, apps).await,
        }
    }
}

impl DualTasks {
    /// Tasks running tool calls on `server`, waiting with the default [`WaitOptions`].
    #[must_use]
    pub fn new(server: DualResponseServer) -> Self {
        Self {
            server,
            manager: TaskManager::new(),
            wait: WaitOptions::default(),
        }
    }

    /// Waits for pending resources with `options`.
    #[must_use]
    pub fn wait_options(mut self, options: WaitOptions) -> Self {
        self.wait = options;
        self
    }

    /// The rmcp task manager (for `tasks/update`, or to shut every task down).
    #[must_use]
    pub fn manager(&self) -> &TaskManager {
        &self.manager
    }

    /// Starts `request` for `caller` as a task and returns the `CreateTaskResult` to answer
    /// `tools/call` with. The result renders as `render` asks (the request's protocol version);
    /// `progress`, when given, receives the rows so far while the query runs.
    ///
    /// Validate the tool's arguments before: an argument error is an immediate `isError` result,
    /// not a task.
    #[must_use]
    pub fn spawn(
        &self,
        caller: Caller,
        request: CreateResponse,
        render: RenderOptions,
        progress: Option<ProgressReporter>,
    ) -> CreateTaskResult {
        self.spawn_rendered(caller, request, Rendering::Plain(render), progress)
    }

    /// [`DualTasks::spawn`] for a client that [negotiated MCP Apps](crate::client_supports_apps):
    /// the task's result is rendered by [`apps_tool_result`](crate::apps_tool_result) with `apps`.
    #[cfg(feature = "apps")]
    #[must_use]
    pub fn spawn_for_apps(
        &self,
        caller: Caller,
        request: CreateResponse,
        render: RenderOptions,
        apps: crate::AppsOptions,
        progress: Option<ProgressReporter>,
    ) -> CreateTaskResult {
        self.spawn_rendered(caller, request, Rendering::Apps(render, apps), progress)
    }

    fn spawn_rendered(
        &self,
        caller: Caller,
        request: CreateResponse,
        rendering: Rendering,
        progress: Option<ProgressReporter>,
    ) -> CreateTaskResult {
        let server = self.server.clone();
        let wait = self.wait;
        let ttl_ms = u64::try_from(wait.timeout_for(&server).as_millis())
            .unwrap_or(u64::MAX)
            .saturating_add(TASK_RETENTION_MARGIN_MS);
        let options = TaskOptions::new()
            .with_ttl_ms(ttl_ms)
            .with_poll_interval_ms(TASK_POLL_INTERVAL_MS)
            .with_status_message("running the query");
        let task = self.manager.spawn(options, move |context| {
            Box::pin(async move {
                let created = tokio::select! {
                    // Dropping `create_response` drops the query it runs.
                    () = context.cancelled() => return Err(TaskExit::Cancelled),
                    created = server.create_response(request) => created,
                };
                let response = match created {
                    Ok(response) => response,
                    Err(error) => {
                        let max = server.config().max_error_text_bytes;
                        return Ok(crate::server_error_result_within(&error, max));
                    }
                };
                let id = response.id;
                let progress = progress.as_ref();
                let context = &context;
                let waited = wait_for_result(&server, &caller, response, &wait, |rows| {
                    context.set_status_message(format!("running the query: {rows} rows so far"));
                    async move {
                        if let Some(progress) = progress {
                            progress.rows(rows).await;
                        }
                    }
                });
                tokio::select! {
                    () = context.cancelled() => {
                        if let Err(error) = server.delete_resource(id, &caller).await {
                            tracing::warn!(%id, error = %dual_core::escape::log_error(&error), "a cancelled task's resource was not deleted");
                        }
                        Err(TaskExit::Cancelled)
                    }
                    waited = waited => Ok(match waited {
                        Ok(ready) => rendering.render(&server, &caller, &ready).await,
                        Err(error) => error.tool_result_within(server.config().max_error_text_bytes),
                    }),
                }
            })
        });
        CreateTaskResult::new(task)
    }

    /// Answers `tasks/get`.
    ///
    /// # Errors
    /// `invalid params` for an unknown (or evicted) task id.
    pub fn get_task(&self, task_id: &str) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.manager.get_task(task_id)?))
    }

    /// Answers `tasks/cancel`: the task deletes its resource (the query stops) and ends
    /// `cancelled`; `tasks/get` may show it `working` for a moment longer.
    ///
    /// # Errors
    /// `invalid params` for an unknown (or evicted) task id.
    pub fn cancel_task(&self, task_id: &str) -> Result<(), ErrorData> {
        self.manager.cancel_task(task_id)
    }
}
