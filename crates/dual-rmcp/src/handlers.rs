//! [`result_surface_handlers!`](crate::result_surface_handlers): the `ServerHandler` methods every
//! server built on a [`ResultSurface`](crate::ResultSurface) and [`DualTasks`](crate::DualTasks)
//! answers the same way, written once.

/// Writes, inside an `impl rmcp::ServerHandler for …` block, the methods a server built on a
/// [`ResultSurface`](crate::ResultSurface) and [`DualTasks`](crate::DualTasks) answers exactly as
/// [`DatabaseMcp`](crate::DatabaseMcp) does, so a server with tools of its own does not copy them:
///
/// * `tasks/get`, `tasks/update`, `tasks/cancel`: the caller's durable task from the store, on
///   whichever instance created it (a task never asks for input: an answer to a known task is
///   accepted and ignored; a cancel stops the query wherever it runs);
/// * `resources/templates/list`;
/// * `resources/subscribe` and `resources/unsubscribe` (sessions before 2026-07-28) and
///   `subscriptions/listen` (2026-07-28);
/// * `prompts/list` and `prompts/get`.
///
/// Name the two fields: `result_surface_handlers!(surface: my_surface_field, tasks: my_tasks_field);`.
/// `get_info`, the tools, `resources/list` and `resources/read` stay yours (most servers add to
/// them: MCP Apps' `ui://` view, say); [`ResultSurface`](crate::ResultSurface) answers them in one
/// call each.
///
/// ```
/// use dual_rmcp::rmcp::ServerHandler;
/// use dual_rmcp::rmcp::model::{
///     ErrorData, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams,
///     ReadResourceResponse,
/// };
/// use dual_rmcp::rmcp::service::{RequestContext, RoleServer};
/// use dual_rmcp::{DualTasks, ResultSurface};
///
/// struct Reports {
///     surface: ResultSurface,
///     tasks: DualTasks,
/// }
///
/// impl ServerHandler for Reports {
///     dual_rmcp::result_surface_handlers!(surface: surface, tasks: tasks);
///
///     async fn list_resources(
///         &self,
///         request: Option<PaginatedRequestParams>,
///         context: RequestContext<RoleServer>,
///     ) -> Result<ListResourcesResult, ErrorData> {
///         self.surface.list_resources(request, &context).await
///     }
///
///     async fn read_resource(
///         &self,
///         request: ReadResourceRequestParams,
///         context: RequestContext<RoleServer>,
///     ) -> Result<ReadResourceResponse, ErrorData> {
///         self.surface.read_resource(&request, &context).await.map(Into::into)
///     }
/// }
/// ```
#[macro_export]
macro_rules! result_surface_handlers {
    (surface: $surface:ident, tasks: $tasks:ident $(,)?) => {
        async fn get_task(
            &self,
            request: $crate::rmcp::model::GetTaskParams,
            context: $crate::rmcp::service::RequestContext<$crate::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<$crate::rmcp::model::GetTaskResult, $crate::rmcp::model::ErrorData> {
            let caller = $crate::caller_from_extensions(&context.extensions);
            self.$tasks.get_task(&request.task_id, &caller).await
        }

        async fn update_task(
            &self,
            request: $crate::rmcp::model::UpdateTaskParams,
            context: $crate::rmcp::service::RequestContext<$crate::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<(), $crate::rmcp::model::ErrorData> {
            let caller = $crate::caller_from_extensions(&context.extensions);
            self.$tasks.update_task(&request.task_id, &caller).await
        }

        async fn cancel_task(
            &self,
            request: $crate::rmcp::model::CancelTaskParams,
            context: $crate::rmcp::service::RequestContext<$crate::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<(), $crate::rmcp::model::ErrorData> {
            let caller = $crate::caller_from_extensions(&context.extensions);
            self.$tasks.cancel_task(&request.task_id, &caller).await
        }

        async fn list_resource_templates(
            &self,
            _request: ::std::option::Option<$crate::rmcp::model::PaginatedRequestParams>,
            context: $crate::rmcp::service::RequestContext<$crate::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<
            $crate::rmcp::model::ListResourceTemplatesResult,
            $crate::rmcp::model::ErrorData,
        > {
            Ok(self.$surface.list_resource_templates(&context))
        }

        #[allow(
            deprecated,
            reason = "the legacy form, served to sessions before 2026-07-28"
        )]
        async fn subscribe(
            &self,
            request: $crate::rmcp::model::SubscribeRequestParams,
            context: $crate::rmcp::service::RequestContext<$crate::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<(), $crate::rmcp::model::ErrorData> {
            self.$surface.subscribe(&request, &context).await
        }

        #[allow(
            deprecated,
            reason = "the legacy form, served to sessions before 2026-07-28"
        )]
        async fn unsubscribe(
            &self,
            request: $crate::rmcp::model::UnsubscribeRequestParams,
            _context: $crate::rmcp::service::RequestContext<$crate::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<(), $crate::rmcp::model::ErrorData> {
            self.$surface.unsubscribe(&request).await;
            Ok(())
        }

        fn accepted_subscription_filter(
            &self,
            requested: &$crate::rmcp::model::SubscriptionFilter,
        ) -> ::std::option::Option<$crate::rmcp::model::SubscriptionFilter> {
            Some(self.$surface.accepted_filter(requested))
        }

        async fn listen(
            &self,
            context: $crate::rmcp::service::SubscriptionContext,
        ) -> ::std::result::Result<(), $crate::rmcp::model::ErrorData> {
            self.$surface.listen(context).await
        }

        async fn list_prompts(
            &self,
            _request: ::std::option::Option<$crate::rmcp::model::PaginatedRequestParams>,
            _context: $crate::rmcp::service::RequestContext<$crate::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<$crate::rmcp::model::ListPromptsResult, $crate::rmcp::model::ErrorData> {
            Ok(self.$surface.list_prompts())
        }

        async fn get_prompt(
            &self,
            request: $crate::rmcp::model::GetPromptRequestParams,
            context: $crate::rmcp::service::RequestContext<$crate::rmcp::service::RoleServer>,
        ) -> ::std::result::Result<$crate::rmcp::model::GetPromptResponse, $crate::rmcp::model::ErrorData> {
            self.$surface
                .get_prompt(&request, &context)
                .await
                .map(Into::into)
        }
    };
}
