//! A raw MCP session over HTTP: dual-testkit's (`dual_testkit::raw_mcp`), which dual-serve's protocol
//! tests share.
#![allow(
    unused_imports,
    reason = "each test binary uses a different part of the support module"
)]

pub(crate) use dual_testkit::raw_mcp::{RawMcp, apps_capabilities};
