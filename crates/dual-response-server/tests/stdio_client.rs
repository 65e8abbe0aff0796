//! The README's `mcpServers` entry, run as a desktop host runs it (issue 43, item 7): the JSON is
//! read from README.md, its command is this build's `dual-response`, its database a SQLite file of
//! the test's, and the official TypeScript MCP client's stdio transport (`browser/stdio.mjs`) starts
//! it, lists the tools and calls `query`.
//!
//! Needs Node.js and the npm packages of `browser/` (feature `browser`; `bash .ci/browser`).
#![cfg(feature = "browser")]

mod support;

use std::time::Duration;

use serde_json::Value;
use support::{TempDb, within};

/// The first ```json block of README.md with an `mcpServers` entry that has a `command`.
fn readme_stdio_entry() -> Value {
    let readme = include_str!("../../../README.md");
    readme
        .split("```json")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .filter_map(|json| serde_json::from_str::<Value>(json).ok())
        .find_map(|config| {
            let servers = config.get("mcpServers")?.as_object()?;
            servers
                .values()
                .find(|server| server.get("command").is_some())
                .cloned()
        })
        .unwrap_or_else(|| panic!("README.md has an mcpServers entry with a command"))
}

#[tokio::test]
async fn the_readme_entry_serves_over_stdio_to_the_typescript_client() {
    within(Duration::from_secs(120), async {
        let mut entry = readme_stdio_entry();
        assert_eq!(
            entry["command"], "dual-response",
            "the README runs the installed binary"
        );
        let args: Vec<&str> = entry["args"]
            .as_array()
            .expect("args")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(args.contains(&"--stdio"), "{args:?}");
        assert!(
            entry["env"]["DUAL_DATABASE"].is_string(),
            "the database from the environment"
        );

        let dir = TempDb::new();
        let path = dir.dir().join("sales.sqlite");
        let db = rusqlite::Connection::open(&path).expect("a SQLite file");
        db.execute_batch(
            "CREATE TABLE sales (id INTEGER PRIMARY KEY, region TEXT);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
             INSERT INTO sales SELECT i, CASE i % 2 WHEN 0 THEN 'north' ELSE 'south' END FROM n;",
        )
        .expect("the table");
        drop(db);
        entry["command"] = env!("CARGO_BIN_EXE_dual-response").into();
        entry["env"]["DUAL_DATABASE"] = format!("sqlite:{}", path.display()).into();
        // The README's address may be taken on this machine: any free port.
        entry["env"]["DUAL_ADDR"] = "127.0.0.1:0".into();
        let replace_addr = entry["args"]
            .as_array_mut()
            .expect("args")
            .iter_mut()
            .skip_while(|arg| *arg != "--addr")
            .nth(1);
        if let Some(addr) = replace_addr {
            *addr = "127.0.0.1:0".into();
        }

        let entry = entry.to_string();
        let sql = "SELECT region, count(*) AS n FROM sales GROUP BY region ORDER BY region";
        let answer = support::run_node("stdio.mjs", &[&entry, sql]).await;
        let tools = support::tool_names(&answer);
        assert!(
            tools.contains(&"query") && tools.contains(&"describe_schema"),
            "{tools:?}"
        );
        let result = &answer["result"];
        assert_eq!(result["isError"], Value::Bool(false), "{result}");
        assert_eq!(
            result["structuredContent"]["metadata"]["total_count"], 2,
            "{result}"
        );
        let link = result["structuredContent"]["resource"]["uri"]
            .as_str()
            .unwrap_or_default();
        assert!(link.starts_with("resource://"), "{result}");
    })
    .await;
}
