//! Finding a dual response in whatever shape a tool result arrives in.
//!
//! The search walks the value: a `structuredContent`-like object (one with a `resource` object and
//! `results` or `metadata`) is the data itself; a tool result is searched through `structuredContent`,
//! then `content`; arrays are searched element by element; strings holding JSON and text blocks are
//! decoded and searched; agent-SDK wrappers (`output`, `result`, …) are unwrapped. A complete dual
//! response wins over a malformed one, which wins over a lone `resource_link`.

use std::fmt;

use dual_core::mcp::StructuredContent;
use dual_core::{Column, Row, status::ResourceStatus};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::{BoxError, ClientError};

/// Nesting deeper than this is not searched (it also bounds recursion on hostile input).
const MAX_DEPTH: u8 = 16;

/// Keys under which agent SDKs and protocol envelopes put a tool's output.
const WRAPPER_KEYS: [&str; 5] = ["output", "result", "toolResult", "tool_result", "raw_item"];

/// What was found, before the resource URL is resolved against the client's base URL.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Found {
    pub(crate) sample: Vec<Row>,
    pub(crate) total_count: Option<u64>,
    pub(crate) uri: Option<String>,
    pub(crate) url: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) columns: Option<Vec<Column>>,
    pub(crate) executed_at: Option<OffsetDateTime>,
    pub(crate) expires_at: Option<OffsetDateTime>,
    /// `pending` when the result says so; `ready` when it says nothing (or for a lone link).
    pub(crate) status: ResourceStatus,
}

impl Found {
    pub(crate) fn from_structured(structured: &StructuredContent) -> Self {
        Self {
            sample: structured.results.to_vec(),
            total_count: Some(structured.metadata.total_count),
            uri: Some(structured.resource.uri.clone()),
            url: Some(structured.resource.url.clone()),
            name: Some(structured.resource.name.clone()),
            columns: Some(structured.metadata.columns.clone()).filter(|c| !c.is_empty()),
            executed_at: Some(structured.metadata.executed_at),
            expires_at: structured.metadata.expires_at,
            status: structured.metadata.status,
        }
    }

    pub(crate) fn from_location(location: &str) -> Self {
        let location = location.trim();
        let is_url = location.starts_with("http://") || location.starts_with("https://");
        Self {
            uri: (!is_url).then(|| location.to_owned()),
            url: is_url.then(|| location.to_owned()),
            ..Self::default()
        }
    }
}

/// What is wrong with a value that is not a (well-formed) dual response, and the error of the JSON or
/// timestamp inside it that did not parse, when one did not.
#[derive(Debug)]
pub(crate) struct Malformed {
    message: String,
    source: Option<BoxError>,
}

impl Malformed {
    fn because(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Self {
            message: message.into(),
            source: Some(source.into()),
        }
    }
}

impl From<String> for Malformed {
    fn from(message: String) -> Self {
        Self {
            message,
            source: None,
        }
    }
}

impl From<&str> for Malformed {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<Malformed> for ClientError {
    fn from(malformed: Malformed) -> Self {
        let error = Self::parse(malformed.message);
        match malformed.source {
            Some(source) => error.with_source(source),
            None => error,
        }
    }
}

/// The outcome of searching one value, best first.
enum Outcome {
    Full(Found),
    Malformed(Malformed),
    Link(Found),
    Nothing,
}

impl Outcome {
    fn rank(&self) -> u8 {
        match self {
            Self::Full(_) => 3,
            Self::Malformed(_) => 2,
            Self::Link(_) => 1,
            Self::Nothing => 0,
        }
    }

    /// Keeps the better of two outcomes (the earlier one on a tie).
    fn or_better(self, other: Self) -> Self {
        if other.rank() > self.rank() { other } else { self }
    }
}

/// Finds the dual response in `value`.
///
/// # Errors
/// What is malformed, or that nothing looks like a dual response.
pub(crate) fn find(value: &Value) -> Result<Found, Malformed> {
    match search(value, 0) {
        Outcome::Full(found) | Outcome::Link(found) => Ok(found),
        Outcome::Malformed(why) => Err(why),
        Outcome::Nothing => Err("not a dual response: found no `structuredContent`-like object \
             (`resource` with `results`/`metadata`), no JSON text block and no `resource_link`"
            .into()),
    }
}

fn search(value: &Value, depth: u8) -> Outcome {
    if depth > MAX_DEPTH {
        return Outcome::Nothing;
    }
    match value {
        Value::String(text) => search_text(text, depth),
        Value::Array(items) => {
            let mut best = Outcome::Nothing;
            for item in items {
                best = best.or_better(search(item, depth + 1));
                if matches!(best, Outcome::Full(_)) {
                    break;
                }
            }
            best
        }
        Value::Object(map) => search_object(map, depth),
        _ => Outcome::Nothing,
    }
}

fn search_text(text: &str, depth: u8) -> Outcome {
    let trimmed = text.trim();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return Outcome::Nothing;
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => search(&value, depth + 1),
        Err(e) if trimmed.contains("\"resource\"") => Outcome::Malformed(Malformed::because(
            format!(
                "a text block holds JSON that looks like a dual response but does not parse \
                 (line {}, column {}); was it truncated?",
                e.line(),
                e.column()
            ),
            e,
        )),
        Err(_) => Outcome::Nothing,
    }
}

