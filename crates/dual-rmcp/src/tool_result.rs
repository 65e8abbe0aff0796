//! A dual response as an rmcp `CallToolResult` ([`to_call_tool_result`]), the output schema a
//! dual-response tool declares ([`output_schema`]), and the `isError: true` results the model reads
//! to correct its call ([`error_result`], [`server_error_result`], [`failure_result`]), their text
//! cut as [`ErrorResultOptions`] asks.
//!
//! ```
//! use dual_rmcp::tool_result::{ErrorResultOptions, error_result};
//!
//! let result = error_result("near \"SELEC\": syntax error", &ErrorResultOptions::default());
//! assert_eq!(result.is_error, Some(true));
//! // The server's `max_error_text_bytes`, say: a longer text is cut, ending with its full length.
//! let cut = error_result("x".repeat(10_000), &ErrorResultOptions::default().max_bytes(200));
//! let text = cut.content[0].as_text().map(|t| t.text.as_str()).unwrap_or_default();
//! assert!(text.len() <= 200 && text.ends_with("bytes in all]"));
//! ```

mod schema;

use std::borrow::Cow;

use dual_core::DualResponse;
use dual_core::budget::{DEFAULT_MAX_ERROR_TEXT_BYTES, cut_text};
use dual_core::escape::display_safe_multiline;
use dual_core::mcp::{ContentBlock as CoreBlock, RenderOptions};
use rmcp::model::{CallToolResult, ContentBlock, Resource};

pub use schema::output_schema;

/// The tool result of `response` rendered as `options` asks, as docs/DESIGN.md §4 lays it out.
///
/// For the newest protocol version (the default [`RenderOptions`]), `content` holds the summary
/// text, the sample as a compact table and a `resource_link`; `structuredContent` holds the sample,
/// the resource link and the metadata. A server answers each client in its own protocol version
/// (`RenderOptions::new(version)`): a client that negotiated a version before 2025-06-18 gets text
/// blocks only (no `resource_link`, no `structuredContent`). With
/// [`TextFormat::Json`](dual_core::mcp::TextFormat::Json), the second text block is the
/// `structuredContent` JSON instead of the table. `isError` is `false`.
#[must_use]
pub fn to_call_tool_result(response: &DualResponse, options: &RenderOptions) -> CallToolResult {
    let core = response.tool_result_with(options);
    let content = core.content.iter().filter_map(to_rmcp_block).collect();
    let mut result = CallToolResult::success(content);
    // Serialising plain data with string keys cannot fail; `Null` is a safe fallback.
    result.structured_content = core
        .structured_content
        .map(|structured| serde_json::to_value(structured).unwrap_or_default());
    result
}

fn to_rmcp_block(block: &CoreBlock) -> Option<ContentBlock> {
    Some(match block {
        CoreBlock::Text { text } => ContentBlock::text(text.clone()),
        CoreBlock::ResourceLink {
            uri,
            name,
            mime_type,
            description,
        } => {
            let mut link = Resource::new(uri.clone(), name.clone());
            link.mime_type.clone_from(mime_type);
            link.description.clone_from(description);
            ContentBlock::resource_link(link)
        }
        // A block kind added to dual-core later: carry it over by its wire form.
        other => serde_json::to_value(other)
            .ok()
            .and_then(|value| serde_json::from_value(value).ok())?,
    })
}

/// How long the text of an error tool result may be: [`error_result`], [`server_error_result`],
/// [`failure_result`] and [`WaitError::tool_result`](crate::wait::WaitError::tool_result) take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ErrorResultOptions {
    /// The most bytes of the text: a longer one is cut at a character boundary, ending with a
    /// marker that gives its full length (a 1 MB identifier echoed in an error does not reach the
    /// model whole). Default [`DEFAULT_MAX_ERROR_TEXT_BYTES`]; a server passes its
    /// `max_error_text_bytes`.
    pub max_bytes: usize,
}

impl Default for ErrorResultOptions {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_ERROR_TEXT_BYTES,
        }
    }
}

impl ErrorResultOptions {
    /// Cuts the text to at most `max_bytes` bytes.
    #[must_use]
    pub fn max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }
}

