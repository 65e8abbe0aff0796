//! `prompts/list` and `prompts/get` (`003_…`; feature `server`): [`Prompts`] serves two workflows
//! over dual-response results, neither of which implies a write.
//!
//! * [`EXPLORE_RESULT_PROMPT`] (`uri` required): how to page and sort one result, and what its
//!   columns are, from the result itself.
//! * [`ANSWER_FROM_DATA_PROMPT`] (`question` required): run one read-only query, check the sample,
//!   report the exact count and point the person to the full result.

use std::borrow::Cow;

use dual_core::escape::display_safe;
use dual_core::uri::parse_resource_uri;
use dual_core::{ResourceRecord, budget::cut_text};
use dual_server::{Caller, DualResponseServer};
use rmcp::model::{
    ErrorData, GetPromptResult, JsonObject, ListPromptsResult, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::{Value, json};

/// The prompt that explores one result.
pub const EXPLORE_RESULT_PROMPT: &str = "explore_result";
/// The prompt that answers a question from the database.
pub const ANSWER_FROM_DATA_PROMPT: &str = "answer_from_data";

/// The longest question or URI a prompt takes, in bytes.
pub const MAX_PROMPT_ARGUMENT_BYTES: usize = 4096;

/// The prompts of a server whose read-only SQL tool is `query_tool`, with `schema_tool` listing
/// its tables when it has one.
#[derive(Debug, Clone)]
pub struct Prompts {
    query_tool: String,
    schema_tool: Option<String>,
}

impl Prompts {
    /// Prompts naming the tool `query_tool` (and no schema tool).
    #[must_use]
    pub fn new(query_tool: impl Into<String>) -> Self {
        Self {
            query_tool: query_tool.into(),
            schema_tool: None,
        }
    }

    /// Names `tool` as the one that describes the tables.
    #[must_use]
    pub fn schema_tool(mut self, tool: impl Into<String>) -> Self {
        self.schema_tool = Some(tool.into());
        self
    }

    /// Answers `prompts/list`: both prompts, each with its argument.
    #[must_use]
    pub fn list(&self) -> ListPromptsResult {
        let explore = Prompt::new(
            EXPLORE_RESULT_PROMPT,
            Some(
                "Explore a query result: its columns, how to page and sort it, and where the full result is.",
            ),
            Some(vec![
                PromptArgument::new("uri")
                    .with_description("The resource URI of a result (the resource_link of a tool result).")
                    .with_required(true),
            ]),
        );
        let answer = Prompt::new(
            ANSWER_FROM_DATA_PROMPT,
            Some(
                "Answer a question from the data: one read-only query, a checked sample, the exact count and a pointer to every row.",
            ),
            Some(vec![
                PromptArgument::new("question")
                    .with_description("The question to answer from the database.")
                    .with_required(true),
            ]),
        );
        ListPromptsResult::with_all_items(vec![explore, answer])
    }

    /// Answers `prompts/get` for `caller`.
    ///
    /// # Errors
    /// `invalid params` for an unknown prompt, a missing, empty or oversized argument, or a `uri`
    /// that is not a result `caller` may read (an unknown, expired or another owner's resource
    /// answers the same); `internal error` when the store cannot be read.
    pub async fn get(
        &self,
        server: &DualResponseServer,
        caller: &Caller,
        name: &str,
        arguments: Option<&JsonObject>,
    ) -> Result<GetPromptResult, ErrorData> {
        match name {
            EXPLORE_RESULT_PROMPT => {
                let uri = argument(arguments, "uri")?;
                let record = readable(server, caller, uri).await?;
                Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                    Role::User,
                    explore_text(server, uri, &record),
                )])
                .with_description(format!("Explore {}", display_safe(&record.name))))
            }
            ANSWER_FROM_DATA_PROMPT => {
                let question = argument(arguments, "question")?;
                Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                    Role::User,
                    self.answer_text(question),
                )])
                .with_description("Answer from the data"))
            }
            other => Err(ErrorData::invalid_params(
                format!("unknown prompt `{}`", cut_text(other, 64)),
                Some(json!({"field": "name"})),
            )),
        }
    }

    fn answer_text(&self, question: &str) -> String {
        let schema = self.schema_tool.as_ref().map_or_else(String::new, |tool| {
            format!("First call `{tool}` to see the tables, their columns and types. ")
        });
        format!(
            "Answer this question from the database, reading only: {question}\n\n\
             {schema}Then write ONE read-only SELECT (or WITH … SELECT) that answers it and run it with the \
             `{query}` tool; never write, create, alter or delete anything. The tool returns a sample of \
             the rows, the exact total count and a link to the full result.\n\
             1. Check the sample: do the columns and values make sense for the question? If not, fix the \
             query and run it again.\n\
             2. Answer with the exact total count the tool reported, not the number of sample rows.\n\
             3. Tell the person that every row is in the full result the application shows (the \
             resource link); do not copy all rows into the conversation. Read more rows with \
             resources/read on the link only when the answer needs them.",
            query = self.query_tool,
        )
    }
}

