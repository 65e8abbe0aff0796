//! The embedded IPEDS-like dataset, generated deterministically on first use.
//!
//! Two tables, shaped like the US Integrated Postsecondary Education Data System:
//!
//! * `institutions(id, name, city, state, control, level, enrollment, founded)` — colleges and
//!   universities; `control` is `public` or `private`, `level` is `4-year` or `2-year`;
//! * `degrees_awarded(id, institution_id, year, field, award_level, gender, count)` — the fact table,
//!   269,000 rows at the default size.
//!
//! The same seed always produces the same rows, so figures in docs and tests are reproducible.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::{Connection, params};

/// Bump when the schema or the generator changes, so stale cache files are not reused.
const VERSION: u32 = 1;
/// The PRNG seed.
const SEED: u64 = 0x0001_BED5_2026;

/// How many rows to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatasetSize {
    /// Rows of `institutions`.
    pub institutions: u32,
    /// Rows of `degrees_awarded`.
    pub degrees: u32,
}

impl DatasetSize {
    /// The default dataset: 6,000 institutions and 269,000 degree rows.
    pub const DEFAULT: Self = Self {
        institutions: 6_000,
        degrees: 269_000,
    };
    /// A small dataset for tests: 300 institutions, 5,000 degree rows.
    pub const SMALL: Self = Self {
        institutions: 300,
        degrees: 5_000,
    };
}

const STATES: [&str; 51] = [
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS",
    "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC",
    "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
];
/// Rough weights so big states have more institutions (CA, NY, TX, PA, …).
const BIG_STATES: [&str; 8] = ["CA", "NY", "TX", "PA", "FL", "IL", "OH", "NJ"];
const CITIES: [&str; 40] = [
    "Springfield",
    "Riverside",
    "Franklin",
    "Greenville",
    "Bristol",
    "Clinton",
    "Fairview",
    "Salem",
    "Madison",
    "Georgetown",
    "Arlington",
    "Ashland",
    "Burlington",
    "Manchester",
    "Oxford",
    "Jackson",
    "Milton",
    "Newport",
    "Auburn",
    "Dayton",
    "Lexington",
    "Milford",
    "Winchester",
    "Hudson",
    "Kingston",
    "Mount Vernon",
    "Princeton",
    "Camden",
    "Hamilton",
    "Lancaster",
    "Marion",
    "Dover",
    "Trenton",
    "Columbia",
    "Lincoln",
    "Monroe",
    "Newark",
    "Plymouth",
    "Richmond",
    "Shelby",
];
const PATRONS: [&str; 16] = [
    "Saint Mary",
    "Holy Cross",
    "Wesley",
    "Calvin",
    "Loyola",
    "Baxter",
    "Whitman",
    "Carver",
    "Hawthorne",
    "Ellsworth",
    "Pemberton",
    "Ashford",
    "Kendall",
    "Thornton",
    "Hollis",
    "Merriam",
];
const FIELDS: [&str; 20] = [
    "Business",
    "Health Professions",
    "Social Sciences",
    "Psychology",
    "Biological Sciences",
    "Engineering",
    "Computer Science",
    "Education",
    "Communication",
    "Visual and Performing Arts",
    "Liberal Arts",
    "Mathematics",
    "Physical Sciences",
    "English",
    "History",
    "Nursing",
    "Criminal Justice",
    "Agriculture",
    "Architecture",
    "Philosophy",
];
const AWARD_LEVELS: [&str; 4] = ["associate", "bachelor", "master", "doctoral"];
const GENDERS: [&str; 2] = ["women", "men"];

const SCHEMA: &str = "
CREATE TABLE institutions (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT NOT NULL,
    state TEXT NOT NULL,
    control TEXT NOT NULL CHECK (control IN ('public', 'private')),
    level TEXT NOT NULL,
    enrollment INTEGER NOT NULL,
    founded INTEGER NOT NULL
);
CREATE TABLE degrees_awarded (
    id INTEGER PRIMARY KEY,
    institution_id INTEGER NOT NULL REFERENCES institutions(id),
    year INTEGER NOT NULL,
    field TEXT NOT NULL,
    award_level TEXT NOT NULL,
    gender TEXT NOT NULL,
    count INTEGER NOT NULL
);
";

const INDEXES: &str = "
CREATE INDEX institutions_state ON institutions(state, control);
CREATE INDEX degrees_awarded_institution ON degrees_awarded(institution_id);
CREATE INDEX degrees_awarded_year ON degrees_awarded(year);
";

/// Where the default dataset is cached: `$XDG_CACHE_HOME/dual-demo/`, else `~/.cache/dual-demo/`,
/// else the system temp directory.
#[must_use]
pub fn default_path() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("dual-demo").join(format!("ipeds-v{VERSION}.sqlite"))
}

