//! What each protocol version may receive: rmcp sends every field it has, whatever was negotiated,
//! so a server strips what the client's version does not define ([`tool_for_version`],
//! [`tools_list_for_version`], [`resource_template_for_version`]), for the version
//! [`protocol_version`] reads from a request.

use dual_core::mcp::ProtocolVersion;
use rmcp::model::{ResourceTemplate, Tool};

/// The rendering version for a request whose negotiated version is `negotiated` (pass
/// `RequestContext::protocol_version()`); the oldest known version when there is none, so that a
/// result never carries what the client may not know.
#[must_use]
pub fn protocol_version(negotiated: Option<&rmcp::model::ProtocolVersion>) -> ProtocolVersion {
    negotiated.map_or(ProtocolVersion::V2024_11_05, |version| {
        ProtocolVersion::from_date(version.as_str())
    })
}

/// `tool` with only the fields `version` defines: no `annotations` before 2025-03-26; no `title`,
/// `outputSchema` or `_meta` before 2025-06-18; no `icons` before 2025-11-25.
#[must_use]
pub fn tool_for_version(tool: &Tool, version: ProtocolVersion) -> Tool {
    let mut tool = tool.clone();
    if !version.has_tool_annotations() {
        tool.annotations = None;
    }
    if !version.has_titles() {
        tool.title = None;
        tool.meta = None;
    }
    if !version.has_structured_content() {
        tool.output_schema = None;
    }
    if !version.has_icons() {
        tool.icons = None;
    }
    tool
}

/// The `tools/list` answer for a client of `version`: every one of `tools` through
/// [`tool_for_version`], in order, on one page.
#[must_use]
pub fn tools_list_for_version(tools: &[Tool], version: ProtocolVersion) -> rmcp::model::ListToolsResult {
    rmcp::model::ListToolsResult::with_all_items(
        tools.iter().map(|tool| tool_for_version(tool, version)).collect(),
    )
}

/// `template` with only the fields `version` defines: no `title` or `_meta` before 2025-06-18, no
/// `icons` before 2025-11-25.
#[must_use]
pub fn resource_template_for_version(
    template: &ResourceTemplate,
    version: ProtocolVersion,
) -> ResourceTemplate {
    let mut template = template.clone();
    if !version.has_titles() {
        template.title = None;
        template.meta = None;
    }
    if !version.has_icons() {
        template.icons = None;
    }
    template
}

#[cfg(test)]
mod tests {
    use rmcp::model::{JsonObject, ToolAnnotations};

    use super::*;

    #[test]
    fn old_versions_lose_the_fields_they_do_not_define() {
        let mut tool = Tool::new("query", "Run SQL", JsonObject::new())
            .with_raw_output_schema(crate::tool_result::output_schema())
            .annotate(ToolAnnotations::new().read_only(true));
        tool.title = Some("Query".to_owned());
        let old = tool_for_version(&tool, ProtocolVersion::V2024_11_05);
        assert!(old.annotations.is_none() && old.output_schema.is_none() && old.title.is_none());
        let mid = tool_for_version(&tool, ProtocolVersion::V2025_03_26);
        assert!(mid.annotations.is_some() && mid.output_schema.is_none() && mid.title.is_none());
        assert_eq!(tool_for_version(&tool, ProtocolVersion::V2025_06_18), tool);
        let other = Tool::new("describe_schema", "Describe", JsonObject::new());
        let listed = tools_list_for_version(&[tool, other.clone()], ProtocolVersion::V2024_11_05);
        assert_eq!(listed.tools, [old, other], "every tool, in order, stripped alike");
        assert!(listed.next_cursor.is_none(), "one page");
    }

    #[test]
    fn an_unknown_negotiation_renders_for_the_oldest_version() {
        assert_eq!(protocol_version(None), ProtocolVersion::V2024_11_05);
        let v = rmcp::model::ProtocolVersion::V_2025_06_18;
        assert_eq!(protocol_version(Some(&v)), ProtocolVersion::V2025_06_18);
    }
}
