//! `serve`'s configuration through the binary (issue 43, items 2 and 7): a flag wins over
//! `DUAL_<NAME>`, which wins over the `--config` file, which wins over the default; `--print-config`
//! prints the result with passwords redacted; an unknown key or flag is refused, naming what is
//! accepted.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the binary with `args`, the environment cleared of `DUAL_*` but for `env`.
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dual-response"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("DUAL_") {
            command.env_remove(name);
        }
    }
    command
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("the binary runs: {e}"))
}

fn config_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("dual-config-test-{name}-{}.toml", std::process::id()));
    std::fs::write(&path, text).expect("a temporary file");
    path
}

/// The value of `key` in printed configuration `text`, and where it came from.
fn line<'a>(text: &'a str, key: &str) -> (&'a str, &'a str) {
    let line = text
        .lines()
        .find(|line| line.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("`{key}` in:\n{text}"));
    let (value, source) = line.split_once('#').unwrap_or((line, ""));
    (
        value.trim().trim_start_matches(&format!("{key} = ")),
        source.trim(),
    )
}

#[test]
fn flags_win_over_the_environment_over_the_file_over_defaults() {
    let path = config_file(
        "precedence",
        "addr = \"127.0.0.1:7001\"\nmax-connections = 11\nmax_mcp_sessions = 12\nstore = \"redis://:s3cret@127.0.0.1:6379/0\"\n",
    );
    let config = path.display().to_string();
    let output = run(
        &[
            "serve",
            "--config",
            &config,
            "--print-config",
            "--addr",
            "127.0.0.1:7002",
        ],
        &[("DUAL_MAX_CONNECTIONS", "13"), ("DUAL_SAMPLE_SIZE", "4")],
    );
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(line(&text, "addr"), ("\"127.0.0.1:7002\"", "flag"));
    assert_eq!(line(&text, "max-connections"), ("13", "environment"));
    assert_eq!(line(&text, "sample-size"), ("4", "environment"));
    assert_eq!(line(&text, "max-mcp-sessions"), ("12", "config file"));
    assert_eq!(line(&text, "header-timeout-secs"), ("10", "default"));
    assert_eq!(line(&text, "store").0, "\"redis://:***@127.0.0.1:6379/0\"");
    assert!(!text.contains("s3cret"), "the password is redacted:\n{text}");
    // The printed configuration is a file `--config` accepts, and gives the same configuration.
    let again = config_file("again", &text);
    let reprinted = run(
        &[
            "serve",
            "--config",
            &again.display().to_string(),
            "--print-config",
        ],
        &[],
    );
    let _ = std::fs::remove_file(&again);
    let reprinted = String::from_utf8_lossy(&reprinted.stdout);
    for key in ["addr", "max-connections", "sample-size", "max-mcp-sessions"] {
        assert_eq!(line(&reprinted, key).0, line(&text, key).0, "{key}");
    }
}

#[test]
fn an_unknown_key_is_refused_naming_it_and_the_keys_accepted() {
    let path = config_file("unknown", "addr = \"127.0.0.1:0\"\nmax-conections = 5\n");
    let output = run(&["serve", "--config", &path.display().to_string()], &[]);
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown key `max-conections`"), "{stderr}");
    assert!(stderr.contains("max-connections"), "the keys accepted: {stderr}");
}

#[test]
fn a_bad_value_from_the_environment_is_refused_as_a_flag_would_be() {
    let output = run(&["serve", "--print-config"], &[("DUAL_MAX_CONNECTIONS", "many")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--max-connections") && stderr.contains("many"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_flag_is_refused() {
    let output = run(&["serve", "--max-conections", "5"], &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--max-conections"), "{stderr}");
    assert!(
        stderr.contains("--max-connections"),
        "clap suggests the flag: {stderr}"
    );
}

#[test]
fn oauth_comes_from_every_source_and_excludes_a_token_file() {
    let path = config_file(
        "oauth",
        "oauth-issuer = \"https://idp.example.com/realms/team\"\noauth-tool-scope = \"mcp:tools\"\n\
         oauth-resource = \"https://mcp.example.com/mcp\"\n",
    );
    let config = path.display().to_string();
    let output = run(
        &["serve", "--config", &config, "--print-config"],
        &[
            ("DUAL_OAUTH_LEEWAY_SECS", "30"),
            // Microsoft Entra v2: the API's client id, and its application ID URI.
            (
                "DUAL_OAUTH_AUDIENCE",
                "6f1c2b9e-3d4a-4e5f-9a8b-7c6d5e4f3a2b,api://6f1c2b9e-3d4a-4e5f-9a8b-7c6d5e4f3a2b",
            ),
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (issuer, source) = line(&stdout, "oauth-issuer");
    assert_eq!(issuer, "\"https://idp.example.com/realms/team\"");
    assert!(source.contains("config file"), "{source}");
    assert_eq!(line(&stdout, "oauth-tool-scope").0, "\"mcp:tools\"");
    assert_eq!(line(&stdout, "oauth-leeway-secs").0, "30");
    assert_eq!(line(&stdout, "oauth-owner-claim").0, "\"sub\"");
    assert_eq!(
        line(&stdout, "oauth-resource").0,
        "\"https://mcp.example.com/mcp\""
    );
    let (audiences, source) = line(&stdout, "oauth-audience");
    assert_eq!(
        audiences,
        "\"6f1c2b9e-3d4a-4e5f-9a8b-7c6d5e4f3a2b,api://6f1c2b9e-3d4a-4e5f-9a8b-7c6d5e4f3a2b\""
    );
    assert!(source.contains("environment"), "{source}");

    // A token file from the environment and an issuer from the file: one mode only.
    let output = run(
        &["serve", "--config", &config, "--print-config"],
        &[("DUAL_AUTH_TOKENS", "/nonexistent/tokens")],
    );
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--oauth-issuer") && stderr.contains("--auth-tokens"),
        "{stderr}"
    );

    let too_lax = run(
        &[
            "serve",
            "--oauth-issuer",
            "https://idp.example.com",
            "--oauth-leeway-secs",
            "301",
        ],
        &[],
    );
    assert_eq!(too_lax.status.code(), Some(2));
    let orphan = run(&["serve", "--oauth-tool-scope", "mcp:tools"], &[]);
    let stderr = String::from_utf8_lossy(&orphan.stderr);
    assert_eq!(
        orphan.status.code(),
        Some(2),
        "a scope without an issuer: {stderr}"
    );
    assert!(stderr.contains("--oauth-issuer"), "{stderr}");
}
