//! Tool results for clients that negotiated MCP Apps.

use dual_core::DualResponse;
use dual_core::mcp::RenderOptions;
use dual_core::range::RowRange;
use dual_core::status::ResourceStatus;
use dual_server::{Caller, DualResponseServer, LinkFormat};
use rmcp::model::{CallToolResult, ContentBlock};

/// How [`apps_tool_result`] renders a tool result for a client that negotiated MCP Apps.
///
/// ```
/// use dual_rmcp::apps::AppsOptions;
///
/// let options = AppsOptions::new().resource_link(true).download_link(true);
/// assert!(options.resource_link && options.download_link);
/// assert_eq!(AppsOptions::default(), AppsOptions::new());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct AppsOptions {
    /// Whether `content` keeps its `resource_link` block. Default `false`: a known host defect
    /// drops the view's tool result when the content holds one (anthropics/claude-ai-mcp#753); the
    /// URI stays in the summary text and in `structuredContent`.
    pub resource_link: bool,
    /// Whether the summary text gains a line with a CSV download link (a capability URL minted for
    /// the same caller, needing no `Authorization` header), for hosts that show links. Default
    /// `false`. Only a ready result gets one; the line is added after the sample was fitted to the
    /// server's `max_sample_bytes`, and takes about 250 bytes more.
    pub download_link: bool,
}

impl AppsOptions {
    /// The defaults: no `resource_link` block, no download link line.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps (`true`) or leaves out (`false`, the default) the `resource_link` block.
    #[must_use]
    pub fn resource_link(mut self, keep: bool) -> Self {
        self.resource_link = keep;
        self
    }

    /// Adds (`true`) or not (`false`, the default) a CSV download link line to the summary text.
    #[must_use]
    pub fn download_link(mut self, add: bool) -> Self {
        self.download_link = add;
        self
    }
}

/// The tool result of `response` for `caller`, whose client negotiated MCP Apps: the result of
/// [`to_call_tool_result`](crate::tool_result::to_call_tool_result) for `render`, without its
/// `resource_link` block unless [`AppsOptions::resource_link`], and with a CSV download link line
/// in its summary when [`AppsOptions::download_link`] and the result is ready. A link that cannot
/// be minted (the resource expired meanwhile, say) leaves the line out.
pub async fn apps_tool_result(
    server: &DualResponseServer,
    caller: &Caller,
    response: &DualResponse,
    render: &RenderOptions,
    options: &AppsOptions,
) -> CallToolResult {
    let mut result = crate::tool_result::to_call_tool_result(response, render);
    if !options.resource_link {
        result.content.retain(|block| block.as_resource_link().is_none());
    }
    if options.download_link && response.status == ResourceStatus::Ready {
        let minted = server
            .download_link(response.id, caller, LinkFormat::Csv, RowRange::ALL, None)
            .await;
        match minted {
            Ok(link) => add_line(
                &mut result,
                &format!(
                    "Download every row as CSV (the link works until {}): {}",
                    super::download::rfc3339(link.expires_at),
                    link.url
                ),
            ),
            Err(error) => {
                tracing::debug!(
                    code = error.code().as_str(),
                    "no download link for the tool result"
                );
            }
        }
    }
    result
}

/// Appends `line` to the first text block (the summary), or adds it as a text block.
fn add_line(result: &mut CallToolResult, line: &str) {
    let summary = result.content.iter_mut().find_map(|block| match block {
        ContentBlock::Text(text) => Some(text),
        _ => None,
    });
    match summary {
        Some(text) => {
            text.text.push('\n');
            text.text.push_str(line);
        }
        None => result.content.push(ContentBlock::text(line)),
    }
}
