//! [`Calls`]: what callers got while a fault ran, their ids, errors and latencies.

use std::time::{Duration, Instant};

use gdid_core::Gdid;
use gdid_engine::BlockGenerator;
use hdrhistogram::Histogram;

use crate::error::SetupError;
use crate::row::{Outcome, Row, Timing, duplicates};

/// What callers got while a fault ran.
pub(crate) struct Calls {
    pub(crate) ids: Vec<Gdid>,
    pub(crate) errors: u64,
    /// Calls made while the generator had no id in hand: each waited on the store (or failed).
    pub(crate) without_ids: u64,
    pub(crate) latency: Histogram<u64>,
}

impl Calls {
    pub(crate) fn new() -> Calls {
        Calls {
            ids: Vec::new(),
            errors: 0,
            without_ids: 0,
            latency: Histogram::new(3).expect("3 significant digits are valid"),
        }
    }

    /// `per_ms` calls every millisecond for `length`, each timed.
    pub(crate) async fn at_rate(&mut self, ids: &BlockGenerator, per_ms: u32, length: Duration) {
        let mut pace = tokio::time::interval(Duration::from_millis(1));
        pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        let started = Instant::now();
        while started.elapsed() < length {
            pace.tick().await;
            for _ in 0..per_ms {
                if ids.stats().ids_in_hand == 0 {
                    self.without_ids += 1;
                }
                let call = Instant::now();
                match ids.next_id().await {
                    Ok(id) => self.ids.push(id),
                    Err(_) => self.errors += 1,
                }
                let nanos = u64::try_from(call.elapsed().as_nanos()).unwrap_or(u64::MAX);
                // `record` grows the histogram to any latency (`saturating_record` would clamp
                // to its current top, 2 µs at first).
                if self.latency.record(nanos.max(1)).is_err() {
                    self.latency.saturating_record(nanos.max(1));
                }
            }
        }
    }

    /// Adds the calls of `other` (another caller of the same run) to these.
    pub(crate) fn merge(&mut self, other: Calls) -> Result<(), SetupError> {
        self.ids.extend(other.ids);
        self.errors += other.errors;
        self.without_ids += other.without_ids;
        self.latency.add(other.latency)?;
        Ok(())
    }

    /// Issues at `per_ms` until `ids` has fetched 3 blocks (15 s at most): the rate a new
    /// generator measures over its first, tiny blocks is rough (11,000 ids/s read for 20,000), so
    /// until then its cover is less than it says.
    /// Its calls that find no id in hand are not counted in `without_ids`: the first blocks are
    /// tiny, and the fault has not begun.
    pub(crate) async fn warm_up(&mut self, ids: &BlockGenerator, per_ms: u32) {
        let without_ids = self.without_ids;
        let started = Instant::now();
        while ids.stats().allocations < 3 && started.elapsed() < Duration::from_secs(15) {
            self.at_rate(ids, per_ms, Duration::from_millis(100)).await;
        }
        self.without_ids = without_ids;
    }

    /// The outcome of a scenario whose callers made these calls.
    pub(crate) fn into_outcome(
        self,
        fault: String,
        done: String,
        recovery: Option<Duration>,
    ) -> Result<Outcome, SetupError> {
        let calls_without_ids = self.without_ids;
        Ok(Outcome {
            row: self.into_row(fault, done, recovery)?,
            calls_without_ids,
        })
    }

    /// The row of a scenario whose callers made these calls.
    pub(crate) fn into_row(
        self,
        fault: String,
        done: String,
        recovery: Option<Duration>,
    ) -> Result<Row, SetupError> {
        Ok(Row {
            fault,
            done,
            issued: u64::try_from(self.ids.len())?,
            caller_errors: self.errors,
            duplicates: duplicates(&self.ids),
            lost_to_gaps: 0,
            timing: Timing {
                recovery,
                p999: Some(Duration::from_nanos(self.latency.value_at_quantile(0.999))),
                slowest: Some(Duration::from_nanos(self.latency.max())),
            },
        })
    }
}
