//! `gdid bench`: how many ids a strategy issues per second in this process, and how long each
//! `next_id` takes.

use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gdid::engine::Error as GeneratorError;
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::failure::Failure;
use crate::issuer::{IssueArgs, Issuer, Strategy};

/// The arguments of `gdid bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    pub issue: IssueArgs,
    /// Tasks calling `next_id` at once, on as many worker threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// How long to run.
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true)]
    pub seconds: f64,
    /// The sequence: `bench` unless given, so that a benchmark takes no value of the sequences
    /// in use (`--strategy window` needs one the agent supplies).
    #[arg(long, default_value = "bench")]
    pub sequence: String,
    /// text: a table; json: one JSON object.
    #[arg(long, value_enum, default_value_t)]
    pub format: crate::form::Format,
}

/// The most tasks `--threads` may ask for.
const MAX_THREADS: usize = 1_024;

impl BenchArgs {
    /// `--threads`, checked before a runtime of that many threads is built.
    pub(crate) fn threads(&self) -> Result<usize, String> {
        match self.threads {
            1..=MAX_THREADS => Ok(self.threads),
            n => Err(format!("--threads {n}: give 1 to {MAX_THREADS}")),
        }
    }

    /// `--seconds` as a duration.
    pub(crate) fn duration(&self) -> Result<Duration, String> {
        Duration::try_from_secs_f64(self.seconds)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("--seconds {}: give a positive number", self.seconds))
    }
}

/// What a run measured.
#[derive(Debug)]
pub(crate) struct Measurement {
    /// Ids issued.
    pub ids: u64,
    /// From the start of the first call to the end of the last.
    pub elapsed: Duration,
    /// The latency of each call, in nanoseconds.
    pub latency: Histogram<u64>,
}

/// A counter that no other task's counter shares a cache line with: each task counts its calls
/// without slowing the others.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Counter(AtomicU64);

/// What the tasks share.
#[derive(Debug, Default)]
struct Shared {
    /// Set at the first error: every task stops.
    stop: AtomicBool,
    errors: AtomicU64,
    first_error: Mutex<Option<GeneratorError>>,
}

/// Calls `next_id` from `threads` tasks for `duration`, showing a progress bar on stderr when it
/// is a terminal.
pub(crate) async fn measure(
    issuer: &Issuer,
    threads: usize,
    duration: Duration,
) -> Result<Measurement, Failure> {
    let shared = Arc::new(Shared::default());
    let counters: Vec<Arc<Counter>> = (0..threads).map(|_| Arc::default()).collect();
    let start = Instant::now();
    let deadline = start + duration;
    let tasks: Vec<_> = counters
        .iter()
        .map(|counter| {
            let (issuer, counter, shared) = (issuer.clone(), counter.clone(), shared.clone());
            tokio::spawn(async move { call_until(&issuer, deadline, &counter, &shared).await })
        })
        .collect();
    // A thread of its own: tasks that never wait would hold back a timer of the runtime.
    let progress = io::stderr().is_terminal().then(|| {
        let (counters, shared) = (counters.clone(), shared.clone());
        std::thread::spawn(move || show_progress(&counters, &shared, start, duration))
    });
    let mut latency = new_histogram()?;
    let mut failure = None;
    for task in tasks {
        match task.await {
            Ok(Ok(histogram)) => latency
                .add(&histogram)
                .map_err(|e| Failure::Task(e.to_string()))?,
            Ok(Err(e)) => failure = Some(e),
            Err(e) => failure = Some(Failure::Task(e.to_string())),
        }
    }
    let elapsed = start.elapsed();
    shared.stop.store(true, Ordering::Relaxed);
    if let Some(progress) = progress {
        // The bar only draws: if its thread panicked, the measurement still stands.
        let _ = progress.join();
    }
    let ids = counters.iter().map(|c| c.0.load(Ordering::Relaxed)).sum();
    let first = shared
        .first_error
        .lock()
        .map_or(None, |mut first| first.take());
    if let Some(first) = first {
        return Err(Failure::Bench {
            ids,
            errors: shared.errors.load(Ordering::Relaxed),
            first,
        });
    }
    if let Some(failure) = failure {
        return Err(failure);
    }
    Ok(Measurement {
        ids,
        elapsed,
        latency,
    })
}

fn new_histogram() -> Result<Histogram<u64>, Failure> {
    // Three significant digits, from 1 ns; `record` grows it to whatever latency comes.
    Histogram::new(3).map_err(|e| Failure::Task(e.to_string()))
}

/// One task: `next_id` in a loop until `deadline` or the first error of any task.
async fn call_until(
    issuer: &Issuer,
    deadline: Instant,
    counter: &Counter,
    shared: &Shared,
) -> Result<Histogram<u64>, Failure> {
    let mut latency = new_histogram()?;
    let mut ids = 0;
    loop {
        let before = Instant::now();
        if before >= deadline || shared.stop.load(Ordering::Relaxed) {
            return Ok(latency);
        }
        let result = issuer.next_id().await;
        let nanos = u64::try_from(before.elapsed().as_nanos()).unwrap_or(u64::MAX);
        match result {
            Ok(_) => {
                // It grows to hold any latency; clamped only if it cannot.
                if latency.record(nanos).is_err() {
                    latency.saturating_record(nanos);
                }
                ids += 1;
                counter.0.store(ids, Ordering::Relaxed);
            }
            Err(e) => {
                shared.errors.fetch_add(1, Ordering::Relaxed);
                shared.stop.store(true, Ordering::Relaxed);
                if let Ok(mut first) = shared.first_error.lock() {
                    first.get_or_insert(e);
                }
                return Ok(latency);
            }
        }
    }
}

