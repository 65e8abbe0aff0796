//! Cases: `record_access` counts only for a viewer that may see the record.

use dual_core::{ResourceId, ResourceRecord};
use time::Duration;

use super::support::{OrPanic, base_now, counted, get_found, record, with_micros};
use dual_store::{Access, ResourceStore, Viewer};

/// `record_access` checks who is reading in the same step as the count: an owned record counts for
/// its owner and for a grant of its id, and answers [`Access::NotVisible`] (changing nothing) for
/// another owner, an anonymous viewer and a grant of another id; a record without an owner counts
/// for every viewer but a grant of another id. Owners are compared exactly (an owner named `-`, or
/// one that is a prefix of another, is no other owner).
pub async fn record_access_checks_the_viewer(store: &dyn ResourceStore) {
    let now = base_now();
    let expires = Some(now + Duration::minutes(15));
    let other = ResourceId::new();
    for owner in ["tenant-a", "-", "", "名前 =x"] {
        let mut owned = record("owned", now, expires);
        owned.owner = Some(owner.to_owned());
        store.save(&owned).await.or_panic("save");
        let strangers = [
            Viewer::Anonymous,
            Viewer::Owner("tenant-b"),
            Viewer::Owner("tenant-a2"),
            Viewer::Owner("-x"),
            Viewer::Grant(other),
        ];
        let mut want = owned.clone();
        let whose = format!("a record owned by {owner:?}");
        counts_each(
            store,
            &mut want,
            [Viewer::Owner(owner), Viewer::Grant(owned.id)],
            125,
            &whose,
        )
        .await;
        for viewer in strangers {
            if viewer == Viewer::Owner(owner) {
                continue;
            }
            let access = store
                .record_access(owned.id, viewer, now + Duration::minutes(1))
                .await
                .or_panic("record_access");
            assert_eq!(
                access,
                Access::NotVisible,
                "{viewer:?} may not see a record owned by {owner:?}"
            );
        }
        let stored = get_found(store, owned.id, now, "owned record").await;
        assert_eq!(
            stored, want,
            "viewers that may not see a record owned by {owner:?} change nothing in it"
        );
    }

    let unowned = record("unowned", now, expires);
    store.save(&unowned).await.or_panic("save");
    let mut want = unowned.clone();
    let viewers = [
        Viewer::Anonymous,
        Viewer::Owner("tenant-a"),
        Viewer::Grant(unowned.id),
    ];
    counts_each(store, &mut want, viewers, 500, "a record without owner").await;
    let access = store
        .record_access(unowned.id, Viewer::Grant(other), now + Duration::minutes(1))
        .await
        .or_panic("record_access");
    assert_eq!(
        access,
        Access::NotVisible,
        "a grant of another id may not see a record without owner"
    );
    assert_eq!(
        get_found(store, unowned.id, now, "unowned record").await,
        want,
        "a grant of another id changes nothing"
    );
}

/// Counts an access of `want` by each of `viewers` in turn, one second apart (at `micros` µs past
/// the second), and checks that each answers the record with its count and time moved on.
async fn counts_each<const N: usize>(
    store: &dyn ResourceStore,
    want: &mut ResourceRecord,
    viewers: [Viewer<'_>; N],
    micros: u32,
    whose: &str,
) {
    let start = want.created_at;
    for (step, viewer) in viewers.into_iter().enumerate() {
        let when = with_micros(start + Duration::seconds(step as i64 + 1), micros);
        let access = store
            .record_access(want.id, viewer, when)
            .await
            .or_panic("record_access");
        want.access_count += 1;
        want.last_accessed_at = Some(when);
        assert_eq!(
            counted(access, &format!("{viewer:?} of {whose}")),
            *want,
            "{viewer:?} counts on {whose}"
        );
    }
}

/// An expired record answers [`Access::Expired`] and an unknown id [`Access::Missing`] to every
/// viewer, and neither is changed or created.
pub async fn record_access_expired_and_unknown(store: &dyn ResourceStore) {
    let now = base_now();
    let expires_at = now + Duration::minutes(5);
    let mut owned = record("expiring", now, Some(expires_at));
    owned.owner = Some("tenant-a".to_owned());
    store.save(&owned).await.or_panic("save");
    let unknown = ResourceId::new();
    for viewer in [
        Viewer::Owner("tenant-a"),
        Viewer::Owner("tenant-b"),
        Viewer::Anonymous,
        Viewer::Grant(owned.id),
        Viewer::Grant(unknown),
    ] {
        let access = store
            .record_access(owned.id, viewer, expires_at)
            .await
            .or_panic("record_access");
        assert_eq!(access, Access::Expired, "{viewer:?} of an expired record");
        let access = store
            .record_access(unknown, viewer, now)
            .await
            .or_panic("record_access");
        assert_eq!(access, Access::Missing, "{viewer:?} of an unknown id");
    }
    assert_eq!(
        get_found(store, owned.id, now, "the record before it expired").await,
        owned,
        "record_access of an expired record changes nothing"
    );
    assert_eq!(
        store.get(unknown, now).await.or_panic("get"),
        dual_store::Lookup::Missing,
        "record_access of an unknown id creates nothing"
    );
}
