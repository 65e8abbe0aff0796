//! An incremental NDJSON decoder: bytes in as they arrive, rows out as soon as their line is complete.

use dual_core::Row;

use crate::error::ClientError;

/// The longest line (one row) the decoder buffers before giving up.
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Splits a byte stream into lines and decodes each non-blank line as one row object.
///
/// Memory is bounded by the longest line plus one chunk: complete lines are decoded and dropped from
/// the buffer as soon as they are read.
#[derive(Debug, Default)]
pub(crate) struct NdjsonDecoder {
    buf: Vec<u8>,
    /// Start of the first undecoded byte.
    start: usize,
    /// Where to resume looking for a newline (everything before it, from `start`, has none).
    scan: usize,
    /// Lines decoded so far, for error messages.
    line: u64,
}

impl NdjsonDecoder {
    /// Appends a chunk of the body.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.scan -= self.start;
            self.start = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The next complete row, `None` when no complete line is buffered.
    ///
    /// # Errors
    /// A `FETCH_ERROR` for a line that is not a JSON object or is longer than [`MAX_LINE_BYTES`].
    pub(crate) fn next_row(&mut self) -> Result<Option<Row>, ClientError> {
        loop {
            let Some(pos) = memchr::memchr(b'\n', &self.buf[self.scan..]) else {
                self.scan = self.buf.len();
                if self.buf.len() - self.start > MAX_LINE_BYTES {
                    return Err(ClientError::fetch(format!(
                        "export line {} is longer than {MAX_LINE_BYTES} bytes",
                        self.line + 1
                    )));
                }
                return Ok(None);
            };
            let end = self.scan + pos;
            let range = self.start..end;
            self.start = end + 1;
            self.scan = self.start;
            if let Some(row) = self.decode(range)? {
                return Ok(Some(row));
            }
        }
    }

    /// Decodes what is left after the body ended: a last line without a trailing newline.
    ///
    /// # Errors
    /// A `FETCH_ERROR` when that line is not a complete JSON object, as when the body was cut off.
    pub(crate) fn finish(&mut self) -> Result<Option<Row>, ClientError> {
        if let Some(row) = self.next_row()? {
            return Ok(Some(row));
        }
        let range = self.start..self.buf.len();
        self.start = self.buf.len();
        self.scan = self.start;
        self.decode(range)
    }

    /// Decodes every complete line of `chunk` (after any buffered partial line) and hands each row to
    /// `emit`, buffering only the incomplete last line.
    ///
    /// Unlike [`push`](Self::push) plus [`next_row`](Self::next_row), complete lines are decoded straight
    /// from `chunk`: the body is not copied, only a line split across chunks is.
    ///
    /// # Errors
    /// As [`next_row`](Self::next_row).
    pub(crate) fn feed(&mut self, chunk: &[u8], mut emit: impl FnMut(Row)) -> Result<(), ClientError> {
        let mut rest = chunk;
        if self.start < self.buf.len() {
            // Finish the buffered partial line (and any complete lines still buffered) first.
            let Some(pos) = memchr::memchr(b'\n', rest) else {
                self.push(rest);
                return self.next_row().map(|row| debug_assert!(row.is_none()));
            };
            self.push(&rest[..=pos]);
            rest = &rest[pos + 1..];
            while let Some(row) = self.next_row()? {
                emit(row);
            }
        }
        self.buf.clear();
        self.start = 0;
        self.scan = 0;
        while let Some(pos) = memchr::memchr(b'\n', rest) {
            if let Some(row) = decode_line(&rest[..pos], &mut self.line)? {
                emit(row);
            }
            rest = &rest[pos + 1..];
        }
        if !rest.is_empty() {
            self.push(rest);
            self.next_row().map(|row| debug_assert!(row.is_none()))?;
        }
        Ok(())
    }

    fn decode(&mut self, range: std::ops::Range<usize>) -> Result<Option<Row>, ClientError> {
        decode_line(&self.buf[range], &mut self.line)
    }
}