fn search_object(map: &Map<String, Value>, depth: u8) -> Outcome {
    let is_structured = map.get("resource").is_some_and(Value::is_object)
        && (map.contains_key("results") || map.contains_key("metadata"));
    if is_structured {
        return match structured(map) {
            Ok(found) => Outcome::Full(found),
            Err(why) => Outcome::Malformed(why),
        };
    }
    let mut best = Outcome::Nothing;
    let kind = map.get("type").and_then(Value::as_str);
    if kind == Some("resource_link") {
        best = match link(map) {
            Ok(found) => Outcome::Link(found),
            Err(why) => Outcome::Malformed(why),
        };
    }
    let mut nested: Vec<&Value> = Vec::new();
    nested.extend(map.get("structuredContent"));
    nested.extend(map.get("content"));
    if kind == Some("text") {
        nested.extend(map.get("text"));
    }
    nested.extend(WRAPPER_KEYS.iter().filter_map(|key| map.get(*key)));
    for value in nested {
        best = best.or_better(search(value, depth + 1));
        if matches!(best, Outcome::Full(_)) {
            break;
        }
    }
    best
}

/// `{"results": [...], "resource": {...}, "metadata": {...}}`, ours or the reference implementation's.
fn structured(map: &Map<String, Value>) -> Result<Found, Malformed> {
    let sample = match map.get("results") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(rows)) => rows
            .iter()
            .map(|row| row.as_object().cloned())
            .collect::<Option<Vec<Row>>>()
            .ok_or("`results` must be an array of row objects")?,
        Some(_) => return Err("`results` must be an array of row objects".into()),
    };
    let resource = map
        .get("resource")
        .and_then(Value::as_object)
        .ok_or("`resource` must be an object")?;
    let uri = optional_string(resource, "uri", "resource.uri")?;
    let url = optional_string(resource, "url", "resource.url")?;
    if uri.is_none() && url.is_none() {
        return Err("`resource` needs a `url` or a `uri`".into());
    }
    let name = optional_string(resource, "name", "resource.name")?;
    let metadata = map
        .get("metadata")
        .and_then(Value::as_object)
        .ok_or("`metadata` must be an object with `total_count`")?;
    let total_count = metadata
        .get("total_count")
        .and_then(as_count)
        .ok_or("`metadata.total_count` must be a non-negative integer")?;
    if metadata
        .get("sample_count")
        .is_some_and(|v| !v.is_null() && as_count(v).is_none())
    {
        return Err("`metadata.sample_count` must be a non-negative integer".into());
    }
    let columns = match metadata.get("columns") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            serde_json::from_value::<Vec<Column>>(value.clone())
                .map_err(|e| Malformed::because("`metadata.columns` must be a list of {name, type}", e))?,
        ),
    };
    let status = match metadata.get("status") {
        None | Some(Value::Null) => ResourceStatus::Ready,
        Some(Value::String(text)) => ResourceStatus::parse(text).ok_or(STATUS_ERROR)?,
        Some(_) => return Err(STATUS_ERROR.into()),
    };
    Ok(Found {
        sample,
        total_count: Some(total_count),
        uri,
        url,
        name,
        columns,
        executed_at: optional_time(metadata, "executed_at")?,
        expires_at: optional_time(metadata, "expires_at")?,
        status,
    })
}

const STATUS_ERROR: &str = "`metadata.status` must be `pending`, `ready` or `failed`";

/// `{"type": "resource_link", "uri": …, "name": …}`.
fn link(map: &Map<String, Value>) -> Result<Found, Malformed> {
    let uri = optional_string(map, "uri", "resource_link.uri")?.ok_or("`resource_link` has no `uri`")?;
    Ok(Found {
        name: optional_string(map, "name", "resource_link.name")?,
        ..Found::from_location(&uri)
    })
}

fn optional_string(map: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>, Malformed> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.trim().to_owned())),
        Some(_) => Err(format!("`{path}` must be a string").into()),
    }
}

fn optional_time(metadata: &Map<String, Value>, key: &str) -> Result<Option<OffsetDateTime>, Malformed> {
    match metadata.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => OffsetDateTime::parse(text, &Rfc3339)
            .map(Some)
            .map_err(|e| Malformed::because(format!("`metadata.{key}` must be an RFC 3339 timestamp"), e)),
        Some(_) => Err(format!("`metadata.{key}` must be an RFC 3339 timestamp").into()),
    }
}

