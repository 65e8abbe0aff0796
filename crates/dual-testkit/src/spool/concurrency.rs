//! Many readers and writers at once.

use std::sync::Arc;

use dual_core::ResourceId;

use super::support::{expected, read, sample_rows, small, write};
use dual_spool::Spool;

/// Tasks that read at once.
const TASKS: usize = 16;

/// Readers of one snapshot at once, each with pages and a cursor, all see the same rows.
pub async fn concurrent_readers(spool: Spool) {
    let spool = small(&spool);
    let id = ResourceId::new();
    let rows = Arc::new(sample_rows(60));
    write(&spool, id, &rows).await;
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (spool, rows) = (spool.clone(), Arc::clone(&rows));
            tokio::spawn(async move {
                for step in 0..6_u64 {
                    let offset = (task as u64 * 7 + step * 11) % 64;
                    let limit = (task + step as usize) % 13 + 1;
                    assert_eq!(
                        read(&spool, id, offset, limit).await,
                        expected(&rows, offset, limit)
                    );
                }
                let mut cursor = spool.cursor(id, task as u64, None).await.expect("cursor");
                let mut got = Vec::new();
                while let Some(run) = cursor.next().await.expect("next") {
                    got.extend(run.iter().map(|r| r.to_vec()));
                }
                assert_eq!(got, expected(&rows, task as u64, usize::MAX));
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("reader task");
    }
}

/// Writers of different snapshots at once do not mix their segments.
pub async fn concurrent_writers(spool: Spool) {
    let spool = small(&spool);
    let tasks: Vec<_> = (0..TASKS / 2)
        .map(|task| {
            let spool = spool.clone();
            tokio::spawn(async move {
                let id = ResourceId::new();
                let rows: Vec<Vec<u8>> = sample_rows(20 + task)
                    .into_iter()
                    .map(|mut row| {
                        row.extend(format!(" writer {task}").bytes());
                        row
                    })
                    .collect();
                write(&spool, id, &rows).await;
                (id, rows)
            })
        })
        .collect();
    for task in tasks {
        let (id, rows) = task.await.expect("writer task");
        assert_eq!(read(&spool, id, 0, 1000).await, rows);
    }
}
