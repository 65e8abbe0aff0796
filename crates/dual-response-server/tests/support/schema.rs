//! The published MCP schemas results are validated against: dual-testkit's
//! (`dual_testkit::mcp_schema`, its `mcp-schemas/`).
#![allow(
    unused_imports,
    reason = "each test binary uses a different part of the support module"
)]

pub(crate) use dual_testkit::mcp_schema::assert_valid;
