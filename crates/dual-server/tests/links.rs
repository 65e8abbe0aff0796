//! Capability links: minted only for a caller who may see the resource, verified by their HMAC and
//! expiry alone, and granting reads of that one resource and nothing more.

mod common;

use std::sync::Arc;
use std::time::Duration;

use dual_core::{ResourceId, Sort, SortOrder, range::RowRange};
use dual_server::links::{LinkKeyError, Links};
use dual_server::{
    Caller, CreateResponse, DEFAULT_LINK_LIFETIME, DualResponseServer, LinkFormat, LinkKey, ServerBuildError,
    ServerErrorCode,
};
use dual_store::Clock;
use serde_json::json;
use time::OffsetDateTime;

const BASE: &str = "http://localhost:8080/api/resources";

/// A column whose name needs percent-encoding in a link's `sort`.
const AWKWARD: &str = "first name&x%:é";

/// Row `i`: an `id` and the [`AWKWARD`] column.
fn awkward_row(i: u64) -> dual_core::Row {
    match json!({"id": i, AWKWARD: format!("n{i}")}) {
        serde_json::Value::Object(map) => map,
        _ => dual_core::Row::default(),
    }
}

fn builder() -> dual_server::DualResponseServerBuilder {
    DualResponseServer::builder()
        .base_url(BASE)
        .shared_executor(
            "institutions",
            Arc::new(dual_testkit::executor::Numbers::new().row(awkward_row)),
        )
        .clock(Clock::tokio())
}

async fn server_with(key: LinkKey) -> DualResponseServer {
    builder().link_key(key).build().expect("server")
}

fn key(byte: u8) -> LinkKey {
    LinkKey::from_bytes(&[byte; 32]).expect("key")
}

async fn owned(server: &DualResponseServer, owner: &str) -> ResourceId {
    let create = CreateResponse::new("institutions", json!({"n": 30})).owner(owner);
    server.create_response(create).await.expect("created").id
}

/// The `expires` and `token` of a link's URL.
fn expires_and_token(url: &str) -> (u64, String) {
    let query = url.split_once('?').expect("a query").1;
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
            .expect(name)
            .to_owned()
    };
    (param("expires").parse().expect("expires"), param("token"))
}

/// The `expires` and `token` of a view link `alice` mints for `id`.
async fn alices_view_link(server: &DualResponseServer, id: ResourceId) -> (u64, String) {
    let link = server
        .view_link(id, &Caller::owner("alice"))
        .await
        .expect("minted");
    expires_and_token(&link.url)
}

fn now(server: &DualResponseServer) -> OffsetDateTime {
    server.clock().now()
}