/// An `isError: true` tool result carrying `message` as its only text block, cut to
/// [`ErrorResultOptions::max_bytes`].
///
/// Use it when the tool ran and failed in a way the model can fix — a SQL syntax error, an unknown
/// column — so that the model reads the message and retries; keep protocol errors (`ErrorData`) for
/// requests that cannot be routed at all.
///
/// The message often echoes the model's SQL or a database's text, so its control characters and
/// bidirectional controls are escaped first ([`display_safe_multiline`]: line feeds stay, `ESC`
/// becomes `\u{1b}`).
#[must_use]
pub fn error_result(message: impl Into<String>, options: &ErrorResultOptions) -> CallToolResult {
    let message = message.into();
    let message = match display_safe_multiline(&message) {
        Cow::Borrowed(_) => message,
        Cow::Owned(escaped) => escaped,
    };
    let text = match cut_text(&message, options.max_bytes) {
        Cow::Borrowed(_) => message,
        Cow::Owned(cut) => cut,
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The `isError: true` tool result for a failed
/// [`create_response`](dual_server::DualResponseServer::create_response), its text cut as
/// [`error_result`] cuts.
///
/// Executor failures keep the executor's message (written for the model: it names the mistake); store
/// failures become a generic "try again later" so no internals (addresses, credentials) leak.
#[cfg(feature = "server")]
#[must_use]
pub fn server_error_result(error: &dual_server::ServerError, options: &ErrorResultOptions) -> CallToolResult {
    use dual_server::ServerError;
    let message = match error {
        ServerError::QueryExecutionFailed(error) | ServerError::CountExecutionFailed(error) => {
            format!("The query failed: {}", error.message())
        }
        ServerError::Overloaded(error) => format!(
            "The server is busy ({}); retry the same call in a few seconds.",
            error.message()
        ),
        ServerError::Storage(_) => {
            "The result could not be stored (storage unavailable); try again later.".to_owned()
        }
        // The spool's error and its causes, in the text this result always had.
        ServerError::Spool(spool) => match std::error::Error::source(spool) {
            Some(cause) => format!("snapshot spool: {}", dual_core::error::Report::new(cause)),
            None => spool.to_string(),
        },
        // The error with its causes (none of these has one today).
        other => dual_core::error::Report::new(other).to_string(),
    };
    error_result(message, options)
}

/// The `isError: true` tool result for a resource whose query failed after the tool call returned
/// it pending (docs/DESIGN.md §8): the executor's message for `query_execution_failed` (it names
/// the mistake), what to do for the other codes, never the internals of a storage failure.
/// The text is cut as [`error_result`] cuts.
#[cfg(feature = "server")]
#[must_use]
pub fn failure_result(
    failure: &dual_core::status::QueryFailure,
    options: &ErrorResultOptions,
) -> CallToolResult {
    error_result(failure_message(failure), options)
}

/// The text [`failure_result`] and `resources/read` give the model for a failed query, with the
/// executor's message escaped as [`error_result`] escapes.
#[cfg(feature = "server")]
pub(crate) fn failure_message(failure: &dual_core::status::QueryFailure) -> String {
    display_safe_multiline(&failure_text(failure)).into_owned()
}

#[cfg(feature = "server")]
fn failure_text(failure: &dual_core::status::QueryFailure) -> String {
    use dual_core::status::FailureCode;
    match failure.code {
        FailureCode::QueryTimeout => format!(
            "The query ran past the server's time limit and was cancelled ({}). Narrow it (filters, \
             fewer rows) and call the tool again.",
            failure.message
        ),
        FailureCode::QueryInterrupted => {
            "The query was interrupted (the server running it stopped); call the tool again.".to_owned()
        }
        FailureCode::StorageError => {
            "The result could not be stored (storage unavailable); call the tool again later.".to_owned()
        }
        FailureCode::Overloaded => format!(
            "The server is busy ({}); retry the same call in a few seconds.",
            failure.message
        ),
        _ => format!("The query failed: {}", failure.message),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use dual_core::{Column, ColumnType, ResourceId, Row};
    use serde_json::{Value, json};

    use super::*;

    /// A ready response of three rows, expiring 15 minutes after the epoch; shared with the client's
    /// tests.
    pub(crate) fn sample_response() -> DualResponse {
        let rows: Vec<Row> = (0..3)
            .filter_map(|i| {
                json!({"id": i, "name": format!("College {i}")})
                    .as_object()
                    .cloned()
            })
            .collect();
        let id = ResourceId::new();
        DualResponse {
            id,
            uri: format!("resource://{id}"),
            url: format!("http://127.0.0.1:8080/resources/{id}"),
            name: "Institution Search Results".into(),
            sample: rows.into(),
            total_count: 847,
            columns: vec![
                Column::new("id", ColumnType::Integer),
                Column::new("name", ColumnType::String),
            ],
            executed_at: dual_core::time::OffsetDateTime::UNIX_EPOCH,
            expires_at: Some(
                dual_core::time::OffsetDateTime::UNIX_EPOCH + dual_core::time::Duration::minutes(15),
            ),
            status: dual_core::status::ResourceStatus::Ready,
            profile: dual_core::mcp::ResponseProfile::None,
        }
    }

    #[test]
    fn wire_form_matches_dual_core() {
        let response = sample_response();
        let ours = serde_json::to_value(to_call_tool_result(&response, &RenderOptions::default()))
            .unwrap_or_default();
        let core = serde_json::to_value(response.tool_result()).unwrap_or_default();
        assert_eq!(ours["content"], core["content"]);
        assert_eq!(ours["structuredContent"], core["structuredContent"]);
        assert_eq!(ours["isError"], false);
        assert_eq!(ours["content"][2]["type"], "resource_link");
        assert_eq!(ours["content"][2]["uri"], response.uri.as_str());
        assert_eq!(ours["content"][2]["mimeType"], "application/json");
        assert_eq!(ours["content"][1]["text"], response.table_text());
    }

    #[test]
    fn older_versions_get_text_only_and_the_json_option_embeds_structured_content() {
        use dual_core::mcp::{ProtocolVersion, TextFormat};
        let response = sample_response();
        let old = to_call_tool_result(&response, &RenderOptions::new(ProtocolVersion::V2025_03_26));
        assert_eq!(old.content.len(), 2);
        assert!(old.content.iter().all(|block| block.as_text().is_some()));
        assert!(old.structured_content.is_none());
        let json = to_call_tool_result(&response, &RenderOptions::default().with_text(TextFormat::Json));
        let text = json.content[1]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        let embedded: Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(Some(embedded), json.structured_content);
    }

    #[test]
    fn structured_content_validates_against_the_output_schema() {
        let schema = Value::Object((*output_schema()).clone());
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        let mut response = sample_response();
        for expires_at in [response.expires_at, None] {
            response.expires_at = expires_at;
            let result = serde_json::to_value(to_call_tool_result(&response, &RenderOptions::default()))
                .unwrap_or_default();
            let errors: Vec<String> = validator
                .iter_errors(&result["structuredContent"])
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{errors:?}");
        }
        // …and the schema does reject what is not a dual response.
        assert!(!validator.is_valid(&json!({"results": []})));
    }

    #[test]
    fn round_trips_through_rmcp_deserialisation() {
        let result = to_call_tool_result(&sample_response(), &RenderOptions::default());
        let text = serde_json::to_string(&result).unwrap_or_default();
        let back: CallToolResult = serde_json::from_str(&text).expect("rmcp parses its own result");
        assert_eq!(back.structured_content, result.structured_content);
        assert_eq!(back.content, result.content);
        assert!(back.content[2].as_resource_link().is_some());
    }

    #[test]
    fn error_results_carry_the_message() {
        let result = error_result("near \"SELEC\": syntax error", &ErrorResultOptions::default());
        let value = serde_json::to_value(&result).unwrap_or_default();
        assert_eq!(value["isError"], true);
        assert_eq!(value["content"][0]["text"], "near \"SELEC\": syntax error");
        assert!(value.get("structuredContent").is_none());
    }

    #[cfg(feature = "server")]
    #[test]
    fn server_errors_keep_executor_messages_and_hide_store_internals() {
        use dual_server::ServerError;
        let failed = server_error_result(
            &ServerError::QueryExecutionFailed(dual_server::ExecutorError::new("no such column: foo")),
            &ErrorResultOptions::default(),
        );
        let text = failed.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        assert_eq!(failed.is_error, Some(true));
        assert!(text.contains("no such column: foo"), "{text}");
        let unknown = server_error_result(
            &ServerError::UnknownQueryKind("nope".into()),
            &ErrorResultOptions::default(),
        );
        assert_eq!(unknown.is_error, Some(true));
    }

    #[cfg(feature = "server")]
    #[test]
    fn texts_name_what_failed_with_its_cause_where_they_did() {
        use dual_server::ServerError;
        let text = |error: &ServerError| {
            let result = server_error_result(error, &ErrorResultOptions::default());
            assert_eq!(result.is_error, Some(true));
            result.content[0]
                .as_text()
                .map(|t| t.text.clone())
                .unwrap_or_default()
        };
        let store = ServerError::from(
            dual_store::StoreError::unavailable("redis get at 10.0.0.1")
                .with_source(std::io::Error::other("refused")),
        );
        assert_eq!(
            text(&store),
            "The result could not be stored (storage unavailable); try again later."
        );
        let invalid = ServerError::from(dual_core::page::RequestError::UnknownSortField("nme".into()));
        assert_eq!(
            text(&invalid),
            "`sort.field` must be one of the resource's columns; `nme` is not"
        );
        let spool = ServerError::Spool(
            dual_server::dual_spool::SpoolError::unavailable(std::io::Error::other("disk gone")).into(),
        );
        assert_eq!(
            text(&spool),
            "snapshot spool: spool storage unavailable: disk gone"
        );
    }

    #[cfg(feature = "server")]
    #[test]
    fn error_text_is_cut_with_a_marker() {
        use dual_server::{ExecutorError, ServerError};
        let identifier = "x".repeat(1 << 20);
        let error =
            ServerError::QueryExecutionFailed(ExecutorError::new(format!("no such column: {identifier}")));
        let limited = ErrorResultOptions::default().max_bytes(1_000);
        let argument = format!("unknown argument `{identifier}`");
        let failure = dual_core::status::QueryFailure::new(
            dual_core::status::FailureCode::QueryExecutionFailed,
            format!("no such column: {identifier}"),
        );
        for (result, max) in [
            (
                server_error_result(&error, &ErrorResultOptions::default()),
                DEFAULT_MAX_ERROR_TEXT_BYTES,
            ),
            (server_error_result(&error, &limited), 1_000),
            (
                error_result(argument.clone(), &ErrorResultOptions::default()),
                DEFAULT_MAX_ERROR_TEXT_BYTES,
            ),
            (error_result(argument, &limited), 1_000),
            (
                failure_result(&failure, &ErrorResultOptions::default()),
                DEFAULT_MAX_ERROR_TEXT_BYTES,
            ),
            (failure_result(&failure, &limited), 1_000),
        ] {
            let text = result.content[0]
                .as_text()
                .map(|t| t.text.clone())
                .unwrap_or_default();
            assert!(text.len() <= max, "{} > {max}", text.len());
            assert!(
                text.ends_with("bytes in all]"),
                "{}",
                &text[text.len().saturating_sub(40)..]
            );
            assert_eq!(result.is_error, Some(true));
        }
        let short = error_result("near \"SELEC\": syntax error", &ErrorResultOptions::default());
        assert_eq!(
            short.content[0].as_text().map(|t| t.text.as_str()),
            Some("near \"SELEC\": syntax error")
        );
    }

    #[cfg(feature = "server")]
    #[test]
    fn limits_are_retryable_errors_that_say_what_to_do() {
        use dual_server::{ExecutorError, ServerError};
        let text = |result: &CallToolResult| {
            assert_eq!(result.is_error, Some(true));
            result.content[0]
                .as_text()
                .map(|t| t.text.clone())
                .unwrap_or_default()
        };
        let full = text(&server_error_result(
            &ServerError::TooManyResources { max: 100 },
            &ErrorResultOptions::default(),
        ));
        assert!(full.contains("100") && full.contains("retry"), "{full}");
        let busy = text(&server_error_result(
            &ServerError::Overloaded(ExecutorError::overloaded(
                "no database connection became free within 2000 ms",
                std::time::Duration::from_secs(1),
            )),
            &ErrorResultOptions::default(),
        ));
        assert!(busy.contains("busy") && busy.contains("retry"), "{busy}");
        // A pending query that later found no capacity says the same.
        let later = text(&failure_result(
            &dual_core::status::QueryFailure::new(
                dual_core::status::FailureCode::Overloaded,
                "no database connection became free within 2000 ms",
            ),
            &ErrorResultOptions::default(),
        ));
        assert!(later.contains("busy") && later.contains("retry"), "{later}");
    }
}
