//! MCP Apps in the demo (docs/DESIGN.md §4): what a client that negotiated
//! `io.modelcontextprotocol/ui` gets beside the tools every client gets.

use rmcp::model::Tool;

/// The tools an apps client is listed: both tools with the view attached (`_meta.ui.resourceUri`),
/// then the app-only `dual_download_link`.
pub(super) fn apps_tools(tools: &[Tool]) -> Vec<Tool> {
    tools
        .iter()
        .cloned()
        .map(dual_rmcp::apps::with_view)
        .chain([dual_rmcp::apps::download_link_tool()])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tools_carry_the_view_and_the_app_only_tool_comes_last() {
        let tools = apps_tools(&super::super::tools());
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names, ["query", "search_institutions", "dual_download_link"]);
        for tool in &tools[..2] {
            let meta = serde_json::to_value(&tool.meta).unwrap_or_default();
            assert_eq!(meta["ui"]["resourceUri"], dual_rmcp::dual_view::VIEW_URI);
        }
        let app_only = serde_json::to_value(&tools[2].meta).unwrap_or_default();
        assert_eq!(app_only["ui"]["visibility"], serde_json::json!(["app"]));
    }
}
