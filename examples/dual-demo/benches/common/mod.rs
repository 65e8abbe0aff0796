//! What the bench programs of `benches/` share (each includes it with `mod common;`).

use std::time::Duration;

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The median of `rounds` timings.
pub(crate) fn median(
    rounds: u64,
    mut run: impl FnMut() -> Result<Duration, BoxError>,
) -> Result<Duration, BoxError> {
    let mut times = (0..rounds.max(1)).map(|_| run()).collect::<Result<Vec<_>, _>>()?;
    times.sort();
    Ok(times[times.len() / 2])
}

/// The environment variable `name` as an integer, else `default`.
pub(crate) fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The 1-minute load average (`/proc/loadavg`), to print beside the figures; `None` where /proc is not there.
pub(crate) fn load_average() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}
