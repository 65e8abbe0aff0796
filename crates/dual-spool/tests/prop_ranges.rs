//! Property: any range read, as a page or through a cursor, equals the same range of a `Vec` of the
//! rows, whatever the rows, the segment limits and the memory budget.

use dual_core::ResourceId;
use dual_spool::{MemorySpool, SegmentLimits, Spool};
use proptest::prelude::*;

fn rows() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..60)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn range_reads_match_the_model(
        rows in rows(),
        bytes in 1_usize..300,
        max_rows in 1_u32..10,
        budget in prop_oneof![Just(0_u64), Just(600), Just(1 << 20)],
        reads in prop::collection::vec((0_u64..70, 0_usize..70), 1..12),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        runtime.block_on(async {
            let backend = MemorySpool::builder().memory_budget(budget).build().await.expect("spool");
            let spool = Spool::new(backend).with_segment_limits(SegmentLimits { bytes, rows: max_rows });
            let id = ResourceId::new();
            let mut writer = spool.writer(id).await.expect("writer");
            for row in &rows {
                writer.append(row).await.expect("append");
            }
            let manifest = writer.finish().await.expect("finish");
            prop_assert_eq!(manifest.rows(), rows.len() as u64);
            for (offset, limit) in reads {
                let start = (offset as usize).min(rows.len());
                let want = &rows[start..start.saturating_add(limit).min(rows.len())];
                let page: Vec<Vec<u8>> =
                    spool.read_rows(id, offset, limit).await.expect("read").iter().map(|r| r.to_vec()).collect();
                prop_assert_eq!(&page, want);
                let mut cursor = spool.cursor(id, offset, Some(limit as u64)).await.expect("cursor");
                let mut streamed = Vec::new();
                while let Some(run) = cursor.next().await.expect("next") {
                    streamed.extend(run.iter().map(|r| r.to_vec()));
                }
                prop_assert_eq!(&streamed, want);
            }
            spool.close().await.expect("close");
            Ok(())
        })?;
    }
}
