//! `dual-response serve --stdio` child processes.

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};

/// `dual-response serve --stdio --addr 127.0.0.1:0 --db DB` with `RUST_LOG=rust_log`, stdin and stdout
/// piped and killed when dropped; callers choose stderr (and further environment) before spawning.
pub(crate) fn command(db: &Path, rust_log: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_dual-response"));
    command
        .args(["serve", "--stdio", "--addr", "127.0.0.1:0", "--dataset"])
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

/// Spawns [`command`] with stderr discarded, sends the `initialize` of a client named `client` and
/// returns the child, its still open stdin and the answer.
pub(crate) async fn initialized(db: &Path, rust_log: &str, client: &str) -> (Child, ChildStdin, Value) {
    let mut child = command(db, rust_log)
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    stdin
        .write_all(initialize_line(client).as_bytes())
        .await
        .expect("write");
    stdin.flush().await.expect("flush");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .await
        .expect("an answer");
    let answer = serde_json::from_str(&line).expect("a JSON-RPC line");
    (child, stdin, answer)
}
