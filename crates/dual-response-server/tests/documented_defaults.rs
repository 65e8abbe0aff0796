//! docs/SECURITY.md agrees with the binary (issue 42, item 8): every flag of its "The server" table
//! whose default `dual-response serve --help` prints has the same default in the table.

use std::collections::BTreeMap;
use std::process::Command;

/// The table rows of docs/SECURITY.md's "The server" section: each flag named in a row's first
/// cell, with the default of the second (several flags in one row take the defaults in order).
fn documented() -> BTreeMap<String, String> {
    let text = include_str!("../../../docs/SECURITY.md");
    let section = text
        .split("### The server (`dual-response serve`")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_else(|| panic!("docs/SECURITY.md has a \"The server\" section"));
    let mut defaults = BTreeMap::new();
    for line in section.lines().filter(|line| line.starts_with("| `--")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(flags), Some(values)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let flags: Vec<&str> = flags
            .split(", ")
            .map(|flag| flag.trim_matches('`'))
            .filter(|flag| flag.starts_with("--"))
            .collect();
        let values: Vec<&str> = if flags.len() > 1 {
            values.split(", ").collect()
        } else {
            vec![values]
        };
        if flags.len() == values.len() {
            for (flag, value) in flags.into_iter().zip(values) {
                defaults.insert(flag.to_owned(), value.to_owned());
            }
        }
    }
    defaults
}

/// Each flag of `dual-response serve --help` with the default it prints.
fn printed() -> BTreeMap<String, String> {
    let output = Command::new(env!("CARGO_BIN_EXE_dual-response"))
        .args(["serve", "--help"])
        .output()
        .unwrap_or_else(|e| panic!("dual-response serve --help: {e}"));
    let help = String::from_utf8_lossy(&output.stdout);
    let mut defaults = BTreeMap::new();
    let mut flag = None;
    for line in help.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("--") {
            flag = rest.split([' ', '=', '<']).next().map(|name| format!("--{name}"));
        }
        if let (Some(name), Some(at)) = (&flag, trimmed.find("[default: ")) {
            let value = &trimmed[at + "[default: ".len()..];
            let value = value.split(']').next().unwrap_or_default();
            defaults.insert(name.clone(), value.to_owned());
        }
    }
    defaults
}

/// A documented default as the number or word the binary prints: `2,000` → `2000`, `256 KiB` →
/// `262144`, `2 of 4 connections` → `2`, `(memory)` → `memory`.
fn normalized(documented: &str) -> String {
    let plain = documented.trim_matches(['(', ')']).replace(',', "");
    let mut words = plain.split_whitespace();
    let first = words.next().unwrap_or_default();
    let Ok(number) = first.parse::<u64>() else {
        return plain;
    };
    match words.next() {
        Some("KiB") => (number << 10).to_string(),
        Some("MiB") => (number << 20).to_string(),
        _ => number.to_string(),
    }
}

#[test]
fn security_md_gives_the_binarys_defaults() {
    let documented = documented();
    let printed = printed();
    assert!(documented.len() >= 20, "read the table: {documented:?}");
    assert!(printed.len() >= 20, "read the help: {printed:?}");
    let mut compared = 0;
    let mut wrong = Vec::new();
    for (flag, value) in &documented {
        let Some(default) = printed.get(flag) else {
            continue;
        };
        compared += 1;
        if normalized(value) != *default {
            wrong.push(format!("{flag}: docs say {value:?}, the binary {default:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/SECURITY.md disagrees with the binary:\n{}",
        wrong.join("\n")
    );
    assert!(compared >= 20, "only {compared} flags compared");
}
