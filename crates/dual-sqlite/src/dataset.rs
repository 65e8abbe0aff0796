//! The tests' database: `institutions` and `degrees_awarded`, the demo's two tables, filled with
//! deterministic rows (so the tests read like queries on the demo's data).

use std::path::Path;

use rusqlite::{Connection, params};

/// How many rows each table gets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DatasetSize {
    pub(crate) institutions: u32,
    pub(crate) degrees: u32,
}

impl DatasetSize {
    pub(crate) const SMALL: Self = Self {
        institutions: 300,
        degrees: 5_000,
    };
}

const STATES: [&str; 6] = ["CA", "NJ", "NY", "TX", "WA", "OH"];

/// Writes a dataset of `size` at `path` unless a file is there; whether it wrote one.
pub(crate) fn ensure(path: &Path, size: DatasetSize) -> rusqlite::Result<bool> {
    if path.exists() {
        return Ok(false);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    }
    let mut conn = Connection::open(path)?;
    conn.execute_batch(
        "CREATE TABLE institutions (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL,
             state TEXT NOT NULL, control TEXT NOT NULL, level TEXT NOT NULL,
             enrollment INTEGER NOT NULL, founded INTEGER NOT NULL);
         CREATE TABLE degrees_awarded (id INTEGER PRIMARY KEY, institution_id INTEGER NOT NULL,
             year INTEGER NOT NULL, field TEXT NOT NULL, award_level TEXT NOT NULL,
             gender TEXT NOT NULL, count INTEGER NOT NULL);",
    )?;
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare("INSERT INTO institutions VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?;
        for i in 1..=size.institutions {
            let state = STATES[i as usize % STATES.len()];
            let control = if i % 2 == 0 { "public" } else { "private" };
            let level = if i % 3 == 0 { "two-year" } else { "four-year" };
            insert.execute(params![
                i,
                format!("Institution {i}"),
                format!("City {}", i % 40),
                state,
                control,
                level,
                (i * 7_919) % 50_000 + 100,
                1800 + i % 220
            ])?;
        }
        let mut insert = tx.prepare("INSERT INTO degrees_awarded VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?;
        for i in 1..=size.degrees {
            insert.execute(params![
                i,
                i % size.institutions.max(1) + 1,
                2000 + i % 24,
                ["Biology", "History", "Physics", "Nursing"][i as usize % 4],
                ["associate", "bachelor", "master", "doctoral"][i as usize % 4],
                ["women", "men"][i as usize % 2],
                (i * 31) % 997
            ])?;
        }
    }
    tx.commit()?;
    Ok(true)
}
