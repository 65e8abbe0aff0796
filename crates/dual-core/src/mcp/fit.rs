//! Fitting a tool result into a byte cap: the whole result (text blocks and `structuredContent`
//! together, in every rendering) counts, not one copy of the sample.

use std::sync::Arc;

use super::{DualResponse, ProtocolVersion, RenderOptions, TextFormat};
use crate::budget::json_len;

/// What rmcp adds to the serialised [`ToolResult`](super::ToolResult): `,"isError":false`.
const IS_ERROR_BYTES: usize = 16;

impl DualResponse {
    /// The bytes of the largest rendering of this tool result: the compact JSON of
    /// [`tool_result_with`](Self::tool_result_with) for every protocol version and both text
    /// formats, with the `isError` field an MCP SDK adds. The summary, the table (or the JSON text),
    /// the `resource_link` and `structuredContent` all count.
    #[must_use]
    pub fn max_rendered_bytes(&self) -> usize {
        renderings()
            .map(|options| rendered_bytes(self, &options))
            .max()
            .unwrap_or(0)
    }

    /// How many leading sample rows keep [`max_rendered_bytes`](Self::max_rendered_bytes) within
    /// `max_bytes` (whole rows only; possibly none). The rest of the result (summary, columns, link,
    /// counts) is never cut: with no rows it may still take more than `max_bytes`.
    #[must_use]
    pub fn sample_rows_within(&self, max_bytes: usize) -> usize {
        // Versions from 2025-06-18 carry the rows' JSON in `structuredContent`: no more rows than
        // that copy alone allows can fit.
        let mut used = 0usize;
        let upper = self
            .sample
            .iter()
            .take_while(|row| {
                used = used.saturating_add(json_len(row).saturating_add(1));
                used <= max_bytes
            })
            .count();
        let fits = |rows: usize| {
            let trial = Self {
                sample: Arc::from(&self.sample[..rows]),
                ..self.clone()
            };
            trial.max_rendered_bytes() <= max_bytes
        };
        if fits(upper) {
            return upper;
        }
        // Largest `rows` in 0..upper that fits; the rendered size grows with the rows.
        let (mut low, mut high) = (0, upper);
        while low < high {
            let mid = (low + high).div_ceil(2);
            if fits(mid) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        low
    }
}

/// One rendering per distinct shape: versions that differ in neither `structuredContent` nor
/// `resource_link` render alike.
fn renderings() -> impl Iterator<Item = RenderOptions> {
    let mut shapes = Vec::new();
    for version in ProtocolVersion::ALL {
        let shape = (version.has_structured_content(), version.has_resource_link());
        if !shapes.iter().any(|(seen, _)| *seen == shape) {
            shapes.push((shape, version));
        }
    }
    shapes.into_iter().flat_map(|(_, version)| {
        [TextFormat::Table, TextFormat::Json]
            .into_iter()
            .map(move |text| RenderOptions::new(version).with_text(text))
    })
}

fn rendered_bytes(response: &DualResponse, options: &RenderOptions) -> usize {
    json_len(&response.tool_result_with(options)).saturating_add(IS_ERROR_BYTES)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Column, ColumnType, ResourceId, Row};

    fn response(rows: usize, width: usize) -> DualResponse {
        let sample: Vec<Row> = (0..rows)
            .filter_map(|i| json!({"id": i, "v": "x|\"\n".repeat(width)}).as_object().cloned())
            .collect();
        let id = ResourceId::new();
        DualResponse {
            id,
            uri: format!("resource://{id}"),
            url: format!("http://localhost/resources/{id}"),
            name: "Wide".into(),
            sample: sample.into(),
            total_count: 2_000,
            columns: vec![
                Column::new("id", ColumnType::Integer),
                Column::new("v", ColumnType::String),
            ],
            executed_at: time::OffsetDateTime::UNIX_EPOCH,
            expires_at: None,
            status: crate::status::ResourceStatus::Ready,
            profile: crate::mcp::ResponseProfile::None,
        }
    }

    #[test]
    fn every_rendering_of_the_fitted_sample_is_within_the_cap() {
        for (rows, width, cap) in [(50, 1_000, 64 * 1024), (10, 10, 4_096), (3, 50_000, 32 * 1024)] {
            let full = response(rows, width);
            let kept = full.sample_rows_within(cap);
            let fitted = DualResponse {
                sample: Arc::from(&full.sample[..kept]),
                ..full.clone()
            };
            for options in renderings() {
                let json = serde_json::to_vec(&fitted.tool_result_with(&options)).unwrap_or_default();
                assert!(
                    json.len() + IS_ERROR_BYTES <= cap,
                    "{rows}×{width}: {} > {cap}",
                    json.len()
                );
            }
            if kept < rows {
                let one_more = DualResponse {
                    sample: Arc::from(&full.sample[..=kept]),
                    ..full.clone()
                };
                assert!(
                    one_more.max_rendered_bytes() > cap,
                    "the cut keeps every row that fits"
                );
            }
        }
    }

    #[test]
    fn renderings_cover_both_shapes_and_formats() {
        let shapes: Vec<_> = renderings()
            .map(|o| (o.version().has_structured_content(), o.text()))
            .collect();
        assert_eq!(shapes.len(), 4, "{shapes:?}");
    }
}
