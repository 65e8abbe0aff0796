//! The rows of a snapshot page as stored (compact JSON objects, joined by commas in their segments):
//! runs of a segment the spool keeps in memory are held as slices of it and sent as they are, with
//! no copy; other rows (a sorted page's, gathered from several segments, or rows of a segment read
//! from a file or an object store) are copied out once, joined by commas.

use bytes::Bytes;
use dual_spool::RowRun;

/// How the JSON of a page starts, before its first row.
pub(crate) const OPENING: &[u8] = b"{\"data\":[";

/// A page's rows, in order, as chunks of rows joined by commas.
#[derive(Debug, Clone, Default)]
pub(crate) struct StoredRows {
    chunks: Vec<Chunk>,
}

#[derive(Debug, Clone)]
enum Chunk {
    /// Consecutive rows of a segment the spool keeps in memory: a slice of it.
    Run(RowRun),
    /// Rows copied, joined by commas; row `i` ends at `ends[i]`.
    Copied { joined: Vec<u8>, ends: Vec<usize> },
}

impl StoredRows {
    /// Appends the rows of `run`: held as they are when the spool keeps their segment in memory
    /// (see [`RowRun::resident`]), copied otherwise, so that a page never keeps a whole segment
    /// alive for a few of its rows.
    pub(crate) fn push_run(&mut self, run: RowRun) {
        if run.is_empty() {
            return;
        }
        if run.resident() {
            self.chunks.push(Chunk::Run(run));
            return;
        }
        self.reserve(run.len(), run.byte_len());
        match self.chunks.last_mut() {
            // The run's rows are already joined by commas: one copy, then where each ends.
            Some(Chunk::Copied { joined, ends }) => {
                if !ends.is_empty() {
                    joined.push(b',');
                }
                let mut end = joined.len();
                joined.extend_from_slice(&run.joined());
                for row in run.slices() {
                    end += row.len();
                    ends.push(end);
                    end += 1;
                }
            }
            _ => {
                for row in run.slices() {
                    self.push(row);
                }
            }
        }
    }

    /// Room for `rows` more copied rows of `bytes` bytes in all.
    pub(crate) fn reserve(&mut self, rows: usize, bytes: usize) {
        let bytes = bytes.saturating_add(rows);
        match self.chunks.last_mut() {
            Some(Chunk::Copied { joined, ends }) => {
                joined.reserve(bytes);
                ends.reserve(rows);
            }
            _ => self.chunks.push(Chunk::Copied {
                joined: Vec::with_capacity(bytes),
                ends: Vec::with_capacity(rows),
            }),
        }
    }

    /// Appends a copy of one row's bytes.
    pub(crate) fn push(&mut self, row: &[u8]) {
        match self.chunks.last_mut() {
            Some(Chunk::Copied { joined, ends }) => {
                if !ends.is_empty() {
                    joined.push(b',');
                }
                joined.extend_from_slice(row);
                ends.push(joined.len());
            }
            _ => self.chunks.push(Chunk::Copied {
                joined: row.to_vec(),
                ends: vec![row.len()],
            }),
        }
    }

    /// The chunks that hold rows (a reserved copy may hold none).
    fn filled(&self) -> impl Iterator<Item = &Chunk> + '_ {
        self.chunks.iter().filter(|chunk| !chunk.is_empty())
    }

    /// The length of the rows joined by commas: the bytes of a JSON array between its brackets.
    pub(crate) fn joined_len(&self) -> usize {
        let commas = self.filled().count().saturating_sub(1);
        self.filled()
            .map(|chunk| match chunk {
                Chunk::Run(run) => run.byte_len(),
                Chunk::Copied { joined, .. } => joined.len(),
            })
            .sum::<usize>()
            + commas
    }

    /// Appends the rows joined by commas to `out`.
    pub(crate) fn write_joined(&self, out: &mut Vec<u8>) {
        for (i, chunk) in self.filled().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match chunk {
                Chunk::Run(run) => out.extend_from_slice(&run.joined()),
                Chunk::Copied { joined, .. } => out.extend_from_slice(joined),
            }
        }
    }

    /// The rows joined by commas, as buffers to send one after another: the slices of the
    /// segments and the copied rows, with no further copy.
    pub(crate) fn into_joined(self) -> Vec<Bytes> {
        let mut out = Vec::with_capacity(self.chunks.len() * 2);
        let filled = self.chunks.into_iter().filter(|chunk| !chunk.is_empty());
        for (i, chunk) in filled.enumerate() {
            if i > 0 {
                out.push(Bytes::from_static(b","));
            }
            out.push(match chunk {
                Chunk::Run(run) => run.joined(),
                Chunk::Copied { joined, .. } => Bytes::from(joined),
            });
        }
        out
    }

    /// The rows one by one.
    pub(crate) fn rows(&self) -> Vec<&[u8]> {
        let mut out = Vec::new();
        for chunk in &self.chunks {
            match chunk {
                Chunk::Run(run) => out.extend(run.slices()),
                Chunk::Copied { joined, ends } => {
                    let mut start = 0;
                    for &end in ends {
                        out.push(joined.get(start..end).unwrap_or_default());
                        start = end + 1;
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
impl<R: AsRef<[u8]>> FromIterator<R> for StoredRows {
    fn from_iter<I: IntoIterator<Item = R>>(rows: I) -> Self {
        let mut stored = Self::default();
        for row in rows {
            stored.push(row.as_ref());
        }
        stored
    }
}

impl Chunk {
    fn is_empty(&self) -> bool {
        match self {
            Self::Run(run) => run.is_empty(),
            Self::Copied { ends, .. } => ends.is_empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(stored: &StoredRows) -> Vec<u8> {
        let mut out = Vec::new();
        stored.write_joined(&mut out);
        assert_eq!(out.len(), stored.joined_len());
        assert_eq!(
            stored.clone().into_joined().concat(),
            out,
            "the same bytes either way"
        );
        out
    }

    #[test]
    fn copied_rows_come_back_as_pushed_and_joined_by_commas() {
        let rows: [&[u8]; 4] = [br#"{"a":1}"#, b"{}", br#"{"b":",,"}"#, b"{}"];
        let mut stored = StoredRows::default();
        for row in rows {
            stored.push(row);
        }
        assert_eq!(joined(&stored), br#"{"a":1},{},{"b":",,"},{}"#);
        assert_eq!(stored.rows(), rows);
        let mut empty = StoredRows::default();
        empty.reserve(10, 100);
        assert_eq!(joined(&empty), b"");
        assert!(empty.rows().is_empty());
        assert!(empty.into_joined().is_empty());
        let mut after_reserve = StoredRows::default();
        after_reserve.push(b"{}");
        after_reserve.reserve(1, 10);
        after_reserve.push(b"[]");
        assert_eq!(joined(&after_reserve), b"{},[]");
    }
}
