//! The executor both benches time the server around.

use dual_testkit::executor::Stored;
use serde_json::json;

/// `total` precomputed five-column rows, `{"id": i, "name": "College {i}", "state": "NJ",
/// "enrollment": i × 100, "public": true}`, pages cloned out of them: the cheapest possible "query".
pub(crate) fn precomputed(total: u64) -> Stored {
    Stored::new(
        (0..total)
            .map(|i| {
                json!({"id": i, "name": format!("College {i}"), "state": "NJ", "enrollment": i * 100, "public": true})
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect(),
    )
}
