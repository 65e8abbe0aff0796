//! Rows as the wire carries them: pages and export batches whose rows may still be the compact JSON
//! the snapshot stores, so that a JSON page or export is written without decoding a row.

use bytes::Bytes;
use dual_core::{
    PageResponse, ResourceId, Row,
    budget::{RowBudget, row_json_len},
    page::ValidPage,
};
use dual_spool::SpoolError;

use crate::ServerError;
use crate::stored_rows::{OPENING, StoredRows};

/// A page from [`DualResponseServer::fetch_page_encoded`](crate::DualResponseServer::fetch_page_encoded):
/// the pagination of a [`PageResponse`] and its rows, decoded (a live resource) or still the compact
/// JSON of each row (a snapshot).
///
/// [`EncodedPage::to_json`] writes exactly the bytes `serde_json::to_vec` writes for the
/// [`PageResponse`] that [`EncodedPage::into_response`] returns.
#[derive(Debug, Clone)]
pub struct EncodedPage {
    /// The pagination; `data` is always empty here.
    page: PageResponse,
    rows: PageRows,
    freshness: PageFreshness,
}

/// What a cache of a page may rely on: facts of its resource when it was read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageFreshness {
    /// When the resource expires; `None` once pinned (it then stays until deleted).
    pub expires_at: Option<time::OffsetDateTime>,
    /// Whether the resource is bound to an owner (only that owner may read it).
    pub owned: bool,
    /// Whether the page re-executed the query (a live resource: the next read may differ).
    pub live: bool,
}

#[derive(Debug, Clone)]
enum PageRows {
    Decoded(Vec<Row>),
    Json(StoredRows),
}

/// `{"data":[]`, how the serialisation of a [`PageResponse`] with no rows starts.
const EMPTY_DATA: &[u8] = b"{\"data\":[]";

impl EncodedPage {
    /// What a cache of this page may rely on.
    #[must_use]
    pub fn freshness(&self) -> PageFreshness {
        self.freshness
    }

    /// The page with its resource's facts.
    pub(crate) fn with_freshness(mut self, freshness: PageFreshness) -> Self {
        self.freshness = freshness;
        self
    }

    /// A page of decoded rows fetched with `page.fetch_limit()`, cut to the rows `budget` admits
    /// (each measured as its compact JSON).
    pub(crate) fn decoded(
        mut rows: Vec<Row>,
        page: &ValidPage,
        mut budget: RowBudget,
        total_count: u64,
    ) -> Self {
        let kept = rows
            .iter()
            .take_while(|row| budget.admit(row_json_len(row)))
            .count();
        rows.truncate(kept);
        Self {
            page: cut(&budget, page, total_count),
            rows: PageRows::Decoded(rows),
            freshness: PageFreshness::default(),
        }
    }

    /// A page of rows encoded as compact JSON objects, already cut: `page` is its pagination.
    pub(crate) fn json(rows: StoredRows, page: PageResponse) -> Self {
        Self {
            page,
            rows: PageRows::Json(rows),
            freshness: PageFreshness::default(),
        }
    }

    /// The pagination: a [`PageResponse`] whose `data` is empty.
    #[must_use]
    pub fn pagination(&self) -> &PageResponse {
        &self.page
    }

    /// The page as `POST /{id}` sends it: a snapshot's rows are copied in as they are stored.
    ///
    /// # Errors
    ///
    /// Serialising a decoded row failed (a JSON map cannot fail to serialise).
    pub fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        match &self.rows {
            PageRows::Decoded(rows) => decoded_json(&self.page, rows),
            PageRows::Json(rows) => {
                let closing = closing_json(&self.page);
                let mut out = Vec::with_capacity(OPENING.len() + rows.joined_len() + closing.len());
                out.extend_from_slice(OPENING);
                rows.write_joined(&mut out);
                out.extend_from_slice(&closing);
                Ok(out)
            }
        }
    }

    /// The same bytes as [`EncodedPage::to_json`], as buffers to send one after another: a
    /// snapshot's rows are slices of the segments that hold them (when the spool keeps those in
    /// memory), not copies. Their lengths add up to the page's `Content-Length`.
    ///
    /// # Errors
    ///
    /// As [`EncodedPage::to_json`].
    pub fn into_json_parts(self) -> Result<Vec<Bytes>, serde_json::Error> {
        match self.rows {
            PageRows::Decoded(rows) => Ok(vec![Bytes::from(decoded_json(&self.page, &rows)?)]),
            PageRows::Json(rows) => {
                let mut out = Vec::with_capacity(4);
                out.push(Bytes::from_static(OPENING));
                out.extend(rows.into_joined());
                out.push(Bytes::from(closing_json(&self.page)));
                Ok(out)
            }
        }
    }

    /// The page with its rows decoded.
    ///
    /// # Errors
    ///
    /// `STORAGE_ERROR` when a stored row is not a JSON object (a corrupt snapshot).
    pub fn into_response(self, id: ResourceId) -> Result<PageResponse, ServerError> {
        let mut page = self.page;
        page.data = match self.rows {
            PageRows::Decoded(rows) => rows,
            PageRows::Json(rows) => rows
                .rows()
                .into_iter()
                .map(|row| decode(id, row))
                .collect::<Result<_, _>>()?,
        };
        Ok(page)
    }
}

