//! Cases: `list` answers one owner's live records, newest first, page by page.

use dual_core::ResourceId;
use time::Duration;

use super::support::{OrPanic, base_now, record};
use dual_store::{ListPage, ResourceStore};

/// `list` answers exactly the live records of one owner (`None`: those created without one), by
/// id descending, `limit` at a time, continuing below the `before` id; expired, deleted and other
/// owners' records never appear, and an owner that is a prefix of another, or an empty owner, is
/// no other owner.
pub async fn list_pages_one_owners_live_records(store: &dyn ResourceStore) {
    let now = base_now();
    let expires = Some(now + Duration::minutes(15));
    let owners = [
        None,
        Some("tenant-a"),
        Some("tenant-a2"),
        Some(""),
        Some("名前 =x"),
    ];
    let mut mine = Vec::new();
    for (i, owner) in owners.iter().cycle().take(5 * 7).enumerate() {
        let mut saved = record(&format!("r{i}"), now, if i % 3 == 0 { None } else { expires });
        saved.owner = owner.map(str::to_owned);
        store.save(&saved).await.or_panic("save");
        if *owner == Some("tenant-a") {
            mine.push(saved.id);
        }
    }
    // One of tenant-a's records expires, one is deleted: neither is listed.
    let mut expiring = record("expiring", now, Some(now + Duration::seconds(30)));
    expiring.owner = Some("tenant-a".to_owned());
    store.save(&expiring).await.or_panic("save");
    let deleted = mine.pop().unwrap_or_else(ResourceId::new);
    store.delete(deleted).await.or_panic("delete");
    mine.sort();
    mine.reverse();

    // Before its expiry the expiring record is listed with the others (checked first: a store may
    // forget the listing entry of a record expired at the `now` of a listing).
    let before_expiry = store
        .list(ListPage::new(Some("tenant-a"), 100), now + Duration::seconds(29))
        .await
        .or_panic("list");
    assert_eq!(before_expiry.len(), mine.len() + 1);
    assert!(before_expiry.iter().any(|found| found.id == expiring.id));
    let later = now + Duration::minutes(1);
    let mut listed = Vec::new();
    let mut before = None;
    loop {
        let page = store
            .list(ListPage::new(Some("tenant-a"), 2).below(before), later)
            .await
            .or_panic("list");
        assert!(page.len() <= 2, "a page of {} records for limit 2", page.len());
        for found in &page {
            assert_eq!(found.owner.as_deref(), Some("tenant-a"), "{found:?}");
        }
        listed.extend(page.iter().map(|found| found.id));
        match page.last() {
            Some(last) if page.len() == 2 => before = Some(last.id),
            _ => break,
        }
    }
    assert_eq!(listed, mine, "tenant-a's live records, newest first");

    let unowned = store.list(ListPage::new(None, 100), later).await.or_panic("list");
    assert_eq!(unowned.len(), 7, "the records created without an owner");
    assert!(unowned.iter().all(|found| found.owner.is_none()));
    assert!(
        unowned.windows(2).all(|pair| pair[0].id > pair[1].id),
        "newest first"
    );
    let empty_owner = store
        .list(ListPage::new(Some(""), 100), later)
        .await
        .or_panic("list");
    assert_eq!(empty_owner.len(), 7, "the empty owner is an owner of its own");
    for nobody in ["tenant", "tenant-b", "名前"] {
        let none = store
            .list(ListPage::new(Some(nobody), 100), later)
            .await
            .or_panic("list");
        assert!(none.is_empty(), "{nobody:?} owns nothing, got {none:?}");
    }
    assert!(!listed.contains(&expiring.id) && !listed.contains(&deleted));
    assert!(
        store
            .list(ListPage::new(Some("tenant-a"), 0), later)
            .await
            .or_panic("list")
            .is_empty()
    );
}