#[tokio::test(start_paused = true)]
async fn a_data_link_round_trips_and_any_change_breaks_it() {
    let server = server_with(key(1)).await;
    let id = owned(&server, "alice").await;
    let alice = Caller::owner("alice");
    let sort = Sort::new(AWKWARD, SortOrder::Desc);
    let range = RowRange::new(5, Some(10));
    let link = server
        .download_link(id, &alice, LinkFormat::Csv, range, Some(sort.clone()))
        .await
        .expect("minted");
    let (expires, token) = expires_and_token(&link.url);
    assert_eq!(
        link.url,
        format!(
            "{BASE}/{id}/data?format=csv&offset=5&limit=10&sort=first%20name%26x%25%3A%C3%A9:desc&expires={expires}&token={token}"
        )
    );
    assert_eq!(
        link.expires_at.unix_timestamp(),
        i64::try_from(expires).expect("i64")
    );
    let lifetime = link.expires_at - now(&server);
    assert!(
        lifetime >= DEFAULT_LINK_LIFETIME && lifetime < DEFAULT_LINK_LIFETIME + Duration::from_secs(1),
        "{lifetime}"
    );

    let links = server.links();
    let at = now(&server);
    let verify = |id, format, range, sort: Option<&Sort>, expires, token: &str| {
        links.verify_data(id, format, range, sort, expires, token, at)
    };
    let grant = verify(id, LinkFormat::Csv, range, Some(&sort), expires, &token).expect("valid");
    assert_eq!(grant.granted(), Some(id));
    assert!(grant.is_grant());
    assert_eq!(grant.owner_name(), None, "quotas count a grant as anonymous");

    let asc = Sort::new(AWKWARD, SortOrder::Asc);
    let other = Sort::new("name", SortOrder::Desc);
    let mut tampered = token.clone().into_bytes();
    tampered[0] = if tampered[0] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ascii");
    for (what, forged) in [
        (
            "id",
            verify(
                ResourceId::new(),
                LinkFormat::Csv,
                range,
                Some(&sort),
                expires,
                &token,
            ),
        ),
        (
            "format",
            verify(id, LinkFormat::Ndjson, range, Some(&sort), expires, &token),
        ),
        (
            "offset",
            verify(
                id,
                LinkFormat::Csv,
                RowRange::new(0, Some(10)),
                Some(&sort),
                expires,
                &token,
            ),
        ),
        (
            "limit",
            verify(
                id,
                LinkFormat::Csv,
                RowRange::new(5, None),
                Some(&sort),
                expires,
                &token,
            ),
        ),
        (
            "sort order",
            verify(id, LinkFormat::Csv, range, Some(&asc), expires, &token),
        ),
        (
            "sort field",
            verify(id, LinkFormat::Csv, range, Some(&other), expires, &token),
        ),
        (
            "no sort",
            verify(id, LinkFormat::Csv, range, None, expires, &token),
        ),
        (
            "expires",
            verify(id, LinkFormat::Csv, range, Some(&sort), expires + 3600, &token),
        ),
        (
            "token",
            verify(id, LinkFormat::Csv, range, Some(&sort), expires, &tampered),
        ),
        (
            "empty token",
            verify(id, LinkFormat::Csv, range, Some(&sort), expires, ""),
        ),
        ("read scope", links.verify_read(id, expires, &token, at)),
    ] {
        assert_eq!(forged, None, "a changed {what} must not verify");
    }
}

#[tokio::test(start_paused = true)]
async fn a_view_link_is_a_read_grant_and_not_a_data_one() {
    let server = server_with(key(1)).await;
    let id = owned(&server, "alice").await;
    let link = server
        .view_link(id, &Caller::owner("alice"))
        .await
        .expect("minted");
    let (expires, token) = expires_and_token(&link.url);
    assert_eq!(
        link.url,
        format!("{BASE}/{id}/view?expires={expires}&token={token}")
    );
    let links = server.links();
    let at = now(&server);
    assert_eq!(
        links
            .verify_read(id, expires, &token, at)
            .and_then(|c| c.granted()),
        Some(id)
    );
    assert_eq!(links.verify_read(ResourceId::new(), expires, &token, at), None);
    assert_eq!(
        links.verify_data(id, LinkFormat::Json, RowRange::ALL, None, expires, &token, at),
        None,
        "a read token is not a data token"
    );
}

#[tokio::test(start_paused = true)]
async fn a_link_expires_with_the_servers_clock() {
    let server = builder()
        .link_key(key(1))
        .link_lifetime(Duration::from_secs(60))
        .build()
        .expect("server");
    let id = owned(&server, "alice").await;
    let (expires, token) = alices_view_link(&server, id).await;
    let links = server.links();
    assert!(links.verify_read(id, expires, &token, now(&server)).is_some());
    // The expiry is rounded up to the second: the link lives at least its 60 s, at most 61.
    tokio::time::advance(Duration::from_secs(59)).await;
    assert!(links.verify_read(id, expires, &token, now(&server)).is_some());
    tokio::time::advance(Duration::from_secs(2)).await;
    assert_eq!(
        links.verify_read(id, expires, &token, now(&server)),
        None,
        "expired"
    );
    assert_eq!(links.verify_read(id, u64::MAX, &token, now(&server)), None);
}

