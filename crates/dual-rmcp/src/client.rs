//! Client side (feature `client`): recognise a dual response in an rmcp `CallToolResult` with
//! [`parse_call_tool_result`].

use dual_client::{DualResponseClient, ParsedDualResponse};
use rmcp::model::CallToolResult;

/// Parses an rmcp tool result into a [`ParsedDualResponse`] that fetches with `client`.
///
/// Returns `None` for an error result (`isError: true`) and for a result that is not a dual response.
/// Everything dual-client recognises works: `structuredContent`, a text block carrying the JSON (for
/// servers that send only `content`), or a lone `resource_link`.
#[must_use]
pub fn parse_call_tool_result(
    result: &CallToolResult,
    client: &DualResponseClient,
) -> Option<ParsedDualResponse> {
    if result.is_error == Some(true) {
        return None;
    }
    let value = serde_json::to_value(result).ok()?;
    client.parse(&value)
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock;

    use dual_core::mcp::RenderOptions;

    use super::*;
    use crate::tool_result::tests::sample_response;
    use crate::tool_result::{ErrorResultOptions, error_result, to_call_tool_result};

    #[test]
    fn parses_a_dual_response_tool_result() {
        let response = sample_response();
        let client = DualResponseClient::new();
        let parsed = parse_call_tool_result(
            &to_call_tool_result(&response, &RenderOptions::default()),
            &client,
        )
        .expect("parsed");
        assert_eq!(parsed.total_count(), Some(847));
        assert_eq!(parsed.resource_url(), response.url);
        assert_eq!(parsed.resource_uri(), Some(response.uri.as_str()));
        assert_eq!(parsed.sample().len(), 3);
        assert_eq!(parsed.columns(), response.columns.as_slice());
    }

    #[test]
    fn parses_content_only_results() {
        // A server (or proxy) that drops structuredContent: the JSON text option still carries it.
        let response = sample_response();
        let options = dual_core::mcp::RenderOptions::default().with_text(dual_core::mcp::TextFormat::Json);
        let mut result = to_call_tool_result(&response, &options);
        result.structured_content = None;
        let parsed = parse_call_tool_result(&result, &DualResponseClient::new()).expect("parsed");
        assert_eq!(parsed.total_count(), Some(847));
    }

    #[test]
    fn rejects_errors_and_plain_results() {
        let client = DualResponseClient::new();
        assert!(
            parse_call_tool_result(
                &error_result("syntax error", &ErrorResultOptions::default()),
                &client
            )
            .is_none()
        );
        let plain = CallToolResult::success(vec![ContentBlock::text("hello")]);
        assert!(parse_call_tool_result(&plain, &client).is_none());
    }
}
