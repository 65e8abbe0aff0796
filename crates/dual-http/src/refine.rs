//! `POST /{id}/query`: SQL over a stored result, answered with a new result (docs/DESIGN.md §5).

use dual_core::escape::log_safe;
use dual_server::ServerError;
use serde::Deserialize;

use crate::rejection::Rejection;

/// The body of `POST /{id}/query`: `{"sql": "…"}` and nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RefineBody {
    sql: String,
}

/// The SQL of a `POST /{id}/query` body.
pub(crate) fn sql_of(body: &[u8]) -> Result<String, Rejection> {
    if body.is_empty() {
        return Err(Rejection::InvalidRequest(
            "the body must be {\"sql\": \"SELECT … FROM result …\"}".to_owned(),
        ));
    }
    // An object first: serde's derived `Deserialize` would also take the sequence `["…"]`.
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(body)
        .and_then(|object| RefineBody::deserialize(serde_json::Value::Object(object)))
        .map(|body| body.sql)
        .map_err(|error| {
            Rejection::InvalidRequest(format!(
                "the body must be {{\"sql\": \"SELECT … FROM result …\"}}: {}",
                log_safe(&error.to_string())
            ))
        })
}

/// What a refinement's failure answers: the caller wrote the SQL, so the engine's message (which
/// names the columns of `result`) and a time limit it passed are theirs to read, as `400
/// invalid_request`; a full store is `503 overloaded` (retryable, as for any new result); everything
/// else as any request's. Failures that are no fault of the SQL (the parent unreadable, the
/// engine's disk) come from the server as `OVERLOADED` already, naming no internals.
pub(crate) fn rejection(error: ServerError) -> Rejection {
    match error {
        ServerError::QueryExecutionFailed(error) => Rejection::InvalidRequest(error.message().to_owned()),
        timeout @ ServerError::QueryTimeout { .. } => {
            Rejection::InvalidRequest(format!("{timeout}: filter, aggregate or add a LIMIT"))
        }
        full @ ServerError::TooManyResources { .. } => Rejection::Overloaded {
            retry_after_secs: 1,
            detail: full.to_string(),
        },
        other => other.into(),
    }
}
