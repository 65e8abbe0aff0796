//! The column profile the snapshot writer computes (docs/DESIGN.md §4, *The column profile*): in the
//! tool result when complete at the answer, the rows so far while the snapshot is written (here and
//! on another instance), none for a live result, and the answers of a page for failed, expired and
//! other owners' results.

mod common;

use std::sync::Arc;
use std::time::Duration;

use dual_core::mcp::ResponseProfile;
use dual_core::profile::Profile;
use dual_server::dual_spool::{MemorySpool, SegmentLimits, Spool};
use dual_server::{
    Caller, CreateResponse, DualResponseServer, DualResponseServerBuilder, QueryExecutor, QueryStart,
    RowStream, ServerErrorCode,
};
use dual_store::{MemoryStore, ResourceStore};
use dual_testkit::BreakableStore;
use dual_testkit::executor::{Numbers, row};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use common::error_code;

/// Rows per batch and per spool segment.
const BATCH: u64 = 10;

/// Announces `total` rows, yields the first `first` at once, then waits for the gate (or fails
/// there, with `fail`).
struct Gated {
    total: u64,
    first: u64,
    fail: bool,
    gate: Semaphore,
}

impl Gated {
    fn new(total: u64, first: u64, fail: bool) -> Arc<Self> {
        Arc::new(Self {
            total,
            first,
            fail,
            gate: Semaphore::new(0),
        })
    }
}

impl QueryExecutor for Gated {
    fn stream(self: Arc<Self>, _params: Value, start: QueryStart) -> RowStream {
        start.started_with_count(self.total);
        Box::pin(futures_util::stream::unfold(
            (self, 0u64),
            |(me, next)| async move {
                if next >= me.total {
                    return None;
                }
                if next == me.first {
                    me.gate.acquire().await.ok()?.forget();
                    if me.fail {
                        let failed = Err(dual_server::ExecutorError::new("disk on fire"));
                        return Some((failed, (me, u64::MAX)));
                    }
                }
                let until = if next < me.first { me.first } else { me.total };
                let end = (next + BATCH).min(until);
                Some((Ok((next..end).map(row).collect()), (me, end)))
            },
        ))
    }
}

fn spool() -> Spool {
    let backend = MemorySpool::new().unwrap_or_else(|e| panic!("{e}"));
    Spool::new(dual_testkit::InProcessShared(backend)).with_segment_limits(SegmentLimits {
        bytes: 1 << 20,
        rows: u32::try_from(BATCH).unwrap_or(u32::MAX),
    })
}

fn builder(spool: Spool) -> DualResponseServerBuilder {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .executor("numbers", Numbers::new())
        .spool(spool)
        .spool_wait(Duration::from_millis(300))
        .progress_interval(Duration::from_millis(50), Duration::from_millis(400))
}

fn server() -> DualResponseServer {
    builder(spool()).build().unwrap_or_else(|e| panic!("{e}"))
}

