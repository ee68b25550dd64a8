//! The dynamic block size: from the observed consumption rate to a block that covers an outage.
//!
//! # The rule
//!
//! A prefetch starts when a fraction `f` (the low-water mark, default 0.5) of the current block is
//! left. If the store goes down at that moment, those `f × size` ids must last the configured
//! cover time `T` (default 60 s) at the observed rate `r`. So:
//!
//! ```text
//! size = clamp(⌈r × T / f⌉, min, max)        (f = 1 when prefetch is off)
//! ```
//!
//! and the ids in hand never fall below `r × T` while the store answers: an outage shorter than
//! `T` is invisible to callers, whenever it starts. With the defaults (`T` = 60 s, `f` = 0.5,
//! `min` = 16, `max` = 2^31):
//!
//! | rate | block size | allocations per hour |
//! |---|---|---|
//! | 1 id/s | 120 | 30 |
//! | 1,000 ids/s | 120,000 | 30 |
//! | 1,000,000 ids/s | 120,000,000 | 30 |
//!
//! The rate is measured from the installation of a block to the request for the next one (never
//! on the per-id path), so that time callers spent waiting for a block, with nothing to take, is
//! not read as a low rate: the first blocks of a new generator, behind a store's first connect,
//! would otherwise be sized for a fraction of the real rate (the fault suite caught 1,073 ids/s
//! measured for 5,000). It follows a rise at once and a fall by halves, so a burst gets a large
//! block immediately and a quiet spell shrinks blocks gently.
//!
//! A young generator's first estimates are measured over a few milliseconds (its first block is
//! `min`, 16 ids), where a burst or the clock's grain reads as a fraction of the real rate. A
//! block sized from an estimate measured over less than `RATE_PROBE` (100 ms) is checked again that
//! long after it came: when the ids in hand last less than `T` at the rate served since, the next
//! block is fetched at once, sized for that rate (`block_generator/refill.rs`). So the cover
//! holds from about 100 ms after the first sized block, not from the third block.

use std::time::Duration;

use tokio::time::Instant;

/// The block size for a rate, per the rule in the module docs: `rate` ids per second covered for
/// `cover`, over the fraction `low_water_mark` of a block (`0.0`: no prefetch, the whole block),
/// within `min ..= max`. PostgreSQL's `gdid_next` sizes its sessions' blocks by it too, with a
/// cover of one second and no prefetch.
///
/// ```
/// use std::time::Duration;
/// use gdid_engine::sizing::block_size;
///
/// let minute = Duration::from_secs(60);
/// assert_eq!(block_size(1_000.0, minute, 0.5, 16, 1 << 31), 120_000);
/// assert_eq!(block_size(1_000.0, Duration::from_secs(1), 0.0, 100, 1_000_000), 1_000);
/// assert_eq!(block_size(0.1, minute, 0.5, 16, 1 << 31), 16); // never below `min`
/// ```
pub fn block_size(rate: f64, cover: Duration, low_water_mark: f64, min: u64, max: u64) -> u64 {
    let fraction = if low_water_mark > 0.0 {
        low_water_mark
    } else {
        1.0
    };
    let wanted = (rate * cover.as_secs_f64() / fraction).ceil();
    if wanted.is_nan() || wanted < min as f64 {
        min
    } else if wanted >= max as f64 {
        max
    } else {
        // In range [min, max): the conversion is exact for whole numbers below 2^53 and never
        // wraps (saturating float-to-int).
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let size = wanted as u64;
        size
    }
}

/// Consumption rate between allocations: rises at once, falls by halves.
///
/// ```
/// use std::time::Duration;
/// use gdid_engine::sizing::RateEstimator;
/// use tokio::time::Instant;
///
/// let mut rate = RateEstimator::default();
/// let start = Instant::now();
/// assert_eq!(rate.observe(start, 0), None); // the first observation starts the clock
/// let second = start + Duration::from_secs(1);
/// assert_eq!(rate.observe(second, 1_000), Some(1_000.0)); // a rise is taken at once
/// assert_eq!(rate.observe(second + Duration::from_secs(1), 1_200), Some(600.0)); // a fall by half
/// ```
#[derive(Debug, Default)]
pub struct RateEstimator {
    rate: Option<f64>,
    last: Option<(Instant, u64)>,
    /// How long the interval of the latest estimate was.
    interval: Option<Duration>,
}

