//! Executors that write their rows as JSON ([`JsonRowWriter`]): the snapshot stores the rows as
//! written, and the sample, pages and exports read exactly the rows a map-per-row executor gives;
//! the count is still checked against the rows, the snapshot cap still applies, and a result with
//! two columns of one name is refused with a message for the model.

mod common;

use std::error::Error;
use std::sync::Arc;

use dual_core::error::Report;
use dual_core::status::ResourceStatus;
use dual_core::{PageRequest, Row, Sort, SortOrder, range::RowRange};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, ExecutorError, JsonColumns, JsonRowWriter, QueryExecutor,
    QueryStart, RowStream, ServerErrorCode,
};
use serde_json::{Value, json};

/// Rows per batch.
const BATCH: u64 = 100;

/// `params.n` rows written as JSON; announces `params.claim` rows when given (a wrong count), and
/// names its columns `params.columns` when given.
struct Packed;

fn expected(i: u64) -> Row {
    let note = if i.is_multiple_of(3) {
        Value::Null
    } else {
        json!(format!("note \"{i}\"\n"))
    };
    let row = json!({"id": i, "name": format!("row {i}"), "score": i as f64 / 4.0, "note": note});
    row.as_object().cloned().unwrap_or_default()
}

fn write_row(out: &mut JsonRowWriter, i: u64) -> Result<(), ExecutorError> {
    out.u64(i);
    out.str(&format!("row {i}"));
    out.f64(i as f64 / 4.0);
    if i.is_multiple_of(3) {
        out.null();
    } else {
        out.str(&format!("note \"{i}\"\n"));
    }
    out.end_row()
}

impl QueryExecutor for Packed {
    fn stream(self: Arc<Self>, params: Value, start: QueryStart) -> RowStream {
        let n = params["n"].as_u64().unwrap_or(0);
        let names: Vec<String> = match params["columns"].as_array() {
            Some(names) => names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            None => ["id", "name", "score", "note"].map(str::to_owned).to_vec(),
        };
        let columns = match JsonColumns::new(&names) {
            Ok(columns) => Arc::new(columns),
            Err(error) => return Box::pin(futures_util::stream::iter([Err(error)])),
        };
        start.started_with_count(params["claim"].as_u64().unwrap_or(n));
        let batches = (0..n)
            .step_by(usize::try_from(BATCH).unwrap_or(1))
            .map(move |first| {
                let mut out = JsonRowWriter::new(Arc::clone(&columns), 100);
                for i in first..n.min(first + BATCH) {
                    write_row(&mut out, i)?;
                }
                Ok(out.finish())
            });
        Box::pin(futures_util::stream::iter(batches))
    }
}

fn server(snapshot_max_bytes: u64) -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor("packed", Packed)
        .snapshot_max_bytes(snapshot_max_bytes)
        .without_sweeper()
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// An error and its sources, as one text.
fn chain(error: &(dyn Error + 'static)) -> String {
    Report::new(error).to_string()
}

#[tokio::test]
async fn json_rows_are_served_as_the_rows_they_encode() {
    let server = server(1 << 30);
    let created = common::created(&server, CreateResponse::new("packed", json!({"n": 2345}))).await;
    assert_eq!(created.total_count, 2345);
    let sample: Vec<Row> = (0..created.sample.len() as u64).map(expected).collect();
    assert_eq!(created.sample.to_vec(), sample);
    assert!(!sample.is_empty());
    let id = created.id;
    common::record_once(&server, id, |r| !r.is_running(), "running").await;

    let page = server
        .fetch_page(
            id,
            &Caller::anonymous(),
            &PageRequest {
                offset: Some(1_000),
                limit: Some(50),
                ..PageRequest::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("page: {e}"));
    assert_eq!(page.data, (1_000..1_050).map(expected).collect::<Vec<_>>());

    let all = common::export(&server, id, None, RowRange::ALL).await;
    assert_eq!(all, (0..2345).map(expected).collect::<Vec<_>>());
    let sorted = Sort {
        field: "score".to_owned(),
        order: SortOrder::Desc,
    };
    let top = common::export(
        &server,
        id,
        Some(sorted),
        RowRange {
            offset: 0,
            limit: Some(3),
        },
    )
    .await;
    assert_eq!(top, [2344, 2343, 2342].map(expected).to_vec());
}

#[tokio::test]
async fn a_count_the_rows_do_not_match_fails_the_resource() {
    let server = server(1 << 30);
    let request = CreateResponse::new("packed", json!({"n": 250, "claim": 200}));
    match server.create_response(request).await {
        Err(error) => {
            assert_eq!(error.code(), ServerErrorCode::QueryExecutionFailed);
            assert!(chain(&error).contains("counted 200 rows"), "{}", chain(&error));
        }
        Ok(created) => {
            let record = common::record_once(&server, created.id, |r| !r.is_running(), "running").await;
            assert_eq!(
                record.status,
                ResourceStatus::Failed,
                "a miscounted result is never served"
            );
        }
    }
}

#[tokio::test]
async fn json_rows_past_the_snapshot_cap_stop_the_snapshot() {
    // 20 KB of snapshot is passed within the first few batches: the resource would be served live,
    // which this executor cannot do, and says so — to the tool call when the cap came before its
    // answer, else in the resource's failure.
    let server = server(20_000);
    match server
        .create_response(CreateResponse::new("packed", json!({"n": 2345})))
        .await
    {
        Err(error) => {
            assert_eq!(error.code(), ServerErrorCode::QueryExecutionFailed);
            assert!(chain(&error).contains("no live paging"), "{}", chain(&error));
        }
        Ok(created) => {
            let record = common::record_once(&server, created.id, |r| !r.is_running(), "running").await;
            assert_eq!(record.status, ResourceStatus::Failed, "never served short");
            let failure = record.failure.map(|f| f.message).unwrap_or_default();
            assert!(failure.contains("no live paging"), "{failure}");
        }
    }
}

#[tokio::test]
async fn two_columns_of_one_name_are_refused_with_a_message_for_the_model() {
    let server = server(1 << 30);
    let request = CreateResponse::new("packed", json!({"n": 5, "columns": ["id", "name", "id", "note"]}));
    let error = server
        .create_response(request)
        .await
        .expect_err("duplicate column names");
    assert_eq!(error.code(), ServerErrorCode::QueryExecutionFailed);
    let text = chain(&error);
    assert!(text.contains("two columns named `id`"), "{text}");
}