/// Two instances sharing a store and a spool, as behind a load balancer.
fn two_instances(gated: &Arc<Gated>) -> (DualResponseServer, DualResponseServer) {
    let store: Arc<dyn ResourceStore> = Arc::new(MemoryStore::new());
    let spool = spool();
    let instance = |spool: Spool| {
        builder(spool)
            .shared_executor("gated", Arc::clone(gated) as Arc<dyn QueryExecutor>)
            .store(BreakableStore::wrapping(Arc::clone(&store), "unused").pretending_shared())
            .build()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    (instance(spool.clone()), instance(spool))
}

async fn profile(server: &DualResponseServer, id: dual_core::ResourceId) -> Arc<Profile> {
    server
        .profile(id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("profile: {e}"))
}

/// Polls the profile every 20 ms until `done` holds (at most 5 s).
async fn profile_once(
    server: &DualResponseServer,
    id: dual_core::ResourceId,
    done: impl Fn(&Profile) -> bool,
    what: &str,
) -> Arc<Profile> {
    for _ in 0..250 {
        if let Ok(profile) = server.profile(id, &Caller::anonymous()).await
            && done(&profile)
        {
            return profile;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no profile {what} after 5 s");
}

#[tokio::test]
async fn a_result_written_before_the_answer_carries_its_whole_profile() {
    let server = server();
    let response = common::created(
        &server,
        CreateResponse::new("numbers", json!({"n": 50})).sample_size(5),
    )
    .await;
    let ResponseProfile::Here(carried) = &response.profile else {
        panic!("no profile carried: {:?}", response.profile);
    };
    assert!(carried.complete && carried.rows == 50, "{carried:?}");
    let names: Vec<&str> = carried.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "name", "enrollment", "public"]);
    let id = &carried.columns[0];
    assert_eq!((id.kind.as_str(), id.count, id.distinct), ("integer", 50, 50));
    assert_eq!(
        (id.min.clone(), id.max.clone()),
        (Some(json!(0)), Some(json!(49)))
    );
    let public = &carried.columns[3];
    assert_eq!(public.kind, "boolean");
    let top: Vec<(Value, u64)> = public.top.iter().map(|t| (t.value.clone(), t.count)).collect();
    assert_eq!(top, [(json!(false), 25), (json!(true), 25)]);

    // Served as the tool result carries it, and stored with the snapshot.
    assert_eq!(*profile(&server, response.id).await, **carried);

    // The tool result: structuredContent.profile, and a text block of one line per column.
    let result = serde_json::to_value(response.tool_result()).unwrap_or_default();
    assert_eq!(result["structuredContent"]["profile"]["rows"], 50);
    let texts: Vec<&str> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .collect();
    assert!(
        texts[0].contains("/profile"),
        "the summary names the profile: {}",
        texts[0]
    );
    let block = texts
        .iter()
        .find(|t| t.starts_with("Profile of all 50 rows"))
        .unwrap_or_else(|| panic!("{texts:?}"));
    assert_eq!(block.lines().count(), 5, "{block}");
    assert!(
        block
            .lines()
            .all(|line| line.len() <= dual_core::profile::TEXT_LINE_BYTES)
    );
    assert!(block.contains("enrollment integer: 50 distinct"), "{block}");
}

#[tokio::test]
async fn while_the_snapshot_is_written_the_profile_so_far_is_served_here_and_elsewhere() {
    let gated = Gated::new(100, 30, false);
    let (writer, reader) = two_instances(&gated);
    let response = common::created(&writer, CreateResponse::new("gated", json!({})).sample_size(5)).await;
    assert_eq!(
        response.profile,
        ResponseProfile::Later,
        "the rows are still being written"
    );
    let summary = response.summary_text();
    assert!(
        summary.contains(&format!("{}/profile", response.uri)),
        "{summary}"
    );
    let here = profile_once(&writer, response.id, |p| p.rows >= 10, "on the writer").await;
    assert!(!here.complete, "{here:?}");
    let elsewhere = profile_once(&reader, response.id, |p| p.rows >= 10, "on the other instance").await;
    assert!(!elsewhere.complete && elsewhere.rows <= 30, "{elsewhere:?}");

    gated.gate.add_permits(1);
    for server in [&writer, &reader] {
        let done = profile_once(server, response.id, |p| p.complete, "complete").await;
        assert_eq!((done.rows, done.columns[0].count), (100, 100));
        assert_eq!(done.columns[0].max, Some(json!(99)));
    }
    // A wait for the result now carries the complete profile.
    let record = writer
        .get_resource(response.id, &Caller::anonymous())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let later = writer.response_of(record).await;
    assert!(
        matches!(&later.profile, ResponseProfile::Here(p) if p.complete && p.rows == 100),
        "{:?}",
        later.profile
    );
}

#[tokio::test]
async fn a_live_result_has_no_profile_and_says_so() {
    let server = builder(spool())
        .snapshot_max_bytes(64)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let response = common::created(&server, CreateResponse::new("numbers", json!({"n": 50}))).await;
    assert_eq!(response.profile, ResponseProfile::None);
    assert!(!response.summary_text().contains("/profile"));
    let error = server
        .profile(response.id, &Caller::anonymous())
        .await
        .map(|_| ())
        .expect_err("live");
    assert_eq!(error.code(), ServerErrorCode::NoProfile);
    assert!(error.to_string().contains("live"), "{error}");
}

#[tokio::test]
async fn without_profiles_there_is_none_and_the_result_says_nothing_of_one() {
    let server = builder(spool())
        .column_profile(false)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let response = common::created(&server, CreateResponse::new("numbers", json!({"n": 5}))).await;
    assert_eq!(response.profile, ResponseProfile::None);
    let code = error_code(server.profile(response.id, &Caller::anonymous()).await, "off");
    assert_eq!(code, ServerErrorCode::NoProfile);
}

#[tokio::test]
async fn failed_expired_and_other_owners_profiles_answer_as_their_pages_would() {
    let gated = Gated::new(100, 20, true);
    let (writer, _) = two_instances(&gated);
    let response = common::created(&writer, CreateResponse::new("gated", json!({}))).await;
    gated.gate.add_permits(1);
    common::record_once(
        &writer,
        response.id,
        |r| r.status == dual_core::status::ResourceStatus::Failed,
        "running",
    )
    .await;
    let code = error_code(writer.profile(response.id, &Caller::anonymous()).await, "failed");
    assert_eq!(code, ServerErrorCode::ResourceFailed);

    let server = server();
    let owned = common::created(
        &server,
        CreateResponse::new("numbers", json!({"n": 5})).owner("alice"),
    )
    .await;
    let alice = server.profile(owned.id, &Caller::owner("alice")).await;
    assert!(alice.is_ok(), "{alice:?}");
    for stranger in [Caller::owner("mallory"), Caller::anonymous()] {
        let code = error_code(server.profile(owned.id, &stranger).await, "another owner");
        assert_eq!(code, ServerErrorCode::ResourceNotFound);
    }

    let brief = common::created(
        &server,
        CreateResponse::new("numbers", json!({"n": 5})).expiration(Duration::from_millis(50)),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(120)).await;
    let code = error_code(server.profile(brief.id, &Caller::anonymous()).await, "expired");
    assert!(
        matches!(
            code,
            ServerErrorCode::ResourceExpired | ServerErrorCode::ResourceNotFound
        ),
        "{code}"
    );
}

#[tokio::test]
async fn sample_rows_give_way_before_the_profile_and_the_cap_always_holds() {
    let full = common::created(
        &server(),
        CreateResponse::new("numbers", json!({"n": 200})).sample_size(100),
    )
    .await;
    let all_rows = full.max_rendered_bytes();
    let bare = dual_core::DualResponse {
        sample: Vec::new().into(),
        ..full.clone()
    };
    let profile_only = bare.max_rendered_bytes();
    assert!(profile_only < all_rows, "{profile_only} {all_rows}");
    // Room for the profile and a few rows: the rows give way, the profile stays.
    let cap = profile_only + 600;
    let server = builder(spool())
        .max_sample_bytes(cap)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let fitted = common::created(
        &server,
        CreateResponse::new("numbers", json!({"n": 200})).sample_size(100),
    )
    .await;
    assert!(matches!(fitted.profile, ResponseProfile::Here(_)));
    assert!(
        !fitted.sample.is_empty() && fitted.sample.len() < 100,
        "{} rows",
        fitted.sample.len()
    );
    assert!(fitted.max_rendered_bytes() <= cap);
    // No room for the profile: it is left for resources/read, and the rows fill the cap.
    let cap = profile_only - 200;
    let server = builder(spool())
        .max_sample_bytes(cap)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let fitted = common::created(
        &server,
        CreateResponse::new("numbers", json!({"n": 200})).sample_size(100),
    )
    .await;
    assert_eq!(fitted.profile, ResponseProfile::Later);
    assert!(!fitted.sample.is_empty());
    assert!(fitted.max_rendered_bytes() <= cap);
}