#[tokio::test(start_paused = true)]
async fn only_a_caller_who_sees_the_resource_mints_a_link() {
    let server = server_with(key(1)).await;
    let id = owned(&server, "alice").await;
    for stranger in [Caller::owner("bob"), Caller::anonymous()] {
        for result in [
            server.view_link(id, &stranger).await,
            server
                .download_link(id, &stranger, LinkFormat::Csv, RowRange::ALL, None)
                .await,
        ] {
            assert_eq!(
                common::error_code(result, "minted for a stranger"),
                ServerErrorCode::ResourceNotFound
            );
        }
    }
    let unknown = server.view_link(ResourceId::new(), &Caller::owner("alice")).await;
    assert_eq!(
        common::error_code(unknown, "unknown id"),
        ServerErrorCode::ResourceNotFound
    );
}

#[tokio::test(start_paused = true)]
async fn a_grant_reads_its_resource_only_and_cannot_pin_delete_or_mint() {
    let server = server_with(key(1)).await;
    let id = owned(&server, "alice").await;
    let neighbour = owned(&server, "alice").await;
    let public = server
        .create_response(CreateResponse::new("institutions", json!({"n": 3})))
        .await
        .expect("created")
        .id;
    let (expires, token) = alices_view_link(&server, id).await;
    let grant = server
        .links()
        .verify_read(id, expires, &token, now(&server))
        .expect("valid");

    let record = server.get_resource(id, &grant).await.expect("readable");
    assert_eq!(record.id, id);
    let page = server
        .fetch_page(id, &grant, &dual_core::PageRequest::default())
        .await
        .expect("a page");
    assert_eq!(page.total_count, 30);
    drop(server.stream_rows(id, &grant, None).await.expect("an export"));

    let not_found = |code, what: &str| assert_eq!(code, ServerErrorCode::ResourceNotFound, "{what}");
    for other in [neighbour, public] {
        let seen = server.get_resource(other, &grant).await;
        not_found(common::error_code(seen, "another id"), "another id");
    }
    let pin = server.pin_resource(id, &grant).await;
    not_found(common::error_code(pin, "pinned by a grant"), "pin");
    let delete = server.delete_resource(id, &grant).await;
    not_found(common::error_code(delete, "deleted by a grant"), "delete");
    let mint = server.view_link(id, &grant).await;
    not_found(common::error_code(mint, "minted by a grant"), "mint");

    let record = server
        .get_resource(id, &Caller::owner("alice"))
        .await
        .expect("still there");
    assert!(record.expires_at.is_some(), "not pinned");
}

#[tokio::test(start_paused = true)]
async fn a_new_key_revokes_the_old_links_and_a_shared_key_verifies_everywhere() {
    let first = server_with(key(1)).await;
    let id = owned(&first, "alice").await;
    let (expires, token) = alices_view_link(&first, id).await;
    let at = now(&first);

    let same_key = server_with(key(1)).await;
    assert!(same_key.links().verify_read(id, expires, &token, at).is_some());
    let rotated = server_with(key(2)).await;
    assert_eq!(rotated.links().verify_read(id, expires, &token, at), None);
    let random = builder().build().expect("server");
    assert_eq!(random.links().verify_read(id, expires, &token, at), None);
}

#[tokio::test(start_paused = true)]
async fn a_link_never_outlives_the_verifying_servers_lifetime() {
    // One key, two lifetimes: a link minted for a day does not verify where links live 10 minutes
    // (nor after a deployment lowers the lifetime), while one of 10 minutes verifies on both.
    let long = builder()
        .link_key(key(1))
        .link_lifetime(Duration::from_secs(24 * 3600))
        .build()
        .expect("server");
    let short = server_with(key(1)).await;
    let id = owned(&long, "alice").await;
    let alice = Caller::owner("alice");
    let (expires, token) = expires_and_token(&long.view_link(id, &alice).await.expect("minted").url);
    let at = now(&long);
    assert!(long.links().verify_read(id, expires, &token, at).is_some());
    assert_eq!(short.links().verify_read(id, expires, &token, at), None);

    // Verifying is pure: the resource need not be in the verifying server's store.
    let id = owned(&short, "alice").await;
    let (expires, token) = expires_and_token(&short.view_link(id, &alice).await.expect("minted").url);
    assert!(short.links().verify_read(id, expires, &token, at).is_some());
    assert!(long.links().verify_read(id, expires, &token, at).is_some());
}

