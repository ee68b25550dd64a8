//! Sharded counter ranges: the value space (say, every 12-digit number) cut into N fixed ranges,
//! each handed out by its own counter record, so writers spread over N records instead of queueing
//! on one and ids keep a fixed number of digits. The store-independent part: the layout, the pick,
//! skipping used-up ranges, splitting batches, and checking what a store returns; a backend
//! supplies the two statements of [`RangeStore`].

use std::future::Future;
use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::error::Error;
use super::id_generator::{IdBatch, IdGenerator};

/// How the value space is cut: range k is `base + k·size .. base + (k+1)·size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeLayout {
    base: u64,
    size: u64,
    ranges: u32,
}

/// The largest value a range may reach: SQL `BIGINT`.
const VALUE_MAX: u64 = i64::MAX as u64;

impl RangeLayout {
    /// `ranges` ranges of `size` values each, starting at `base`.
    ///
    /// # Errors
    ///
    /// A description when `ranges` or `size` is 0, or the last value passes `i64::MAX`.
    pub fn new(base: u64, size: u64, ranges: u32) -> Result<RangeLayout, String> {
        if ranges == 0 || size == 0 {
            return Err("at least one range of at least one value".into());
        }
        let end = u64::from(ranges)
            .checked_mul(size)
            .and_then(|span| span.checked_add(base))
            .filter(|end| end - 1 <= VALUE_MAX)
            .ok_or_else(|| format!("{ranges} ranges of {size} from {base} pass {VALUE_MAX}"))?;
        debug_assert!(end > base);
        Ok(RangeLayout { base, size, ranges })
    }

    /// Ids of exactly `digits` decimal digits (1 to 18), cut into `ranges` equal ranges; the
    /// remainder at the top is left unused.
    ///
    /// ```
    /// use gdid_core::generator::RangeLayout;
    ///
    /// let layout = RangeLayout::decimal_digits(12, 4).unwrap();
    /// assert_eq!(layout.range(0), 100_000_000_000..325_000_000_000);
    /// assert_eq!(layout.range(3).end, 1_000_000_000_000);
    /// ```
    ///
    /// # Errors
    ///
    /// A description for 0 or more than 18 digits, or more ranges than values.
    pub fn decimal_digits(digits: u32, ranges: u32) -> Result<RangeLayout, String> {
        if !(1..=18).contains(&digits) {
            return Err(format!("{digits} digits: expected 1 to 18"));
        }
        let low = if digits == 1 {
            0
        } else {
            10u64.pow(digits - 1)
        };
        let high = 10u64.pow(digits);
        let size = (high - low) / u64::from(ranges.max(1));
        if size == 0 {
            return Err(format!(
                "{ranges} ranges is more than the {} values",
                high - low
            ));
        }
        RangeLayout::new(low, size, ranges)
    }

    /// The values of range `k`.
    pub fn range(&self, k: u32) -> Range<u64> {
        let start = self.base + u64::from(k) * self.size;
        start..start + self.size
    }

    /// How many ranges.
    pub fn ranges(&self) -> u32 {
        self.ranges
    }
}

/// Which range serves the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// A random range each time: writers spread evenly without coordination.
    Random,
    /// The ranges in turn.
    RoundRobin,
}

/// The stored state of one range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeState {
    /// The range number.
    pub range: u32,
    /// The next value to hand out.
    pub next: u64,
    /// The last value of the range.
    pub max: u64,
}

impl RangeLayout {
    /// Checks the ranges a store holds against this layout; returns the first range number the
    /// store lacks (to be created). More ranges of the same size may be added later; a range of
    /// another size, or fewer ranges, would let values repeat.
    ///
    /// # Errors
    ///
    /// A description of the first disagreement.
    pub fn check_stored(&self, stored: &[RangeState]) -> Result<u32, String> {
        if stored.len() > self.ranges as usize {
            return Err(format!(
                "{} ranges are stored, the layout has only {}",
                stored.len(),
                self.ranges
            ));
        }
        for (k, state) in (0..).zip(stored) {
            let range = self.range(k);
            if state.range != k || state.max != range.end - 1 {
                return Err(format!(
                    "range {} ends at {} in the store; range {k} of the layout ends at {}",
                    state.range,
                    state.max,
                    range.end - 1
                ));
            }
            if state.next < range.start || state.next > range.end {
                return Err(format!(
                    "range {k} is at {}, outside {}..={}",
                    state.next, range.start, range.end
                ));
            }
        }
        Ok(u32::try_from(stored.len()).unwrap_or(u32::MAX))
    }
}

/// The two statements a store runs for a [`ShardedCounter`].
pub trait RangeStore: Send + Sync {
    /// The sequence, for messages.
    fn sequence(&self) -> &str;

    /// Takes exactly `n` values from range `range` in one atomic step, never past its maximum:
    /// the new `next` value, or `None` when fewer than `n` are left.
    fn take(&self, range: u32, n: u64) -> impl Future<Output = Result<Option<u64>, Error>> + Send;

    /// The stored state of every range, in range order.
    fn list(&self) -> impl Future<Output = Result<Vec<RangeState>, Error>> + Send;
}

/// `u64` ids from the N ranges of a [`RangeStore`]: unique, increasing per range, not across
/// ranges. Used-up ranges are skipped; a batch no single range can hold is split over several.
#[derive(Debug)]
pub struct ShardedCounter<S> {
    store: S,
    layout: RangeLayout,
    pick: Pick,
    turn: AtomicU32,
    rng: Mutex<StdRng>,
    /// Ranges seen used up (they never come back).
    used_up: Mutex<Vec<bool>>,
}

