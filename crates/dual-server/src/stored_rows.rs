//! The rows of a snapshot page as stored (compact JSON objects), copied out of their segments once
//! into the page's JSON as it starts (`{"data":[`, then the rows joined by commas): the page is then
//! finished in place, with no per-row allocation or reference count and no second copy.

/// How the JSON of a page starts, before its first row.
pub(crate) const OPENING: &[u8] = b"{\"data\":[";
/// Room kept for what closes a page (`]`, the offset, limit, count, `has_more`, and `sort`), so that
/// closing it does not move the rows.
const CLOSING_ROOM: usize = 256;

/// [`OPENING`] and rows joined by `,`, with where each row ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredRows {
    json: Vec<u8>,
    ends: Vec<usize>,
}

impl Default for StoredRows {
    fn default() -> Self {
        Self {
            json: OPENING.to_vec(),
            ends: Vec::new(),
        }
    }
}

impl StoredRows {
    /// Room for `rows` more rows of `bytes` bytes in all, and for the page's closing.
    pub(crate) fn reserve(&mut self, rows: usize, bytes: usize) {
        self.json
            .reserve(bytes.saturating_add(rows).saturating_add(CLOSING_ROOM));
        self.ends.reserve(rows);
    }

    /// Appends one row's bytes.
    pub(crate) fn push(&mut self, row: &[u8]) {
        if !self.ends.is_empty() {
            self.json.push(b',');
        }
        self.json.extend_from_slice(row);
        self.ends.push(self.json.len());
    }

    /// The rows, joined by `,`.
    #[cfg(test)]
    pub(crate) fn joined(&self) -> &[u8] {
        self.json.get(OPENING.len()..).unwrap_or_default()
    }

    /// [`OPENING`] and the rows joined by `,`: the page's JSON so far, to be closed with `]` and
    /// the rest of the page.
    pub(crate) fn opened(&self) -> &[u8] {
        &self.json
    }

    /// [`StoredRows::opened`], without a copy.
    pub(crate) fn into_opened(self) -> Vec<u8> {
        self.json
    }

    /// The rows one by one.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.ends.iter().enumerate().map(|(i, &end)| {
            let start = match i {
                0 => OPENING.len(),
                _ => self.ends[i - 1] + 1,
            };
            self.json.get(start..end).unwrap_or_default()
        })
    }
}

impl<R: AsRef<[u8]>> FromIterator<R> for StoredRows {
    fn from_iter<I: IntoIterator<Item = R>>(rows: I) -> Self {
        let mut stored = Self::default();
        for row in rows {
            stored.push(row.as_ref());
        }
        stored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_back_as_pushed_and_joined_by_commas() {
        let rows: [&[u8]; 4] = [br#"{"a":1}"#, b"{}", br#"{"b":",,"}"#, b"{}"];
        let stored: StoredRows = rows.iter().collect();
        assert_eq!(stored.joined(), br#"{"a":1},{},{"b":",,"},{}"#);
        assert_eq!(stored.iter().collect::<Vec<_>>(), rows);
        assert_eq!(stored.iter().len(), 4);
        assert_eq!(stored.into_opened(), br#"{"data":[{"a":1},{},{"b":",,"},{}"#);
        let empty = StoredRows::default();
        assert_eq!(empty.joined(), b"");
        assert_eq!(empty.iter().count(), 0);
        assert_eq!(empty.into_opened(), OPENING);
    }
}
