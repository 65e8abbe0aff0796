//! The sample a tool result carries, cut to its byte limit.

use dual_core::mcp::ResponseProfile;
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

/// The tool result of `record` carrying `profile`: its sample cut as [`cut_sample`] cuts it, with
/// the profile counted. Sample rows give way before the profile does; a profile that does not fit
/// even with no rows is left for later (`{uri}/profile`).
pub(crate) fn fit_response(
    config: &ServerConfig,
    mut record: ResourceRecord,
    profile: ResponseProfile,
) -> DualResponse {
    let max_bytes = config.max_sample_bytes;
    let mut response = DualResponse::from_record(record.clone(), &config.uri_scheme, &config.base_url);
    response.profile = profile;
    if matches!(response.profile, ResponseProfile::Here(_)) {
        let bare = DualResponse {
            sample: Vec::new().into(),
            ..response.clone()
        };
        if bare.max_rendered_bytes() > max_bytes {
            tracing::debug!(
                max_sample_bytes = max_bytes,
                "profile larger than the tool result's byte limit: left for resources/read"
            );
            response.profile = ResponseProfile::Later;
        }
    }
    let kept = response.sample_rows_within(max_bytes);
    let fetched = record.sample.len();
    if kept < fetched {
        record.sample = record.sample[..kept].into();
        response.sample = std::sync::Arc::clone(&record.sample);
        tracing::debug!(
            fetched,
            kept,
            max_sample_bytes = max_bytes,
            "sample cut to whole rows within the tool result's byte limit"
        );
    }
    response
}