impl<S: RangeStore> ShardedCounter<S> {
    /// A counter over `store`, whose ranges were checked against `layout`
    /// ([`RangeLayout::check_stored`]) and created.
    pub fn new(store: S, layout: RangeLayout, pick: Pick) -> Self {
        use std::hash::{BuildHasher, RandomState};
        ShardedCounter {
            store,
            layout,
            pick,
            turn: AtomicU32::new(0),
            rng: Mutex::new(StdRng::seed_from_u64(RandomState::new().hash_one(0u8))),
            used_up: Mutex::new(vec![false; layout.ranges as usize]),
        }
    }

    /// The layout.
    pub fn layout(&self) -> RangeLayout {
        self.layout
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The ranges to try, in order: the picked one first, then the others, skipping used-up ones.
    fn order(&self) -> Vec<u32> {
        let n = self.layout.ranges;
        let first = match self.pick {
            Pick::Random => self
                .rng
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .random_range(0..n),
            Pick::RoundRobin => self.turn.fetch_add(1, Ordering::Relaxed) % n,
        };
        let used_up = self.used_up.lock().unwrap_or_else(|e| e.into_inner());
        (0..n)
            .map(|i| (first + i) % n)
            .filter(|&k| !used_up[k as usize])
            .collect()
    }

    /// Exactly `n` values from range `k` (the first of them), or `None` when it has fewer left.
    async fn take_from(&self, k: u32, n: u64) -> Result<Option<u64>, Error> {
        let Some(next) = self.store.take(k, n).await? else {
            if n == 1 {
                self.used_up.lock().unwrap_or_else(|e| e.into_inner())[k as usize] = true;
            }
            return Ok(None);
        };
        let range = self.layout.range(k);
        next.checked_sub(n)
            .filter(|first| range.start <= *first && first + n <= range.end)
            .map(Some)
            .ok_or_else(|| {
                Error::store(format!(
                    "range {k} of {} returned {next}, outside {}..{}: corrupt record",
                    self.store.sequence(),
                    range.start,
                    range.end
                ))
            })
    }

    async fn take(&self, n: u64) -> Result<IdBatch<u64>, Error> {
        if n == 0 {
            return Err(Error::InvalidCount {
                count: 0,
                reason: "ask for at least one id",
            });
        }
        let mut batch = IdBatch::consecutive_u64();
        for k in self.order() {
            if let Some(first) = self.take_from(k, n).await? {
                batch.push_run(first, n);
                return Ok(batch);
            }
        }
        // No range holds all n: take what each has left.
        let mut left = n;
        for state in self.store.list().await? {
            let available = (state.max + 1).saturating_sub(state.next).min(left);
            if available > 0 {
                if let Some(first) = self.take_from(state.range, available).await? {
                    batch.push_run(first, available);
                    left -= available;
                }
            }
            if left == 0 {
                return Ok(batch);
            }
        }
        Err(Error::Exhausted(format!(
            "the {} ranges of {} cannot give {n} more ids (taken for this call and lost: {})",
            self.layout.ranges,
            self.store.sequence(),
            n - left
        )))
    }
}

impl<S: RangeStore> IdGenerator for ShardedCounter<S> {
    type Id = u64;

    async fn next_id(&self) -> Result<u64, Error> {
        let batch = self.take(1).await?;
        batch
            .iter()
            .next()
            .ok_or_else(|| Error::Exhausted("no id".into()))
    }

    async fn next_ids(&self, n: u64) -> Result<IdBatch<u64>, Error> {
        self.take(n).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(range: u32, next: u64, max: u64) -> RangeState {
        RangeState { range, next, max }
    }

    #[test]
    fn layouts_are_checked() {
        assert!(RangeLayout::new(0, 0, 1).is_err());
        assert!(RangeLayout::new(0, 1, 0).is_err());
        assert!(RangeLayout::new(u64::MAX - 10, 100, 1).is_err());
        assert!(RangeLayout::new(VALUE_MAX, 1, 1).is_ok());
        assert!(RangeLayout::new(VALUE_MAX, 2, 1).is_err());
        assert!(RangeLayout::decimal_digits(0, 1).is_err());
        assert!(RangeLayout::decimal_digits(19, 1).is_err());
        assert!(RangeLayout::decimal_digits(1, 11).is_err());
        assert_eq!(RangeLayout::decimal_digits(1, 10).unwrap().range(9), 9..10);
    }

    #[test]
    fn stored_ranges_must_match_the_layout() {
        let layout = RangeLayout::new(1, 5, 3).unwrap();
        assert_eq!(layout.check_stored(&[]), Ok(0));
        assert_eq!(layout.check_stored(&[state(0, 3, 5)]), Ok(1));
        assert_eq!(
            layout.check_stored(&[state(0, 6, 5), state(1, 6, 10), state(2, 16, 15)]),
            Ok(3)
        );
        let other_size = layout.check_stored(&[state(0, 1, 6)]).unwrap_err();
        assert!(
            other_size.contains("ends at 6 in the store"),
            "{other_size}"
        );
        let fewer = RangeLayout::new(1, 5, 1)
            .unwrap()
            .check_stored(&[state(0, 1, 5), state(1, 6, 10)]);
        assert!(fewer.unwrap_err().contains("has only 1"));
        let outside = layout.check_stored(&[state(0, 0, 5)]).unwrap_err();
        assert!(outside.contains("outside"), "{outside}");
    }
}
