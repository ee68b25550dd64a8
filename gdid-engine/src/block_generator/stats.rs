//! What a generator has done and holds: [`Stats`], from [`BlockGenerator::stats`].

use std::time::Duration;

use tokio::time::Instant;

use super::BlockGenerator;

impl BlockGenerator {
    /// A snapshot of what the generator has done and holds.
    pub fn stats(&self) -> Stats {
        let inner = &self.inner;
        // The current segment is read under the state lock, which every installation holds: so
        // it and the count of the segments it replaced are of one instant.
        let st = inner.lock_state();
        let current = inner.current.load();
        let in_slots: u64 = inner.slots.iter().map(|slot| slot.unused()).sum();
        let taken = st.consumed_before_current + current.taken();
        let pending = st.pending.map_or(0, |b| b.len());
        let in_hand = current.remaining() + pending + in_slots;
        let rate = st.rate.rate();
        Stats {
            issued: taken.saturating_sub(in_slots),
            allocations: st.allocations,
            dedicated_allocations: st.dedicated_allocations,
            hedges: st.hedges,
            hedged_ids_wasted: st.hedged_ids_wasted,
            authorities: inner
                .authorities
                .iter()
                .zip(&st.health)
                .map(|(a, h)| AuthorityStats {
                    authority: a.number(),
                    label: a.label(),
                    failures: h.failures,
                    backing_off: h.backoff_until.is_some_and(|t| t > Instant::now()),
                })
                .collect(),
            block_size: st.block_size,
            ids_in_hand: in_hand,
            rate,
            cover_left: rate
                .filter(|r| *r > 0.0)
                .map(|r| Duration::from_secs_f64(in_hand as f64 / r)),
        }
    }
}

/// A snapshot of a generator, from [`BlockGenerator::stats`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Ids handed to callers (approximate while threads are serving).
    pub issued: u64,
    /// Blocks allocated for the cache.
    pub allocations: u64,
    /// Blocks allocated for [`BlockGenerator::next_block`] calls the cache could not serve.
    pub dedicated_allocations: u64,
    /// Requests hedged: not answered within their authority's usual latency, so the next
    /// authority was asked as well.
    pub hedges: u64,
    /// Ids of late blocks (answers to hedged requests) that could be neither kept nor given
    /// back: never issued.
    pub hedged_ids_wasted: u64,
    /// Per authority, in preference order.
    pub authorities: Vec<AuthorityStats>,
    /// The size of the latest block requested.
    pub block_size: u64,
    /// Ids reserved and not handed out yet: the current block, the prefetched one, the threads'
    /// slices.
    pub ids_in_hand: u64,
    /// The consumption rate measured between allocations, ids per second.
    pub rate: Option<f64>,
    /// How long the ids in hand last at that rate: the outage the generator rides out now.
    pub cover_left: Option<Duration>,
}

/// Per-authority figures in [`Stats`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorityStats {
    /// The authority number.
    pub authority: u8,
    /// Its label.
    pub label: String,
    /// Failed allocations so far.
    pub failures: u64,
    /// Whether it is being skipped now after failures.
    pub backing_off: bool,
}
