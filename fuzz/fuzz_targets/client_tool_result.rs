//! dual-client's recognition of a dual response in a tool result (`DualResponseClient::parse`,
//! `parse_strict`, `parse_str`) on arbitrary JSON: whatever a server (or a model relaying one) sends,
//! the parse answers `Some`/`Ok` or a parse error, the three agree, and a parsed response's accessors
//! hold together.

#![no_main]

use std::sync::LazyLock;

use dual_client::{DualResponseClient, ParsedDualResponse};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

struct Clients {
    plain: DualResponseClient,
    /// With a base URL, so that a lone `resource_link` is recognised too.
    based: DualResponseClient,
}

static CLIENTS: LazyLock<Clients> = LazyLock::new(|| Clients {
    plain: DualResponseClient::new(),
    based: DualResponseClient::builder()
        .base_url("https://api.example.com/resources")
        .build()
        .expect("a valid base URL"),
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let clients = &*CLIENTS;
    // `parse_str` is `serde_json::from_str` and then `parse_strict`; `parse` is `parse_strict(..).ok()`.
    let from_text = clients.plain.parse_str(text);
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        assert!(from_text.is_err(), "text that is not JSON does not parse");
        return;
    };
    assert_eq!(from_text.is_ok(), clients.plain.parse_strict(&value).is_ok());
    if let Ok(parsed) = from_text {
        check(&parsed);
    }
    // With a base URL, a lone `resource_link` is a dual response too.
    let based = clients.based.parse_strict(&value);
    if let Ok(parsed) = &based {
        check(parsed);
    }
});

fn check(parsed: &ParsedDualResponse) {
    let _ = (
        parsed.status(),
        parsed.name(),
        parsed.executed_at(),
        parsed.expires_at(),
        parsed.is_expired(),
    );
    let _ = (parsed.resource_uri(), parsed.total_count(), parsed.client());
    assert!(!parsed.resource_url().is_empty());
    let columns = parsed.columns();
    let _ = (parsed.sample().len(), columns.len());
    let _ = format!("{parsed:?}");
}
