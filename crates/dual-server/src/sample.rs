//! The sample a tool result carries, cut to its byte limit.

use dual_core::{DualResponse, ResourceRecord};

use crate::config::ServerConfig;

/// Cuts the sample of `record` to the whole rows that keep its whole tool result (text blocks and
/// `structuredContent`, in its largest rendering) within `config.max_sample_bytes`.
pub(crate) fn cut_sample(config: &ServerConfig, record: &mut ResourceRecord) {
    let max_bytes = config.max_sample_bytes;
    let response = DualResponse::from_record(record.clone(), &config.uri_scheme, &config.base_url);
    let kept = response.sample_rows_within(max_bytes);
    let fetched = record.sample.len();
    if kept < fetched {
        record.sample = record.sample[..kept].into();
        tracing::debug!(
            fetched,
            kept,
            max_sample_bytes = max_bytes,
            "sample cut to whole rows within the tool result's byte limit"
        );
    }
}