/// A count: a non-negative integer, or an integral float below 2^53 (as JavaScript may write it).
fn as_count(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(f))
            .map(|f| {
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "checked integral, non-negative and below 2^53"
                )]
                let n = f as u64;
                n
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn structured_json() -> Value {
        json!({
            "results": [{"id": 1}],
            "resource": {"uri": "resource://abc", "url": "http://h/resources/abc", "name": "R",
                         "mimeType": "application/json"},
            "metadata": {"total_count": 5, "sample_count": 1, "executed_at": "2026-01-15T10:30:00.000Z"}
        })
    }

    #[test]
    fn finds_structured_content_at_any_depth() {
        let inner = structured_json();
        let wrapped =
            json!({"items": [{"output": json!({"type": "text", "text": inner.to_string()}).to_string()}]});
        // `items` is not a wrapper key: nothing is found there.
        assert!(find(&wrapped).is_err());
        let wrapped = json!([{"output": json!({"type": "text", "text": inner.to_string()}).to_string()}]);
        let found = find(&wrapped).unwrap_or_default();
        assert_eq!(found.total_count, Some(5));
        assert_eq!(found.sample.len(), 1);
    }

    #[test]
    fn malformed_fields_are_named() {
        let cases = [
            (json!({"results": 3}), "`results`"),
            (json!({"results": [1]}), "`results`"),
            (json!({"metadata": {"total_count": -1}}), "total_count"),
            (json!({"metadata": {"total_count": 1.5}}), "total_count"),
            (
                json!({"metadata": {"total_count": 1, "sample_count": "x"}}),
                "sample_count",
            ),
            (
                json!({"metadata": {"total_count": 1, "executed_at": "yesterday"}}),
                "executed_at",
            ),
            (
                json!({"metadata": {"total_count": 1, "expires_at": 7}}),
                "expires_at",
            ),
            (
                json!({"metadata": {"total_count": 1, "columns": [{"name": "a", "type": "blob"}]}}),
                "columns",
            ),
            (json!({"resource": {"uri": 3}}), "resource.uri"),
            (json!({"resource": {"uri": null, "url": ""}}), "`url` or a `uri`"),
            (json!({"metadata": 5}), "`metadata`"),
            (
                json!({"metadata": {"total_count": 1, "status": "done"}}),
                "metadata.status",
            ),
            (
                json!({"metadata": {"total_count": 1, "status": 1}}),
                "metadata.status",
            ),
        ];
        for (patch, needle) in cases {
            let mut value = structured_json();
            for (key, v) in patch.as_object().cloned().unwrap_or_default() {
                if let (Some(target), Value::Object(inner)) = (value.get_mut(&key), &v)
                    && let Some(target) = target.as_object_mut()
                {
                    target.extend(inner.clone());
                    continue;
                }
                value[&key] = v;
            }
            let error = find(&value).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(error.contains(needle), "{needle}: {error}");
        }
    }

    #[test]
    fn the_status_is_read() {
        assert_eq!(
            find(&structured_json()).ok().map(|f| f.status),
            Some(ResourceStatus::Ready)
        );
        let mut value = structured_json();
        value["metadata"]["status"] = json!("pending");
        assert_eq!(find(&value).ok().map(|f| f.status), Some(ResourceStatus::Pending));
    }

    #[test]
    fn integral_float_counts_are_accepted() {
        let mut value = structured_json();
        value["metadata"]["total_count"] = json!(847.0);
        assert_eq!(find(&value).ok().and_then(|f| f.total_count), Some(847));
    }

    #[test]
    fn complete_beats_malformed_beats_link() {
        let link = json!({"type": "resource_link", "uri": "resource://abc", "name": "R"});
        let mut bad = structured_json();
        bad["metadata"]["total_count"] = json!("many");
        let good = structured_json();
        let both = json!([link.clone(), bad.clone()]);
        assert!(find(&both).is_err());
        let all = json!([link.clone(), bad, good]);
        assert_eq!(find(&all).ok().and_then(|f| f.total_count), Some(5));
        let lone = find(&json!([{"type": "text", "text": "hi"}, link])).unwrap_or_default();
        assert_eq!(
            (lone.uri.as_deref(), lone.total_count),
            (Some("resource://abc"), None)
        );
    }

    #[test]
    fn truncated_json_text_is_reported() {
        let text = structured_json().to_string();
        let cut = &text[..text.len() / 2];
        let error = find(&json!({"content": [{"type": "text", "text": cut}]})).err();
        let message = error.as_ref().map(ToString::to_string).unwrap_or_default();
        assert!(message.contains("truncated"), "{message}");
        assert!(
            error.is_some_and(|e| e.source.is_some_and(|s| s.is::<serde_json::Error>())),
            "the JSON error is kept as the source"
        );
    }

    #[test]
    fn hostile_nesting_is_bounded() {
        let mut value = structured_json();
        for _ in 0..200 {
            value = json!({"output": value});
        }
        assert!(find(&value).is_err());
    }
}
