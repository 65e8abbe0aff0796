//! `dual-demo serve --stdio` child processes.

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

/// `dual-demo serve --stdio --addr 127.0.0.1:0 --db DB` with `RUST_LOG=rust_log`, stdin and stdout
/// piped and killed when dropped; callers choose stderr (and further environment) before spawning.
pub(crate) fn command(db: &Path, rust_log: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_dual-demo"));
    command
        .args(["serve", "--stdio", "--addr", "127.0.0.1:0", "--db"])
        .arg(db)
        .env("RUST_LOG", rust_log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// The `initialize` request (id 1, protocol 2025-06-18) of an MCP client named `client`, as one line.
pub(crate) fn initialize_line(client: &str) -> String {
    let request: Value = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": client, "version": "0"}}
    });
    format!("{request}\n")
}
