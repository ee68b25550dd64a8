//! The runway, visible: what a generator reports of its allocations, its cover and its sequence's
//! counter space, as metrics through the [`metrics`](https://docs.rs/metrics) facade (feature
//! `metrics`: any exporter, Prometheus included, picks them up) and as `tracing` warnings (always).
//!
//! | metric | kind | labels | what |
//! |---|---|---|---|
//! | `gdid_ids_taken_total` | counter | scope, sequence | ids taken from blocks (by callers, and by threads' slices) |
//! | `gdid_allocations_total` | counter | scope, sequence, authority, outcome (`ok`, `error`) | allocation requests |
//! | `gdid_allocation_seconds` | histogram | scope, sequence, authority, outcome | their latency |
//! | `gdid_failovers_total` | counter | scope, sequence, authority | requests that failed at an authority, so the next was asked |
//! | `gdid_hedges_total` | counter | scope, sequence, authority | requests not answered within the authority's usual latency, so the next was asked as well |
//! | `gdid_hedged_ids_wasted_total` | counter | scope, sequence | ids of late blocks (answers to hedged requests) that could be neither kept nor given back |
//! | `gdid_block_size` | gauge | scope, sequence | the size of the latest block requested |
//! | `gdid_cover_seconds` | gauge | scope, sequence | how long the ids in hand last at the recent rate (at each allocation round and failure) |
//! | `gdid_counter_space_used_ratio` | gauge | scope, sequence | how far the latest block went into the sequence's counter space (every era) |
//! | `gdid_counter_space_seconds_left` | gauge | scope, sequence | how long the rest of the space lasts at the recent rate |
//!
//! Warnings: the cover under [`cover_warning`](super::super::BlockGeneratorBuilder::cover_warning)
//! (half the configured cover unless set), an authority failed over (`failover.rs`), and the
//! sequence's counter space lasting less than
//! [`runway_warning`](super::super::BlockGeneratorBuilder::runway_warning) at the recent rate.

use std::time::Duration;

#[cfg(feature = "metrics")]
use metrics::{Counter, Gauge, Histogram, counter, gauge, histogram};
use tracing::warn;

use super::super::authority::Block;
use gdid_core::Gdid;

/// The whole counter space of a sequence: every era × every counter, 2^92.
const COUNTER_SPACE: f64 = (1u128 << (32 + Gdid::COUNTER_BITS)) as f64;

/// How far `block` goes into the counter space, and how many counters are left after it.
pub(super) fn counter_space(block: &Block) -> (f64, f64) {
    let used = (f64::from(block.era()) * (1u128 << Gdid::COUNTER_BITS) as f64) + block.end() as f64;
    (used / COUNTER_SPACE, (COUNTER_SPACE - used).max(0.0))
}

/// The handles of one generator's metrics, registered once (no-ops without a recorder, and
/// without the feature).
pub(super) struct Runway {
    scope: String,
    sequence: String,
    #[cfg(feature = "metrics")]
    handles: Handles,
}

impl Runway {
    pub(super) fn new(scope: &str, sequence: &str, authorities: &[u8]) -> Self {
        #[cfg(not(feature = "metrics"))]
        let _ = authorities;
        Runway {
            scope: scope.to_owned(),
            sequence: sequence.to_owned(),
            #[cfg(feature = "metrics")]
            handles: Handles::new(scope, sequence, authorities),
        }
    }

    /// `n` ids were taken from the current block.
    #[inline]
    pub(super) fn taken(&self, n: u64) {
        #[cfg(feature = "metrics")]
        self.handles.taken.increment(n);
        #[cfg(not(feature = "metrics"))]
        let _ = n;
    }

    /// Authority `i` answered a request in `elapsed`, or failed it.
    pub(super) fn allocation(&self, i: usize, elapsed: Duration, ok: bool) {
        #[cfg(feature = "metrics")]
        self.handles.allocation(i, elapsed, ok);
        #[cfg(not(feature = "metrics"))]
        let _ = (i, elapsed, ok);
    }

    /// Authority `i` failed a request, and the next one is asked.
    pub(super) fn failover(&self, i: usize) {
        #[cfg(feature = "metrics")]
        self.handles.failovers[i].increment(1);
        #[cfg(not(feature = "metrics"))]
        let _ = i;
    }

    /// Authority `i` did not answer within its usual latency: the next is asked as well.
    pub(super) fn hedge(&self, i: usize) {
        #[cfg(feature = "metrics")]
        self.handles.hedges[i].increment(1);
        #[cfg(not(feature = "metrics"))]
        let _ = i;
    }

    /// `n` ids of a late block could be neither kept nor given back.
    pub(super) fn wasted(&self, n: u64) {
        #[cfg(feature = "metrics")]
        self.handles.wasted.increment(n);
        #[cfg(not(feature = "metrics"))]
        let _ = n;
    }

    /// A block of `size` is requested.
    pub(super) fn block_size(&self, size: u64) {
        #[cfg(feature = "metrics")]
        self.handles.block_size.set(size as f64);
        #[cfg(not(feature = "metrics"))]
        let _ = size;
    }