#[tokio::test(start_paused = true)]
async fn a_data_link_is_refused_when_its_export_would_be() {
    let server = server_with(key(1)).await;
    let id = owned(&server, "alice").await;
    let alice = Caller::owner("alice");
    for (range, sort, what) in [
        (RowRange::new(31, None), None, "an offset past the 30 rows"),
        (RowRange::new(0, Some(0)), None, "an empty limit"),
        (
            RowRange::ALL,
            Some(Sort::new("nope", SortOrder::Asc)),
            "a sort on no column",
        ),
    ] {
        let minted = server
            .download_link(id, &alice, LinkFormat::Csv, range, sort)
            .await;
        assert_eq!(
            common::error_code(minted, what),
            ServerErrorCode::InvalidRequest,
            "{what}"
        );
    }
}

#[tokio::test]
async fn a_shared_store_without_a_link_key_is_warned_about() {
    use dual_server::dual_spool::{MemorySpool, Spool};
    let shared = || async {
        let spool = MemorySpool::builder().build().await.expect("spool");
        builder()
            .shared_store(Arc::new(
                dual_testkit::BreakableStore::new("x").pretending_shared(),
            ))
            .spool(Spool::new(dual_testkit::InProcessShared(spool)))
    };
    let warning = "no link_key was set";

    let (logs, guard) = dual_testkit::logs::Logs::capture();
    shared().await.build().expect("server");
    drop(guard);
    assert!(logs.text().contains(warning), "{}", logs.text());

    for builder in [shared().await.link_key(key(1)), builder()] {
        let (logs, guard) = dual_testkit::logs::Logs::capture();
        builder.build().expect("server");
        drop(guard);
        assert!(!logs.text().contains(warning), "{}", logs.text());
    }
}

#[test]
fn keys_are_at_least_32_bytes_and_never_printed() {
    assert_eq!(
        LinkKey::from_bytes(&[9; 31]).err(),
        Some(LinkKeyError::TooShort { len: 31 })
    );
    assert!(LinkKey::from_bytes(&[9; 64]).is_ok());
    let random = LinkKey::random();
    assert_eq!(format!("{random:?}"), "LinkKey(<redacted>)");
    let printed = format!("{:?}", builder().link_key(key(0xAB)));
    // The key's bytes (171 each) never appear; a lone "171" may (the clock's nanoseconds).
    assert!(!printed.contains("171, 171"), "{printed}");
    assert!(!printed.to_ascii_lowercase().contains("abab"), "{printed}");
    assert!(printed.contains("LinkKey(<redacted>)"), "{printed}");
}

#[tokio::test]
async fn the_link_lifetime_is_positive_and_at_most_a_day() {
    for (lifetime, ok) in [
        (Duration::ZERO, false),
        (Duration::from_secs(1), true),
        (Duration::from_secs(24 * 3600), true),
        (Duration::from_secs(24 * 3600 + 1), false),
    ] {
        match builder().link_lifetime(lifetime).build() {
            Ok(server) => {
                assert!(ok, "{lifetime:?} accepted");
                assert_eq!(server.config().link_lifetime, lifetime);
                assert_eq!(server.links().lifetime(), lifetime);
            }
            Err(ServerBuildError::InvalidOption { option, .. }) => {
                assert!(!ok, "{lifetime:?} refused");
                assert_eq!(option, "link_lifetime");
            }
            Err(other) => panic!("{other}"),
        }
    }
}

#[test]
fn formats_parse_and_print() {
    for format in LinkFormat::ALL {
        assert_eq!(format.as_str().parse::<LinkFormat>(), Ok(format));
        assert_eq!(format.to_string(), format.as_str());
    }
    assert!("CSV".parse::<LinkFormat>().is_err());
    let _: fn(&Links) -> Duration = Links::lifetime;
}