/// Decodes one line as a row; `None` for a blank line. `line` counts the non-blank lines so far.
fn decode_line(line: &[u8], count: &mut u64) -> Result<Option<Row>, ClientError> {
    // A row starts with `{`: only a line that does not is scanned for being blank.
    if line.first() != Some(&b'{') && line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    *count += 1;
    let line_number = *count;
    crate::transport::decode_json_with::<Row>(line, || format!("export line {line_number}")).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn drain(decoder: &mut NdjsonDecoder, out: &mut Vec<Row>) -> Result<(), ClientError> {
        while let Some(row) = decoder.next_row()? {
            out.push(row);
        }
        Ok(())
    }

    fn rows(n: usize) -> Vec<Row> {
        (0..n)
            .filter_map(|i| {
                json!({"id": i, "name": format!("row\n{i} \u{e9}"), "x": [i, {"y": null}]})
                    .as_object()
                    .cloned()
            })
            .collect()
    }

    fn encode(rows: &[Row]) -> Vec<u8> {
        let mut out = Vec::new();
        for row in rows {
            out.extend(serde_json::to_vec(row).unwrap_or_default());
            out.extend(b"\r\n\n");
        }
        out
    }

    /// `bytes` cut at the positions `cuts` names (clamped and sorted), every byte in exactly one chunk.
    fn chunks(bytes: &[u8], cuts: Vec<usize>) -> Vec<&[u8]> {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
        cuts.sort_unstable();
        let mut last = 0;
        cuts.into_iter()
            .chain([bytes.len()])
            .map(|cut| {
                let chunk = &bytes[last..cut];
                last = cut;
                chunk
            })
            .collect()
    }

    /// Decodes `n` rows encoded and cut at `cuts`, handing every chunk to `decode`; the decoder must
    /// end cleanly with exactly the rows, in order.
    fn check_chunking(
        n: usize,
        cuts: Vec<usize>,
        mut decode: impl FnMut(&mut NdjsonDecoder, &[u8], &mut Vec<Row>) -> Result<(), ClientError>,
    ) -> Result<(), TestCaseError> {
        let expected = rows(n);
        let bytes = encode(&expected);
        let mut decoder = NdjsonDecoder::default();
        let mut got = Vec::new();
        for chunk in chunks(&bytes, cuts) {
            prop_assert!(decode(&mut decoder, chunk, &mut got).is_ok());
        }
        prop_assert!(decoder.finish().ok() == Some(None));
        prop_assert_eq!(got, expected);
        Ok(())
    }

    proptest! {
        #[test]
        fn any_chunking_yields_the_same_rows(n in 0usize..40, cuts in proptest::collection::vec(0usize..4000, 0..30)) {
            check_chunking(n, cuts, |decoder, chunk, got| {
                decoder.push(chunk);
                drain(decoder, got)
            })?;
        }

        #[test]
        fn feeding_any_chunking_yields_the_same_rows(n in 0usize..40, cuts in proptest::collection::vec(0usize..4000, 0..30)) {
            check_chunking(n, cuts, |decoder, chunk, got| decoder.feed(chunk, |row| got.push(row)))?;
        }
    }

    #[test]
    fn last_line_without_newline_is_decoded() {
        let mut decoder = NdjsonDecoder::default();
        decoder.push(b"{\"a\":1}\n{\"a\":2}");
        let mut got = Vec::new();
        assert!(drain(&mut decoder, &mut got).is_ok());
        assert_eq!(got.len(), 1);
        assert!(decoder.finish().is_ok_and(|row| row.is_some()));
    }

    #[test]
    fn cut_off_or_wrong_lines_are_fetch_errors() {
        let mut decoder = NdjsonDecoder::default();
        decoder.push(b"{\"a\":1}\n{\"a\":");
        assert!(decoder.next_row().is_ok_and(|r| r.is_some()));
        let error = decoder.finish().err();
        assert!(
            error.as_ref().is_some_and(|e| e.message().contains("truncated")),
            "{error:?}"
        );

        for bad in [&b"[1,2]\n"[..], b"42\n", b"{\"a\":1} x\n", b"nope\n"] {
            let mut decoder = NdjsonDecoder::default();
            decoder.push(bad);
            let error = decoder.next_row().err();
            assert!(
                error.is_some_and(|e| e.code() == crate::ClientErrorCode::Fetch),
                "{bad:?}"
            );
        }
    }
}