/// An estimate measured over less than this is checked again this long after its block came
/// ([`RateEstimator::is_young`]): a young generator's first blocks are measured over a few
/// milliseconds, where a burst or a coarse clock reads as a fraction of the real rate (16 ids
/// taken within one millisecond read as 16,000 ids/s at 100,000 ids/s), and sized for it.
pub(crate) const RATE_PROBE: Duration = Duration::from_millis(100);

/// Intervals shorter than this are counted as this long, so a burst in a paused or coarse clock
/// does not read as an infinite rate.
const MIN_INTERVAL: Duration = Duration::from_millis(1);

impl RateEstimator {
    /// Records that `consumed` ids in all had been taken at `now`; returns the rate estimate.
    pub fn observe(&mut self, now: Instant, consumed: u64) -> Option<f64> {
        if let Some((then, before)) = self.last {
            let elapsed = now.saturating_duration_since(then).max(MIN_INTERVAL);
            self.interval = Some(elapsed);
            let measured = consumed.saturating_sub(before) as f64 / elapsed.as_secs_f64();
            self.rate = Some(match self.rate {
                Some(old) if measured < old => (old + measured) / 2.0,
                _ => measured,
            });
        }
        self.last = Some((now, consumed));
        self.rate
    }

    /// Starts the next interval at `now`, when `consumed` ids in all had been taken: a new block
    /// was installed, so the time callers spent waiting for it (when nothing could be taken) is
    /// not counted as time without demand.
    pub fn restart(&mut self, now: Instant, consumed: u64) {
        if self.last.is_some() {
            self.last = Some((now, consumed));
        }
    }

    /// The latest estimate, ids per second.
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// Whether the latest estimate was measured over less than [`RATE_PROBE`].
    pub(crate) fn is_young(&self) -> bool {
        self.interval.is_some_and(|interval| interval < RATE_PROBE)
    }

    /// The rate since the start of the current interval, when `consumed` ids in all have been
    /// taken at `now`, without ending the interval; `None` before the first interval or within
    /// [`MIN_INTERVAL`] of its start.
    pub(crate) fn since_last(&self, now: Instant, consumed: u64) -> Option<f64> {
        let (then, before) = self.last?;
        let elapsed = now.saturating_duration_since(then);
        (elapsed >= MIN_INTERVAL)
            .then(|| consumed.saturating_sub(before) as f64 / elapsed.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn the_documented_sizes() {
        let size = |rate| block_size(rate, MINUTE, 0.5, 16, 1 << 31);
        assert_eq!(size(1.0), 120);
        assert_eq!(size(1_000.0), 120_000);
        assert_eq!(size(1_000_000.0), 120_000_000);
        assert_eq!(size(0.0), 16);
        assert_eq!(size(1e12), 1 << 31);
        assert_eq!(size(f64::NAN), 16);
        assert_eq!(size(f64::INFINITY), 1 << 31);
    }

    #[test]
    fn without_prefetch_the_block_alone_covers() {
        assert_eq!(block_size(1_000.0, MINUTE, 0.0, 1, u64::MAX), 60_000);
    }

    #[test]
    fn the_rate_rises_at_once_and_falls_by_halves() {
        let start = Instant::now();
        let mut rate = RateEstimator::default();
        assert_eq!(rate.observe(start, 0), None);
        // (seconds after the start, ids served so far, the rate expected); a zero interval
        // counts as 1 ms.
        for (secs, served, expected) in [
            (1, 100, 100.0),
            (2, 1_100, 1_000.0),
            (3, 1_100, 500.0),
            (3, 2_100, 1_000_000.0),
        ] {
            let at = start + Duration::from_secs(secs);
            assert_eq!(rate.observe(at, served), Some(expected), "{secs} s");
        }
    }

    #[test]
    fn time_spent_waiting_for_a_block_is_not_read_as_a_low_rate() {
        let start = Instant::now();
        let mut rate = RateEstimator::default();
        rate.observe(start, 0); // the first block is requested...
        // ...and takes 100 ms to come (a store's first connect): nothing can be taken meanwhile.
        rate.restart(start + Duration::from_millis(100), 0);
        // Its 16 ids go in 3 ms: 5,333 ids/s, not 16 in 103 ms (155 ids/s).
        let measured = rate
            .observe(start + Duration::from_millis(103), 16)
            .unwrap();
        assert!((measured - 16.0 / 0.003).abs() < 1.0, "{measured}");
    }
}