/// The named string argument, present, not empty and at most [`MAX_PROMPT_ARGUMENT_BYTES`].
fn argument<'a>(arguments: Option<&'a JsonObject>, name: &str) -> Result<&'a str, ErrorData> {
    let field = Some(json!({"field": name}));
    match arguments.and_then(|arguments| arguments.get(name)) {
        Some(Value::String(text)) if text.len() > MAX_PROMPT_ARGUMENT_BYTES => {
            Err(ErrorData::invalid_params(
                format!(
                    "`{name}` takes {} bytes; at most {MAX_PROMPT_ARGUMENT_BYTES}",
                    text.len()
                ),
                field,
            ))
        }
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text),
        Some(Value::String(_)) => Err(ErrorData::invalid_params(format!("`{name}` is empty"), field)),
        Some(_) => Err(ErrorData::invalid_params(
            format!("`{name}` must be a string"),
            field,
        )),
        None => Err(ErrorData::invalid_params(
            format!("missing argument `{name}`"),
            field,
        )),
    }
}

/// The record of a result URI `caller` may read.
async fn readable(
    server: &DualResponseServer,
    caller: &Caller,
    uri: &str,
) -> Result<ResourceRecord, ErrorData> {
    let not_found = || {
        ErrorData::invalid_params(
            "`uri` is not a result you can read (unknown, expired, or not yours)",
            Some(json!({"field": "uri"})),
        )
    };
    let parsed = parse_resource_uri(uri)
        .filter(|parsed| parsed.scheme == server.config().uri_scheme && !parsed.profile)
        .ok_or_else(not_found)?;
    server.get_resource(parsed.id, caller).await.map_err(|error| match error {
        dual_server::ServerError::ResourceNotFound | dual_server::ServerError::ResourceExpired => not_found(),
        other => {
            tracing::warn!(error = %dual_core::escape::log_error(&other), "prompts/get: the result could not be read");
            ErrorData::internal_error("the result could not be read; try again later", None)
        }
    })
}

/// How to explore `record`, at `uri`; its name and column names (made from the model's SQL) escaped.
fn explore_text(server: &DualResponseServer, uri: &str, record: &ResourceRecord) -> String {
    let limits = server.config().page_limits;
    let columns: Vec<String> = record
        .columns
        .iter()
        .map(|column| {
            format!(
                "- {} ({})",
                display_safe(&column.name),
                column.column_type.as_str()
            )
        })
        .collect();
    let base = uri.split('?').next().unwrap_or(uri);
    let sortable = record
        .columns
        .first()
        .map_or(Cow::Borrowed("a_column"), |column| display_safe(&column.name));
    format!(
        "Explore the query result {base} (\"{name}\"): {total} rows, status {status}.\n\n\
         Columns:\n{columns}\n\n\
         Read a page with resources/read on {base}?offset=0&limit={limit} (offset: first row; limit: at \
         most {max} rows); the answer says has_next and next_offset. Sort on the server with \
         &sort={sortable}:desc (any column, asc or desc). Say what each column means from its name, type \
         and the rows you read, and describe the result without reading every row: the application \
         shows the person the full result. This is read-only: nothing here changes data.",
        name = display_safe(&record.name),
        total = record.total_count,
        status = record.status.as_str(),
        columns = columns.join("\n"),
        limit = limits.default_limit,
        max = limits.max_limit,
    )
}
