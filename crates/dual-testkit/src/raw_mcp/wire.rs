//! One HTTP/1.1 exchange on a fresh connection (`Connection: close`), read to its end: what a test
//! of a server over a real socket sends, with no client library between it and the wire.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// Longest wait for one whole reply, from connecting to the end of the body.
pub const REPLY_WITHIN: Duration = Duration::from_secs(30);

/// A whole reply.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status.
    pub status: StatusCode,
    /// Every header.
    pub headers: HeaderMap,
    /// The body, de-chunked.
    pub body: Bytes,
}

impl Reply {
    /// The body as text (lossy).
    #[must_use]
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON, or the first SSE `data:` line's; `null` when it is neither.
    #[must_use]
    pub fn json(&self) -> Value {
        if let Ok(value) = serde_json::from_slice(&self.body) {
            return value;
        }
        self.text()
            .lines()
            .find_map(|line| line.strip_prefix("data:"))
            .and_then(|data| serde_json::from_str(data.trim()).ok())
            .unwrap_or(Value::Null)
    }

    /// The value of header `name`, when it is there and text.
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

/// Sends `request` (its URI absolute: `http://HOST:PORT/…`) on a fresh connection with
/// `Connection: close` and reads the whole reply.
///
/// # Panics
/// On a transport error, a reply that is not HTTP/1.1, or no whole reply within [`REPLY_WITHIN`].
pub async fn send(request: Request<Full<Bytes>>) -> Reply {
    let what = format!("{} {}", request.method(), request.uri());
    match timeout(REPLY_WITHIN, exchange(request)).await {
        Ok(Ok(reply)) => reply,
        Ok(Err(error)) => panic!("{what}: {error}"),
        Err(_) => panic!("{what}: no whole reply within {REPLY_WITHIN:?}"),
    }
}

async fn exchange(request: Request<Full<Bytes>>) -> Result<Reply, String> {
    let (parts, body) = request.into_parts();
    let authority = parts
        .uri
        .authority()
        .ok_or("the URI names no host")?
        .as_str()
        .to_owned();
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    let mut head = format!(
        "{} {target} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\ncontent-length: {}\r\n",
        parts.method,
        body.len()
    )
    .into_bytes();
    for (name, value) in &parts.headers {
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    head.extend_from_slice(&body);
    let mut stream = TcpStream::connect(&authority)
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    stream
        .write_all(&head)
        .await
        .map_err(|e| format!("writing: {e}"))?;
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .await
        .map_err(|e| format!("reading: {e}"))?;
    parse(&raw)
}

/// A reply read to its end.
fn parse(raw: &[u8]) -> Result<Reply, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no reply head in {:?}", String::from_utf8_lossy(raw)))?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|e| format!("a head that is not text: {e}"))?;
    let rest = &raw[end + 4..];
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse::<u16>().ok())
        .and_then(|code| StatusCode::from_u16(code).ok())
        .ok_or_else(|| format!("no status line in {head:?}"))?;
    let mut headers = HeaderMap::new();
    for line in lines {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| format!("a header line without a colon: {line:?}"))?;
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|e| format!("{name:?}: {e}"))?;
        let value =
            HeaderValue::from_bytes(value.trim().as_bytes()).map_err(|e| format!("{value:?}: {e}"))?;
        headers.append(name, value);
    }
    let chunked = headers
        .get(header::TRANSFER_ENCODING)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains("chunked"));
    let body = if chunked { dechunk(rest)? } else { rest.to_vec() };
    Ok(Reply {
        status,
        headers,
        body: Bytes::from(body),
    })
}

/// The payload of a chunked body read to its end.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let line = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a chunk without its size line")?;
        let size = std::str::from_utf8(&rest[..line])
            .ok()
            .map(|text| text.split(';').next().unwrap_or_default().trim())
            .and_then(|text| usize::from_str_radix(text, 16).ok())
            .ok_or("a chunk size that is not hexadecimal")?;
        rest = &rest[line + 2..];
        if size == 0 {
            return Ok(body);
        }
        let chunk = rest.get(..size).ok_or("a chunk cut short")?;
        body.extend_from_slice(chunk);
        rest = rest
            .get(size..)
            .and_then(|tail| tail.strip_prefix(b"\r\n"))
            .ok_or("a chunk without its line end")?;
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn a_chunked_reply_is_read_whole() {
        let raw = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nx-a: 1\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let reply = parse(raw).expect("a reply");
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("x-a"), Some("1"));
        assert_eq!(reply.text(), "abcde");
    }

    #[test]
    fn a_reply_cut_in_a_chunk_is_an_error() {
        let raw = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n9\r\nabc";
        assert!(parse(raw).is_err());
    }
}