/// The JSON of `page` (whose `data` is empty) with `rows` in its `data`: no clone of the page.
fn decoded_json(page: &PageResponse, rows: &[Row]) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = serde_json::to_vec(page)?;
    // Splice the rows in, as for encoded rows.
    let tail = out.split_off(EMPTY_DATA.len());
    out.truncate(EMPTY_DATA.len() - 1);
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, row)?;
    }
    out.push(b']');
    out.extend_from_slice(&tail);
    Ok(out)
}

/// What closes a page after its rows: the `]` of `data` and the pagination, the bytes
/// `serde_json` writes for `page` after `{"data":[` when `data` is empty (a test compares the two).
/// Written by hand: every `POST` page pays for it, and `serde_json` takes several times as long.
fn closing_json(page: &PageResponse) -> Vec<u8> {
    let mut out = Vec::with_capacity(192);
    let mut number = itoa::Buffer::new();
    let mut field = |out: &mut Vec<u8>, name: &[u8], value: Option<u64>| {
        out.extend_from_slice(name);
        match value {
            Some(value) => out.extend_from_slice(number.format(value).as_bytes()),
            None => out.extend_from_slice(b"null"),
        }
    };
    field(&mut out, b"],\"total_count\":", Some(page.total_count));
    field(&mut out, b",\"returned_count\":", Some(page.returned_count));
    field(&mut out, b",\"offset\":", Some(page.offset));
    field(&mut out, b",\"limit\":", Some(page.limit));
    let flag = |value: bool| if value { &b"true"[..] } else { &b"false"[..] };
    out.extend_from_slice(b",\"has_next\":");
    out.extend_from_slice(flag(page.has_next));
    out.extend_from_slice(b",\"has_previous\":");
    out.extend_from_slice(flag(page.has_previous));
    field(&mut out, b",\"next_offset\":", page.next_offset);
    out.push(b'}');
    out
}

/// Decodes one stored row (the compact JSON of a [`Row`]).
pub(crate) fn decode(id: ResourceId, bytes: &[u8]) -> Result<Row, ServerError> {
    serde_json::from_slice(bytes).map_err(|_| {
        ServerError::spool(SpoolError::Corrupt {
            id,
            reason: "a row is not a JSON object",
        })
    })
}

