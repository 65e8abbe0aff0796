//! The process's memory as benches report it: the resident set now and at its peak, read from
//! Linux's `/proc/self/status`, and a reset of the peak. Elsewhere (no `/proc`) every figure is 0.
//!
//! ```
//! let before = dual_testkit::memory::rss_kib();
//! let buffer = vec![1_u8; 8 << 20];
//! std::hint::black_box(&buffer);
//! if cfg!(target_os = "linux") {
//!     assert!(dual_testkit::memory::peak_rss_kib() >= before);
//! }
//! ```

/// A `kB` line of `/proc/self/status` (`VmRSS`, `VmHWM`, …), in KiB; 0 when there is none.
#[must_use]
pub fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                let value = line.strip_prefix(field)?.strip_prefix(':')?;
                value.trim().trim_end_matches("kB").trim().parse().ok()
            })
        })
        .unwrap_or(0)
}

/// The resident set now (`VmRSS`), in KiB.
#[must_use]
pub fn rss_kib() -> u64 {
    status_kib("VmRSS")
}

/// The peak resident set (`VmHWM`), in KiB: since the process started, or since
/// [`reset_peak_rss`].
#[must_use]
pub fn peak_rss_kib() -> u64 {
    status_kib("VmHWM")
}

/// KiB as MiB, for printing.
#[must_use]
pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Resets the peak resident set to the current one (Linux: `5` written to `/proc/self/clear_refs`),
/// so that [`peak_rss_kib`] measures what follows.
///
/// # Errors
/// The write's error (no `/proc`, or a kernel that refuses it).
pub fn reset_peak_rss() -> std::io::Result<()> {
    std::fs::write("/proc/self/clear_refs", "5")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_that_is_not_there_reads_zero_and_a_prefix_is_no_match() {
        assert_eq!(status_kib("NoSuchField"), 0);
        // `VmHW` is a prefix of `VmHWM`, not a field of its own.
        assert_eq!(status_kib("VmHW"), 0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_resident_set_is_read_in_kib() {
        let rss = rss_kib();
        assert!(rss > 100, "{rss} KiB");
        assert!(peak_rss_kib() >= rss);
        assert!((mib(2048) - 2.0).abs() < f64::EPSILON);
    }
}
