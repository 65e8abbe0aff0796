//! [`ResultSurface`]: everything an MCP server of dual-response results answers besides its tools,
//! in one value whose methods take the request and its context as rmcp hands them over, so that a
//! `ServerHandler` delegates each method in one line.

use dual_server::DualResponseServer;
use rmcp::model::{
    ErrorData, GetPromptRequestParams, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResult,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};

use crate::caller_from_extensions;
use crate::prompts::Prompts;
use crate::resources::{self, DEFAULT_LIST_PAGE_SIZE, ReadOptions};
use crate::subscriptions::{SubscriptionOptions, Subscriptions};
use crate::version::{protocol_version, resource_template_for_version};

/// The results of a [`DualResponseServer`] as MCP resources (`resources/list`,
/// `resources/templates/list`, `resources/read` with the caching hints of the request's version),
/// their subscriptions (`resources/subscribe`, `resources/unsubscribe`, `subscriptions/listen`)
/// and the [`Prompts`], for the caller the HTTP layer authenticated
/// ([`caller_from_extensions`]).
///
/// Make one per session (a clone shares its subscriptions; [`ResultSurface::for_new_session`]
/// does not). Declare `enable_resources()`, `enable_resources_subscribe()` and `enable_prompts()`
/// in the server's capabilities.
#[derive(Debug, Clone)]
pub struct ResultSurface {
    server: DualResponseServer,
    prompts: Prompts,
    subscriptions: Subscriptions,
}

impl ResultSurface {
    /// The surface of `server`, with `prompts` and subscriptions bounded by the default
    /// [`SubscriptionOptions`].
    #[must_use]
    pub fn new(server: DualResponseServer, prompts: Prompts) -> Self {
        Self {
            subscriptions: Subscriptions::new(server.clone(), SubscriptionOptions::default()),
            server,
            prompts,
        }
    }

    /// Bounds the subscriptions as `options` asks (the session's subscriptions start empty).
    #[must_use]
    pub fn subscription_options(mut self, options: SubscriptionOptions) -> Self {
        self.subscriptions = Subscriptions::new(self.server.clone(), options);
        self
    }

    /// The same surface for another session: no subscription of this one.
    #[must_use]
    pub fn for_new_session(&self) -> Self {
        Self {
            server: self.server.clone(),
            prompts: self.prompts.clone(),
            subscriptions: self.subscriptions.for_new_session(),
        }
    }

    /// `resources/list`: one page of the caller's results
    /// ([`list_resources`](crate::resources::list_resources)).
    ///
    /// # Errors
    /// As [`list_resources`](crate::resources::list_resources).
    pub async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let caller = caller_from_extensions(&context.extensions);
        let version = protocol_version(context.protocol_version().as_ref());
        let cursor = request.as_ref().and_then(|request| request.cursor.as_deref());
        resources::list_resources(&self.server, &caller, cursor, DEFAULT_LIST_PAGE_SIZE, version).await
    }

    /// `resources/templates/list`: the one template, with the fields the request's version defines.
    #[must_use]
    pub fn list_resource_templates(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> ListResourceTemplatesResult {
        let version = protocol_version(context.protocol_version().as_ref());
        ListResourceTemplatesResult::with_all_items(vec![resource_template_for_version(
            &resources::resource_template(&self.server),
            version,
        )])
    }

    /// `resources/read` of a result ([`read_resource`](crate::resources::read_resource)), with the
    /// caching hints of the request's version.
    ///
    /// # Errors
    /// As [`read_resource`](crate::resources::read_resource).
    pub async fn read_resource(
        &self,
        request: &ReadResourceRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, ErrorData> {
        let caller = caller_from_extensions(&context.extensions);
        let version = protocol_version(context.protocol_version().as_ref());
        let options = ReadOptions::default().version(version);
        resources::read_resource(&self.server, &caller, &request.uri, &options).await
    }

    /// `resources/subscribe` (sessions before 2026-07-28).
    ///
    /// # Errors
    /// As [`Subscriptions::subscribe`].
    pub async fn subscribe(
        &self,
        request: &SubscribeRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = caller_from_extensions(&context.extensions);
        self.subscriptions
            .subscribe(&caller, &request.uri, context.peer.clone())
            .await
    }

    /// `resources/unsubscribe`: acknowledged once nothing more is sent for the URI.
    pub async fn unsubscribe(&self, request: &UnsubscribeRequestParams) {
        self.subscriptions.unsubscribe(&request.uri).await;
    }

    /// What `subscriptions/listen` accepts of `requested` (for `accepted_subscription_filter`).
    #[must_use]
    pub fn accepted_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        self.subscriptions.accepted_filter(requested)
    }

    /// Runs one `subscriptions/listen` (2026-07-28).
    ///
    /// # Errors
    /// As [`Subscriptions::listen`].
    pub async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let caller = caller_from_extensions(&context.request_context().extensions);
        self.subscriptions.listen(&caller, context).await
    }

    /// `prompts/list`.
    #[must_use]
    pub fn list_prompts(&self) -> ListPromptsResult {
        self.prompts.list()
    }

    /// `prompts/get` for the request's caller.
    ///
    /// # Errors
    /// As [`Prompts::get`].
    pub async fn get_prompt(
        &self,
        request: &GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetPromptResult, ErrorData> {
        let caller = caller_from_extensions(&context.extensions);
        self.prompts
            .get(&self.server, &caller, &request.name, request.arguments.as_ref())
            .await
    }
}