/// The pagination of a page cut by `budget`, logging a cut that the byte budget made.
pub(crate) fn cut(budget: &RowBudget, page: &ValidPage, total_count: u64) -> PageResponse {
    if budget.has_next() && budget.kept() < page.limit {
        tracing::debug!(
            limit = page.limit,
            returned = budget.kept(),
            bytes = budget.used(),
            "page cut to whole rows within the byte cap"
        );
    }
    budget.paginate(page, total_count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use dual_core::PageRequest;
    use serde_json::json;

    fn rows(n: u64) -> Vec<Row> {
        (0..n)
            .map(|i| {
                json!({"id": i, "name": format!("row \"{i}\""), "nested": {"a": [1, null]}})
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect()
    }

    fn valid(offset: u64, limit: u64) -> ValidPage {
        let request = PageRequest {
            offset: Some(offset),
            limit: Some(limit),
            ..PageRequest::default()
        };
        request
            .validate(dual_core::page::PageLimits::default(), &[])
            .unwrap_or_else(|e| panic!("valid page: {e}"))
    }

    #[test]
    fn json_pages_are_byte_identical_to_serialised_pages() {
        let id = ResourceId::new();
        for (n, offset, limit) in [(0, 0, 10), (3, 0, 10), (11, 5, 10), (10, 0, 10), (1, 7, 1)] {
            let page = valid(offset, limit);
            let expected = serde_json::to_vec(&PageResponse::from_rows(rows(n), &page, 99)).ok();
            let encoded: Vec<Bytes> = rows(n)
                .iter()
                .map(|row| Bytes::from(serde_json::to_vec(row).unwrap_or_default()))
                .collect();
            let json = json_page(encoded, &page, usize::MAX);
            assert_eq!(json.to_json().ok(), expected, "{n} rows, offset {offset}");
            assert_eq!(
                json.clone().into_json_parts().ok().map(|parts| parts.concat()),
                expected,
                "{n} rows, offset {offset}"
            );
            let decoded = EncodedPage::decoded(rows(n), &page, RowBudget::for_page(&page, usize::MAX), 99);
            assert_eq!(decoded.to_json().ok(), expected);
            assert_eq!(
                decoded.into_json_parts().ok().map(|parts| parts.concat()),
                expected
            );
            let back = json.into_response(id).ok();
            assert_eq!(back, Some(PageResponse::from_rows(rows(n), &page, 99)));
        }
    }

    #[test]
    fn the_closing_is_what_serde_writes_after_the_rows() {
        let numbers = [0, 1, 9, 10, 99_999, u64::MAX];
        for (i, &n) in numbers.iter().enumerate() {
            let m = numbers[(i + 1) % numbers.len()];
            for (has_next, has_previous) in [(false, false), (true, false), (false, true), (true, true)] {
                let page = PageResponse {
                    data: Vec::new(),
                    total_count: n,
                    returned_count: m,
                    offset: m,
                    limit: n,
                    has_next,
                    has_previous,
                    next_offset: has_next.then_some(m),
                };
                let serde = serde_json::to_vec(&page).unwrap_or_default();
                let mut ours = b"{\"data\":[".to_vec();
                ours.extend(closing_json(&page));
                assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&serde));
            }
        }
    }

    /// A JSON page as the snapshot path builds it: rows offered to the page's budget in order.
    fn json_page(mut encoded: Vec<Bytes>, page: &ValidPage, max_bytes: usize) -> EncodedPage {
        let mut budget = RowBudget::for_page(page, max_bytes);
        let kept = encoded.iter().take_while(|row| budget.admit(row.len())).count();
        encoded.truncate(kept);
        EncodedPage::json(encoded.iter().collect(), budget.paginate(page, 99))
    }

    #[test]
    fn capped_pages_stay_within_the_cap_and_both_encodings_agree() {
        let all = rows(40);
        let encoded: Vec<Bytes> = all
            .iter()
            .map(|row| Bytes::from(serde_json::to_vec(row).unwrap_or_default()))
            .collect();
        for cap in [300, 500, 1_000, 2_000, 100_000] {
            let page = valid(0, 30);
            let fetched = encoded[..31].to_vec();
            let json = json_page(fetched, &page, cap);
            let body = json.to_json().unwrap_or_default();
            let decoded =
                EncodedPage::decoded(all[..31].to_vec(), &page, RowBudget::for_page(&page, cap), 99);
            assert_eq!(decoded.to_json().ok(), Some(body.clone()), "cap {cap}");
            let meta = json.pagination();
            assert!(
                body.len() <= cap || meta.returned_count == 1,
                "cap {cap}: {} bytes",
                body.len()
            );
            assert!(meta.has_next, "31 rows fetched for a limit of 30");
            assert_eq!(meta.next_offset, Some(meta.returned_count));
            // Every row that fitted was kept: one more would pass the cap (or the limit).
            let kept = usize::try_from(meta.returned_count).unwrap_or(usize::MAX);
            let used: usize = encoded[..kept].iter().map(|row| row.len() + 1).sum();
            let one_more = used + encoded[kept].len() + 1;
            let rows_budget = cap - dual_core::budget::PAGE_ENVELOPE_BYTES;
            assert!(kept == 30 || one_more > rows_budget, "cap {cap}");
        }
    }

    #[test]
    fn a_stored_row_that_is_not_an_object_is_corrupt() {
        let page = valid(0, 10);
        let json = json_page(vec![Bytes::from_static(b"[1]")], &page, usize::MAX);
        assert!(json.into_response(ResourceId::new()).is_err());
    }
}