    /// The cover now: the ids in hand at the recent rate; warned about under `warning`.
    pub(super) fn cover(&self, ids_in_hand: u64, rate: Option<f64>, warning: Duration) {
        if let Some(seconds) = self.lasting(Lasting::Cover, ids_in_hand as f64, rate, warning) {
            warn!(
                scope = %self.scope,
                sequence = %self.sequence,
                cover_seconds = seconds,
                ids_in_hand,
                "the ids in hand last less than the cover warning: the store has not answered"
            );
        }
    }

    /// The latest block installed: how far into the counter space it goes and how long the rest
    /// lasts at the recent rate; warned about under `warning`.
    pub(super) fn space(&self, block: &Block, rate: Option<f64>, warning: Duration) {
        let (used, left) = counter_space(block);
        #[cfg(feature = "metrics")]
        self.handles.space_used.set(used);
        #[cfg(not(feature = "metrics"))]
        let _ = used;
        if let Some(seconds) = self.lasting(Lasting::SpaceLeft, left, rate, warning) {
            warn!(
                scope = %self.scope,
                sequence = %self.sequence,
                seconds_left = seconds,
                %block,
                "the sequence's counter space runs out within the runway warning at this rate"
            );
        }
    }

    /// How long `amount` of `what` lasts at the recent `rate`, in seconds, set on its gauge:
    /// `Some` when that is under `warning`. Nothing while the rate is unknown (or zero).
    fn lasting(
        &self,
        what: Lasting,
        amount: f64,
        rate: Option<f64>,
        warning: Duration,
    ) -> Option<f64> {
        let seconds = amount / rate.filter(|r| *r > 0.0)?;
        #[cfg(feature = "metrics")]
        self.handles.lasting(what).set(seconds);
        #[cfg(not(feature = "metrics"))]
        let _ = what;
        (seconds < warning.as_secs_f64()).then_some(seconds)
    }
}

/// What [`Runway::lasting`] measures, each on a gauge of its own.
#[derive(Debug, Clone, Copy)]
enum Lasting {
    /// The ids in hand (`gdid_cover_seconds`).
    Cover,
    /// The counters left in the sequence's space (`gdid_counter_space_seconds_left`).
    SpaceLeft,
}

/// Per authority: requests by outcome, their latency, failovers.
#[cfg(feature = "metrics")]
struct Handles {
    taken: Counter,
    block_size: Gauge,
    cover: Gauge,
    space_used: Gauge,
    space_left: Gauge,
    failovers: Vec<Counter>,
    hedges: Vec<Counter>,
    wasted: Counter,
    allocations: Vec<[(Counter, Histogram); 2]>,
}

#[cfg(feature = "metrics")]
impl Handles {
    fn new(scope: &str, sequence: &str, authorities: &[u8]) -> Self {
        let (scope, sequence) = (scope.to_owned(), sequence.to_owned());
        let labels = [("scope", scope.clone()), ("sequence", sequence.clone())];
        let of_authority = |number: u8| {
            [
                ("scope", scope.clone()),
                ("sequence", sequence.clone()),
                ("authority", number.to_string()),
            ]
        };
        let outcome = |number: u8, outcome: &'static str| {
            let mut labels = of_authority(number).to_vec();
            labels.push(("outcome", outcome.to_owned()));
            (
                counter!("gdid_allocations_total", &labels),
                histogram!("gdid_allocation_seconds", &labels),
            )
        };
        Handles {
            taken: counter!("gdid_ids_taken_total", &labels),
            block_size: gauge!("gdid_block_size", &labels),
            cover: gauge!("gdid_cover_seconds", &labels),
            space_used: gauge!("gdid_counter_space_used_ratio", &labels),
            space_left: gauge!("gdid_counter_space_seconds_left", &labels),
            failovers: authorities
                .iter()
                .map(|&n| counter!("gdid_failovers_total", &of_authority(n)))
                .collect(),
            hedges: authorities
                .iter()
                .map(|&n| counter!("gdid_hedges_total", &of_authority(n)))
                .collect(),
            wasted: counter!("gdid_hedged_ids_wasted_total", &labels),
            allocations: authorities
                .iter()
                .map(|&n| [outcome(n, "ok"), outcome(n, "error")])
                .collect(),
        }
    }

    /// The gauge of `what`.
    fn lasting(&self, what: Lasting) -> &Gauge {
        match what {
            Lasting::Cover => &self.cover,
            Lasting::SpaceLeft => &self.space_left,
        }
    }

    fn allocation(&self, i: usize, elapsed: Duration, ok: bool) {
        let (requests, latency) = &self.allocations[i][usize::from(!ok)];
        requests.increment(1);
        latency.record(elapsed.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_space_is_every_era_of_every_counter() {
        let (used, left) = counter_space(&Block::new(0, 1, 1, 99).unwrap());
        assert!(used > 0.0 && used < 1e-20, "{used}");
        assert!((left - COUNTER_SPACE).abs() / COUNTER_SPACE < 1e-12);
        let last = Block::new(u32::MAX, 1, gdid_core::COUNTER_MAX, 1).unwrap();
        let (used, left) = counter_space(&last);
        assert!((used - 1.0).abs() < 1e-12, "{used}");
        assert_eq!(left, 0.0);
    }
}
