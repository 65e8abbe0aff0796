//! The server alone authorizes: every operation on a resource checks the caller against the record's
//! owner in one place, and a mismatch is exactly an unknown id.

mod common;

use dual_core::{PageRequest, ResourceId};
use dual_server::{Caller, CreateResponse, DualResponseServer, ServerError, ServerErrorCode};
use serde_json::json;

async fn server() -> DualResponseServer {
    DualResponseServer::builder()
        .base_url("http://localhost/resources")
        .shared_executor("institutions", common::shared())
        .build()
        .expect("server")
}

/// Runs every operation on a resource as `caller`, returning each outcome's code (`None` on success).
async fn outcomes(
    server: &DualResponseServer,
    id: ResourceId,
    caller: &Caller,
) -> Vec<(&'static str, Option<ServerErrorCode>)> {
    let code = |r: Result<(), ServerError>| r.err().map(|e| e.code());
    vec![
        ("get", code(server.get_resource(id, caller).await.map(|_| ()))),
        ("metadata", code(server.metadata(id, caller).await.map(|_| ()))),
        (
            "page",
            code(
                server
                    .fetch_page(id, caller, &PageRequest::default())
                    .await
                    .map(|_| ()),
            ),
        ),
        (
            "export",
            code(server.stream_rows(id, caller, None).await.map(|_| ())),
        ),
        ("pin", code(server.pin_resource(id, caller).await.map(|_| ()))),
        ("delete", code(server.delete_resource(id, caller).await)),
    ]
}

#[tokio::test]
async fn only_the_owner_sees_an_owned_resource_and_others_see_an_unknown_id() {
    let server = server().await;
    let owned = |owner: &str| CreateResponse::new("institutions", json!({"n": 30})).owner(owner);
    let unknown = outcomes(&server, ResourceId::new(), &Caller::owner("tenant-a")).await;
    assert!(
        unknown
            .iter()
            .all(|(_, code)| *code == Some(ServerErrorCode::ResourceNotFound)),
        "{unknown:?}"
    );

    for stranger in [
        Caller::owner("tenant-b"),
        Caller::anonymous(),
        Caller::owner("TENANT-A"),
    ] {
        let id = server
            .create_response(owned("tenant-a"))
            .await
            .expect("created")
            .id;
        let seen = outcomes(&server, id, &stranger).await;
        assert_eq!(
            seen, unknown,
            "{stranger:?} must see exactly what an unknown id gets"
        );
        let record = server
            .get_resource(id, &Caller::owner("tenant-a"))
            .await
            .expect("still there");
        assert_eq!(record.access_count, 0, "denied calls are not counted");
        assert!(record.expires_at.is_some(), "a stranger cannot pin");
    }

    let id = server
        .create_response(owned("tenant-a"))
        .await
        .expect("created")
        .id;
    let seen = outcomes(&server, id, &Caller::owner("tenant-a")).await;
    assert!(
        seen.iter().all(|(_, code)| code.is_none()),
        "the owner may do everything: {seen:?}"
    );
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn resources_without_an_owner_are_visible_to_every_caller() {
    let server = server().await;
    for caller in [Caller::anonymous(), Caller::owner("tenant-a")] {
        let id = server
            .create_response(CreateResponse::new("institutions", json!({"n": 3})))
            .await
            .expect("created")
            .id;
        let seen = outcomes(&server, id, &caller).await;
        assert!(
            seen.iter().all(|(_, code)| code.is_none()),
            "{caller:?}: {seen:?}"
        );
    }
    server.shutdown().await.expect("shutdown");
}
