//! A [`metrics`] recorder for tests: [`Captured`] keeps every counter and gauge the code under test
//! emits, by name and labels, for the test to read back.
//!
//! Install it for the current thread with [`Captured::local`] (a `#[tokio::test]` runs its tasks on
//! that thread; work moved to `spawn_blocking` threads is not seen).
//!
//! ```
//! use dual_testkit::metrics::Captured;
//!
//! let captured = Captured::new();
//! {
//!     let _local = captured.local();
//!     metrics::counter!("dual_example_total", "kind" => "a").increment(2);
//!     metrics::gauge!("dual_example_bytes").set(5.0);
//! }
//! assert_eq!(captured.counter("dual_example_total", &[("kind", "a")]), 2);
//! assert_eq!(captured.gauge("dual_example_bytes", &[]), Some(5.0));
//! assert_eq!(captured.counter("dual_example_total", &[("kind", "b")]), 0);
//! ```

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, Key, KeyName, LocalRecorderGuard, Metadata, Recorder,
    SharedString, Unit,
};

/// Counters and gauges as the code under test left them; a cheap `Clone` handle.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    counters: Mutex<BTreeMap<String, Arc<CounterCell>>>,
    gauges: Mutex<BTreeMap<String, Arc<GaugeCell>>>,
    described: Mutex<BTreeMap<String, String>>,
}

/// An `f64` gauge stored as its bits.
#[derive(Debug, Default)]
struct GaugeCell(AtomicU64);

impl GaugeCell {
    fn update(&self, f: impl Fn(f64) -> f64) {
        let _ = self.0.fetch_update(Ordering::AcqRel, Ordering::Acquire, |bits| {
            Some(f(f64::from_bits(bits)).to_bits())
        });
    }

    fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Acquire))
    }
}

impl GaugeFn for GaugeCell {
    fn increment(&self, value: f64) {
        self.update(|v| v + value);
    }

    fn decrement(&self, value: f64) {
        self.update(|v| v - value);
    }

    fn set(&self, value: f64) {
        self.update(|_| value);
    }
}

/// A counter cell.
#[derive(Debug, Default)]
struct CounterCell(AtomicU64);

impl CounterFn for CounterCell {
    fn increment(&self, value: u64) {
        self.0.fetch_add(value, Ordering::AcqRel);
    }

    fn absolute(&self, value: u64) {
        self.0.fetch_max(value, Ordering::AcqRel);
    }
}

impl Captured {
    /// An empty recorder.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Installs this recorder for the current thread until the guard is dropped.
    #[must_use]
    pub fn local(&self) -> LocalRecorderGuard<'_> {
        metrics::set_default_local_recorder(self)
    }

    /// The counter `name` with exactly `labels` (in any order); 0 when it was never emitted.
    #[must_use]
    pub fn counter(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        lock(&self.inner.counters)
            .get(&series(name, labels.iter().map(|(k, v)| (*k, *v))))
            .map_or(0, |cell| cell.0.load(Ordering::Acquire))
    }

    /// The gauge `name` with exactly `labels`; `None` when it was never emitted.
    #[must_use]
    pub fn gauge(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        lock(&self.inner.gauges)
            .get(&series(name, labels.iter().map(|(k, v)| (*k, *v))))
            .map(|cell| cell.get())
    }

    /// The description given to `name` (`describe_counter!` / `describe_gauge!`), if any.
    #[must_use]
    pub fn description(&self, name: &str) -> Option<String> {
        lock(&self.inner.described).get(name).cloned()
    }

    /// Every series emitted, as `name{label="value",…}`, sorted.
    #[must_use]
    pub fn series(&self) -> Vec<String> {
        let mut all: Vec<String> = lock(&self.inner.counters).keys().cloned().collect();
        all.extend(lock(&self.inner.gauges).keys().cloned());
        all.sort();
        all
    }

    fn describe(&self, key: &KeyName, description: &SharedString) {
        lock(&self.inner.described).insert(key.as_str().to_owned(), description.to_string());
    }
}

impl Recorder for Captured {
    fn describe_counter(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.describe(&key, &description);
    }

    fn describe_gauge(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.describe(&key, &description);
    }

    fn describe_histogram(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.describe(&key, &description);
    }

    fn register_counter(&self, key: &Key, _metadata: &Metadata<'_>) -> Counter {
        Counter::from_arc(Arc::clone(
            lock(&self.inner.counters).entry(series_of(key)).or_default(),
        ))
    }

    fn register_gauge(&self, key: &Key, _metadata: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(Arc::clone(
            lock(&self.inner.gauges).entry(series_of(key)).or_default(),
        ))
    }

    fn register_histogram(&self, _key: &Key, _metadata: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

fn series_of(key: &Key) -> String {
    series(key.name(), key.labels().map(|label| (label.key(), label.value())))
}

/// `name{a="x",b="y"}` with the labels sorted by key; `name` alone without labels.
fn series<'a>(name: &str, labels: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let mut labels: Vec<(&str, &str)> = labels.collect();
    if labels.is_empty() {
        return name.to_owned();
    }
    labels.sort_unstable();
    let inner: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{name}{{{}}}", inner.join(","))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