/// Makes sure a dataset of `size` exists at `path`, generating it when the file is missing. Returns
/// whether it was generated.
///
/// Generation writes a temporary file next to `path` and renames it into place, so concurrent callers
/// never see half a database.
///
/// # Errors
/// IO or SQLite errors while creating the file.
pub fn ensure(path: &Path, size: DatasetSize) -> Result<bool, DatasetError> {
    if path.exists() {
        return Ok(false);
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let unique = format!(
        "{}.{}-{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("ipeds"),
        std::process::id(),
        fastrand::u64(..)
    );
    let tmp = path.with_file_name(unique);
    let result = generate(&tmp, size).map_err(DatasetError::from).and_then(|()| {
        std::fs::rename(&tmp, path)?;
        Ok(())
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|()| true)
}

/// Why the dataset could not be created.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// A file system error.
    #[error("dataset file: {0}")]
    Io(#[from] std::io::Error),
    /// A SQLite error.
    #[error("dataset generation: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// Writes a fresh dataset of `size` to `path` (which must not exist), in one transaction with
/// prepared statements.
///
/// # Errors
/// SQLite errors.
pub fn generate(path: &Path, size: DatasetSize) -> Result<(), rusqlite::Error> {
    let started = Instant::now();
    let mut conn = Connection::open(path)?;
    conn.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
    let mut rng = fastrand::Rng::with_seed(SEED);
    let tx = conn.transaction()?;
    tx.execute_batch(SCHEMA)?;
    let mut enrollments = Vec::with_capacity(size.institutions as usize);
    {
        let mut insert = tx.prepare(
            "INSERT INTO institutions (id, name, city, state, control, level, enrollment, founded) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        for id in 1..=size.institutions {
            let institution = institution(&mut rng);
            enrollments.push(institution.enrollment);
            insert.execute(params![
                id,
                institution.name,
                institution.city,
                institution.state,
                institution.control,
                institution.level,
                institution.enrollment,
                institution.founded
            ])?;
        }
    }
    {
        let mut insert = tx.prepare(
            "INSERT INTO degrees_awarded (id, institution_id, year, field, award_level, gender, count) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let institutions = size.institutions.max(1);
        for id in 1..=size.degrees {
            let institution = rng.u32(1..=institutions);
            let enrollment = enrollments
                .get(institution as usize - 1)
                .copied()
                .unwrap_or(1_000);
            let award_level = AWARD_LEVELS[rng.usize(..AWARD_LEVELS.len())];
            let scale = match award_level {
                "associate" | "bachelor" => 40,
                "master" => 120,
                _ => 600,
            };
            insert.execute(params![
                id,
                institution,
                rng.u32(2015..=2024),
                FIELDS[rng.usize(..FIELDS.len())],
                award_level,
                GENDERS[rng.usize(..GENDERS.len())],
                (enrollment / scale).max(1) * rng.u32(1..=5) / 3 + rng.u32(0..=3),
            ])?;
        }
    }
    tx.execute_batch(INDEXES)?;
    tx.commit()?;
    conn.execute_batch("ANALYZE;")?;
    tracing::info!(
        path = %path.display(),
        institutions = size.institutions,
        degrees = size.degrees,
        millis = started.elapsed().as_millis() as u64,
        "generated the demo dataset"
    );
    Ok(())
}

struct Institution {
    name: String,
    city: &'static str,
    state: &'static str,
    control: &'static str,
    level: &'static str,
    enrollment: u32,
    founded: u32,
}

fn institution(rng: &mut fastrand::Rng) -> Institution {
    let state = if rng.u8(..100) < 35 {
        BIG_STATES[rng.usize(..BIG_STATES.len())]
    } else {
        STATES[rng.usize(..STATES.len())]
    };
    let city = CITIES[rng.usize(..CITIES.len())];
    let public = rng.u8(..100) < 45;
    let two_year = rng.u8(..100) < if public { 40 } else { 10 };
    let name = match (public, two_year, rng.u8(..4)) {
        (_, true, _) => format!("{city} Community College"),
        (true, false, 0 | 1) => format!("University of {city}, {state}"),
        (true, false, _) => format!("{city} State University"),
        (false, false, 0) => format!("{} College", PATRONS[rng.usize(..PATRONS.len())]),
        (false, false, 1) => format!("{} University", PATRONS[rng.usize(..PATRONS.len())]),
        (false, false, _) => format!("{city} College of {}", FIELDS[rng.usize(..FIELDS.len())]),
    };
    // Log-uniform enrollment: many small colleges, a few very large universities.
    let base: f64 = if two_year { 300.0 } else { 500.0 };
    let top: f64 = if public { 60_000.0 } else { 25_000.0 };
    let enrollment = (base * (top / base).powf(rng.f64())).round() as u32;
    Institution {
        name,
        city,
        state,
        control: if public { "public" } else { "private" },
        level: if two_year { "2-year" } else { "4-year" },
        enrollment,
        founded: rng.u32(1636..=2015),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_deterministically() {
        let dir = std::env::temp_dir().join(format!("dual-demo-dataset-{}", std::process::id()));
        let (a, b) = (dir.join("a.sqlite"), dir.join("b.sqlite"));
        let size = DatasetSize {
            institutions: 50,
            degrees: 400,
        };
        assert_eq!(ensure(&a, size).ok(), Some(true));
        assert_eq!(ensure(&a, size).ok(), Some(false));
        assert_eq!(ensure(&b, size).ok(), Some(true));
        let digest = |path: &Path| -> Vec<(i64, String, i64)> {
            let Ok(conn) = Connection::open(path) else {
                return Vec::new();
            };
            let Ok(mut stmt) = conn.prepare(
                "SELECT i.id, i.name || i.state || i.control, SUM(d.count) FROM institutions i \
                 JOIN degrees_awarded d ON d.institution_id = i.id GROUP BY i.id ORDER BY i.id",
            ) else {
                return Vec::new();
            };
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map(|rows| rows.filter_map(Result::ok).collect())
                .unwrap_or_default()
        };
        let first = digest(&a);
        assert!(!first.is_empty());
        assert_eq!(first, digest(&b));
        let count: i64 = Connection::open(&a)
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM degrees_awarded", [], |r| r.get(0)))
            .unwrap_or_default();
        assert_eq!(count, 400);
        let _ = std::fs::remove_dir_all(dir);
    }
}