/// A bar over the seconds, with the ids issued so far, until the tasks stop.
fn show_progress(counters: &[Arc<Counter>], shared: &Shared, start: Instant, duration: Duration) {
    let total = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {msg}") {
        bar.set_style(style);
    }
    while !shared.stop.load(Ordering::Relaxed) {
        let elapsed = start.elapsed().min(duration);
        let ids: u64 = counters.iter().map(|c| c.0.load(Ordering::Relaxed)).sum();
        bar.set_position(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX));
        bar.set_message(format!(
            "{:.1}/{:.1} s  {ids} ids",
            elapsed.as_secs_f64(),
            duration.as_secs_f64()
        ));
        std::thread::sleep(Duration::from_millis(100));
    }
    bar.finish_and_clear();
}

/// What `gdid bench` prints.
#[derive(Debug)]
pub(crate) struct Report<'a> {
    /// `--strategy`.
    pub strategy: Strategy,
    /// The stores, without their passwords; none for a strategy that uses no store.
    pub stores: Vec<String>,
    /// `--threads`.
    pub threads: usize,
    /// The result.
    pub measurement: &'a Measurement,
}

/// The percentiles printed, with their names in the table and in JSON.
const QUANTILES: [(&str, &str, f64); 4] = [
    ("p50", "p50", 0.5),
    ("p99", "p99", 0.99),
    ("p99.9", "p99_9", 0.999),
    ("p99.99", "p99_99", 0.9999),
];

impl Report<'_> {
    fn ids_per_second(&self) -> f64 {
        let seconds = self.measurement.elapsed.as_secs_f64();
        if seconds > 0.0 {
            self.measurement.ids as f64 / seconds
        } else {
            0.0
        }
    }

    fn store(&self) -> String {
        if self.stores.is_empty() {
            "none (made in this process)".into()
        } else {
            self.stores.join(", ")
        }
    }

    /// One `name value` line per figure.
    pub(crate) fn write_table(&self, out: &mut impl Write) -> io::Result<()> {
        let m = self.measurement;
        let mut rows = vec![
            ("strategy", self.strategy.name()),
            ("store", self.store()),
            ("threads", self.threads.to_string()),
            ("seconds", format!("{:.2}", m.elapsed.as_secs_f64())),
            ("ids", m.ids.to_string()),
            ("ids/s", format!("{:.0}", self.ids_per_second())),
        ];
        for (name, _, quantile) in QUANTILES {
            rows.push((name, readable(m.latency.value_at_quantile(quantile))));
        }
        rows.push(("max", readable(m.latency.max())));
        for (name, value) in rows {
            writeln!(out, "{name:<10} {value}")?;
        }
        out.flush()
    }

    /// One JSON object; latencies in nanoseconds.
    pub(crate) fn write_json(&self, out: &mut impl Write) -> io::Result<()> {
        let m = self.measurement;
        let mut latency = serde_json::Map::new();
        for (_, name, quantile) in QUANTILES {
            latency.insert(name.into(), m.latency.value_at_quantile(quantile).into());
        }
        latency.insert("max".into(), m.latency.max().into());
        let report = json!({
            "strategy": self.strategy.name(),
            "stores": self.stores,
            "threads": self.threads,
            "seconds": m.elapsed.as_secs_f64(),
            "ids": m.ids,
            "ids_per_second": self.ids_per_second(),
            "latency_ns": latency,
        });
        writeln!(out, "{report}")?;
        out.flush()
    }
}

/// Nanoseconds in ns, µs, ms or s, with three significant digits.
fn readable(nanos: u64) -> String {
    let (value, unit) = match nanos {
        0..1_000 => return format!("{nanos} ns"),
        1_000..1_000_000 => (nanos as f64 / 1e3, "µs"),
        1_000_000..1_000_000_000 => (nanos as f64 / 1e6, "ms"),
        _ => (nanos as f64 / 1e9, "s"),
    };
    match value {
        v if v < 10.0 => format!("{v:.2} {unit}"),
        v if v < 100.0 => format!("{v:.1} {unit}"),
        v => format!("{v:.0} {unit}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_read_in_the_fitting_unit() {
        for (nanos, text) in [
            (0, "0 ns"),
            (999, "999 ns"),
            (1_000, "1.00 µs"),
            (12_345, "12.3 µs"),
            (123_456, "123 µs"),
            (4_560_000, "4.56 ms"),
            (2_500_000_000, "2.50 s"),
        ] {
            assert_eq!(readable(nanos), text, "{nanos} ns");
        }
    }

    #[test]
    fn zero_threads_and_seconds_are_refused() {
        let args = |threads: usize, seconds: f64| BenchArgs {
            issue: IssueArgs {
                stores: vec!["memory".into()],
                store_file: None,
                authorities: Vec::new(),
                strategy: Strategy::Gdid,
                scope: "default".into(),
                digits: 12,
                ranges: 8,
                window_batch: 100,
            },
            threads,
            seconds,
            sequence: "bench".into(),
            format: crate::form::Format::Text,
        };
        assert!(args(0, 1.0).threads().is_err());
        assert!(args(MAX_THREADS + 1, 1.0).threads().is_err());
        assert_eq!(args(4, 1.0).threads(), Ok(4));
        for seconds in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(args(1, seconds).duration().is_err(), "{seconds}");
        }
        assert_eq!(args(1, 0.5).duration(), Ok(Duration::from_millis(500)));
    }
}
