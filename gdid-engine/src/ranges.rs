//! Sharded counter ranges: the value space (say, every 12-digit number) cut into N fixed ranges,
//! each handed out by its own counter record, so writers spread over N records instead of queueing
//! on one and ids keep a fixed number of digits. The store-independent part: the layout and its
//! creation, the pick, skipping used-up ranges, splitting batches, and checking what a store
//! returns; a backend supplies the small operations of [`RangeStore`].
//!
//! # One layout per sequence, created atomically
//!
//! A sequence's layout is fixed by its first creator: [`ShardedCounter::create`] writes a layout
//! record with one insert-if-absent before any range record, reads it back, and refuses any other
//! layout ([`ErrorDetail::InvalidConfig`](crate::ErrorDetail::InvalidConfig)) before writing a
//! range. Creators that race on a fresh sequence agree on the record written first; those asking
//! for the same layout all go on, the others get the error and issue nothing. A layout never grows:
//! a range record beyond the layout's count is corrupt
//! ([`ErrorDetail::Corrupt`](crate::ErrorDetail::Corrupt)), never a range to take from.

mod create;
mod stored;

pub use stored::{LAYOUT_FIELDS, RangeFields};

use std::future::Future;
use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::generator_error::Error;
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

/// A layout that cannot work ([`RangeLayout::new`], [`RangeLayout::decimal_digits`]), or stored
/// ranges that disagree with one ([`RangeLayout::check_stored`], [`RangeLayout::check_state`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// No range, or ranges of no value.
    #[error("at least one range of at least one value")]
    Empty,
    /// The last value passes `i64::MAX` (SQL `BIGINT`).
    #[error("{ranges} ranges of {size} from {base} pass {VALUE_MAX}")]
    TooLarge {
        /// The first value.
        base: u64,
        /// Values per range.
        size: u64,
        /// How many ranges.
        ranges: u32,
    },
    /// A number of decimal digits outside 1 to 18.
    #[error("{0} digits: expected 1 to 18")]
    Digits(u32),
    /// More ranges than values.
    #[error("{ranges} ranges is more than the {values} values")]
    MoreRangesThanValues {
        /// How many ranges.
        ranges: u32,
        /// How many values.
        values: u64,
    },
    /// More ranges stored than the layout has.
    #[error("{stored} ranges are stored, the layout has only {ranges}")]
    TooManyStored {
        /// How many are stored.
        stored: usize,
        /// How many the layout has.
        ranges: u32,
    },
    /// The stored ranges are not ranges 0, 1, 2, … in order (a gap).
    #[error("range {stored} is stored where range {expected} is expected")]
    Gap {
        /// The range number stored.
        stored: u32,
        /// The range number expected there.
        expected: u32,
    },
    /// A stored field that disagrees with the layout: a range number beyond it, a last value not
    /// the layout's, a next value outside its range.
    #[error("field {field} is {value}{reason}")]
    Field {
        /// The field, as the store names it.
        field: &'static str,
        /// What it holds.
        value: u64,
        /// What the layout says instead.
        reason: String,
    },
}

impl RangeLayout {
    /// `ranges` ranges of `size` values each, starting at `base`.
    ///
    /// # Errors
    ///
    /// [`LayoutError::Empty`] when `ranges` or `size` is 0, [`LayoutError::TooLarge`] when the
    /// last value passes `i64::MAX`.
    pub fn new(base: u64, size: u64, ranges: u32) -> Result<RangeLayout, LayoutError> {
        if ranges == 0 || size == 0 {
            return Err(LayoutError::Empty);
        }
        let end = u64::from(ranges)
            .checked_mul(size)
            .and_then(|span| span.checked_add(base))
            .filter(|end| end - 1 <= VALUE_MAX)
            .ok_or(LayoutError::TooLarge { base, size, ranges })?;
        debug_assert!(end > base);
        Ok(RangeLayout { base, size, ranges })
    }

    /// Ids of exactly `digits` decimal digits (1 to 18), cut into `ranges` equal ranges; the
    /// remainder at the top is left unused.
    ///
    /// ```
    /// use gdid_engine::RangeLayout;
    ///
    /// let layout = RangeLayout::decimal_digits(12, 4).unwrap();
    /// assert_eq!(layout.range(0), 100_000_000_000..325_000_000_000);
    /// assert_eq!(layout.range(3).end, 1_000_000_000_000);
    /// ```
    ///
    /// # Errors
    ///
    /// [`LayoutError::Digits`] for 0 or more than 18 digits,
    /// [`LayoutError::MoreRangesThanValues`], or as [`new`](Self::new).
    pub fn decimal_digits(digits: u32, ranges: u32) -> Result<RangeLayout, LayoutError> {
        if !(1..=18).contains(&digits) {
            return Err(LayoutError::Digits(digits));
        }
        let low = if digits == 1 {
            0
        } else {
            10u64.pow(digits - 1)
        };
        let high = 10u64.pow(digits);
        let size = (high - low) / u64::from(ranges.max(1));
        if size == 0 {
            return Err(LayoutError::MoreRangesThanValues {
                ranges,
                values: high - low,
            });
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

    /// The first value of range 0.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// How many values each range holds.
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl std::fmt::Display for RangeLayout {
    /// `3 ranges of 5 values from 1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ranges of {} values from {}",
            self.ranges, self.size, self.base
        )
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
    /// store lacks (to be created). The stored ranges must be ranges 0, 1, 2... of this layout: a
    /// range of another size, a range beyond the layout's count, or a gap would let values
    /// repeat or be taken from outside the layout.
    ///
    /// # Errors
    ///
    /// The first disagreement: [`LayoutError::TooManyStored`], [`LayoutError::Gap`], or as
    /// [`check_state`](Self::check_state).
    pub fn check_stored(&self, stored: &[RangeState]) -> Result<u32, LayoutError> {
        if stored.len() > self.ranges as usize {
            return Err(LayoutError::TooManyStored {
                stored: stored.len(),
                ranges: self.ranges,
            });
        }
        for (k, state) in (0..).zip(stored) {
            if state.range != k {
                return Err(LayoutError::Gap {
                    stored: state.range,
                    expected: k,
                });
            }
            self.check_state(state, &RangeFields::GENERIC)?;
        }
        Ok(u32::try_from(stored.len()).unwrap_or(u32::MAX))
    }
}

impl RangeLayout {
    /// Checks one stored range against this layout: its number within the layout's count, its
    /// last value the layout's, its next value inside it (or one past the end: used up). The
    /// description names the field, as `fields` calls it.
    ///
    /// # Errors
    ///
    /// [`LayoutError::Field`] naming the field that disagrees.
    pub fn check_state(&self, state: &RangeState, fields: &RangeFields) -> Result<(), LayoutError> {
        let k = state.range;
        let field = |field, value, reason| {
            Err(LayoutError::Field {
                field,
                value,
                reason,
            })
        };
        if k >= self.ranges {
            let last = self.ranges - 1;
            return field(
                fields.range,
                k.into(),
                format!(", beyond the layout ({self}: 0 to {last})"),
            );
        }
        let range = self.range(k);
        if state.max != range.end - 1 {
            let end = range.end - 1;
            return field(
                fields.max,
                state.max,
                format!("; range {k} of the layout ({self}) ends at {end}"),
            );
        }
        if state.next < range.start || state.next > range.end {
            let (start, end) = (range.start, range.end);
            return field(
                fields.next,
                state.next,
                format!(", outside range {k} ({start}..={end})"),
            );
        }
        Ok(())
    }
}

/// What a store does for a [`ShardedCounter`]: take values from a range, list the ranges, and
/// the record of the layout. Each operation is one statement or one request; the rules (what is
/// checked, in which order) are [`ShardedCounter::create`]'s and [`ShardedCounter`]'s.
pub trait RangeStore: Send + Sync {
    /// How the store names the fields of a range record, for messages; by default
    /// [`RangeFields::GENERIC`].
    const FIELDS: RangeFields = RangeFields::GENERIC;

    /// The sequence, for messages.
    fn sequence(&self) -> &str;

    /// How messages name the record of range `range`: `the gdid_ranges row (sequence "a",
    /// shard 3)`. By default: `the record of range 3 of sequence "a"`.
    fn range_record(&self, range: i64) -> String {
        format!(
            "the record of range {range} of sequence {:?}",
            self.sequence()
        )
    }

    /// How messages name the layout record of the sequence. By default: `the layout record of
    /// sequence "a"`.
    fn layout_record(&self) -> String {
        format!("the layout record of sequence {:?}", self.sequence())
    }

    /// Takes exactly `n` values from range `range` in one atomic step, never past its maximum:
    /// the new `next` value, or `None` when fewer than `n` are left.
    fn take(&self, range: u32, n: u64) -> impl Future<Output = Result<Option<u64>, Error>> + Send;

    /// The stored state of every range, in range order, each decoded with
    /// [`RangeState::from_stored`] (a corrupt record is
    /// [`ErrorDetail::Corrupt`](crate::ErrorDetail::Corrupt)).
    fn list(&self) -> impl Future<Output = Result<Vec<RangeState>, Error>> + Send;

    /// The layout record of the sequence, decoded with [`RangeLayout::from_stored`], or `None`
    /// when there is none.
    fn read_layout(&self) -> impl Future<Output = Result<Option<RangeLayout>, Error>> + Send;

    /// Writes the layout record unless the sequence has one: one insert-if-absent, never an
    /// update.
    fn insert_layout(&self, layout: RangeLayout) -> impl Future<Output = Result<(), Error>> + Send;

    /// Writes the record of range `range` (next value `values.start`, last `values.end - 1`)
    /// unless it exists: one insert-if-absent.
    fn insert_range(
        &self,
        range: u32,
        values: Range<u64>,
    ) -> impl Future<Output = Result<(), Error>> + Send;
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
    /// A counter over the ranges of `layout` in `store`, creating them if the sequence has none:
    /// the layout record first (one insert-if-absent, read back), then the missing range
    /// records. Many processes may create the same layout at once; the first layout recorded
    /// for a sequence is its layout for good.
    ///
    /// # Errors
    ///
    /// [`ErrorDetail::InvalidConfig`](crate::ErrorDetail::InvalidConfig) when the sequence has
    /// another layout (recorded, or ranges stored before layouts were recorded that disagree):
    /// nothing was written. [`ErrorDetail::Corrupt`](crate::ErrorDetail::Corrupt) when a stored
    /// record cannot be right, [`ErrorDetail::Store`](crate::ErrorDetail::Store) when the store
    /// fails.
    pub async fn create(store: S, layout: RangeLayout, pick: Pick) -> Result<Self, Error> {
        create::establish(&store, layout).await?;
        Ok(ShardedCounter::new(store, layout, pick))
    }

    /// A counter over `store`, whose layout was established.
    fn new(store: S, layout: RangeLayout, pick: Pick) -> Self {
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
            if n == 1
                && let Some(used_up) = self
                    .used_up
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_mut(k as usize)
            {
                *used_up = true;
            }
            return Ok(None);
        };
        let range = self.layout.range(k);
        next.checked_sub(n)
            .filter(|first| range.start <= *first && first + n <= range.end)
            .map(Some)
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "{}: field {} is {next} after taking {n}, outside range {k} ({}..{})",
                    self.store.range_record(i64::from(k)),
                    S::FIELDS.next,
                    range.start,
                    range.end
                ))
            })
    }

    async fn take(&self, n: u64) -> Result<IdBatch<u64>, Error> {
        let mut batch = IdBatch::for_count(n)?;
        for k in self.order() {
            if let Some(first) = self.take_from(k, n).await? {
                batch.push_run(first, n);
                return Ok(batch);
            }
        }
        // No range holds all n: take what each has left.
        let mut left = n;
        for state in self.store.list().await? {
            // Only ranges of this layout: a record beyond it, or of another size, is corrupt.
            self.layout
                .check_state(&state, &S::FIELDS)
                .map_err(|reason| {
                    Error::corrupt(format!(
                        "{}: {reason}",
                        self.store.range_record(i64::from(state.range))
                    ))
                })?;
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
        Err(Error::exhausted(format!(
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
        batch.iter().next().ok_or_else(|| Error::exhausted("no id"))
    }

    async fn next_ids(&self, n: u64) -> Result<IdBatch<u64>, Error> {
        self.take(n).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorDetail;

    fn state(range: u32, next: u64, max: u64) -> RangeState {
        RangeState { range, next, max }
    }

    #[test]
    fn layouts_are_checked() {
        assert_eq!(RangeLayout::new(0, 0, 1), Err(LayoutError::Empty));
        assert_eq!(RangeLayout::new(0, 1, 0), Err(LayoutError::Empty));
        assert!(RangeLayout::new(u64::MAX - 10, 100, 1).is_err());
        assert!(RangeLayout::new(VALUE_MAX, 1, 1).is_ok());
        assert!(RangeLayout::new(VALUE_MAX, 2, 1).is_err());
        assert!(RangeLayout::decimal_digits(0, 1).is_err());
        assert_eq!(
            RangeLayout::decimal_digits(19, 1).unwrap_err().to_string(),
            "19 digits: expected 1 to 18"
        );
        assert!(RangeLayout::decimal_digits(1, 11).is_err());
        assert_eq!(RangeLayout::decimal_digits(1, 10).unwrap().range(9), 9..10);
        assert_eq!(
            RangeLayout::new(1, 5, 3).unwrap().to_string(),
            "3 ranges of 5 values from 1"
        );
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
        let other_size = layout
            .check_stored(&[state(0, 1, 6)])
            .unwrap_err()
            .to_string();
        assert!(
            other_size.contains("field max is 6; range 0 of the layout"),
            "{other_size}"
        );
        let fewer = RangeLayout::new(1, 5, 1)
            .unwrap()
            .check_stored(&[state(0, 1, 5), state(1, 6, 10)]);
        assert_eq!(
            fewer,
            Err(LayoutError::TooManyStored {
                stored: 2,
                ranges: 1
            })
        );
        let outside = layout.check_stored(&[state(0, 0, 5)]).unwrap_err();
        assert!(outside.to_string().contains("outside"), "{outside}");
        let gap = layout.check_stored(&[state(0, 1, 5), state(2, 11, 15)]);
        assert_eq!(
            gap.unwrap_err().to_string(),
            "range 2 is stored where range 1 is expected"
        );
    }

    #[test]
    fn a_range_number_beyond_the_layout_is_named() {
        let layout = RangeLayout::new(1, 5, 3).unwrap();
        for k in [3, 99, u32::MAX] {
            let reason = layout
                .check_state(&state(k, 1, 5), &RangeFields::GENERIC)
                .unwrap_err()
                .to_string();
            assert!(
                reason.contains(&format!("field range is {k}, beyond the layout")),
                "{reason}"
            );
        }
    }

    /// Ranges in memory, each operation yielding first so that racing tasks interleave.
    #[derive(Debug, Default)]
    struct Memory {
        rows: Mutex<Vec<RangeState>>,
        layout: Mutex<Option<RangeLayout>>,
    }

    impl RangeStore for &Memory {
        fn sequence(&self) -> &str {
            "seq"
        }

        async fn take(&self, range: u32, n: u64) -> Result<Option<u64>, Error> {
            tokio::task::yield_now().await;
            let mut rows = self.rows.lock().unwrap();
            Ok(rows
                .iter_mut()
                .find(|row| row.range == range && row.next + n - 1 <= row.max)
                .map(|row| {
                    row.next += n;
                    row.next
                }))
        }

        async fn list(&self) -> Result<Vec<RangeState>, Error> {
            tokio::task::yield_now().await;
            let mut rows = self.rows.lock().unwrap().clone();
            rows.sort_by_key(|row| row.range);
            Ok(rows)
        }

        async fn read_layout(&self) -> Result<Option<RangeLayout>, Error> {
            tokio::task::yield_now().await;
            Ok(*self.layout.lock().unwrap())
        }

        async fn insert_layout(&self, layout: RangeLayout) -> Result<(), Error> {
            tokio::task::yield_now().await;
            self.layout.lock().unwrap().get_or_insert(layout);
            Ok(())
        }

        async fn insert_range(&self, range: u32, values: Range<u64>) -> Result<(), Error> {
            tokio::task::yield_now().await;
            let mut rows = self.rows.lock().unwrap();
            if rows.iter().all(|row| row.range != range) {
                rows.push(state(range, values.start, values.end - 1));
            }
            Ok(())
        }
    }

    fn rows_of(layout: RangeLayout) -> Vec<RangeState> {
        (0..layout.ranges())
            .map(|k| state(k, layout.range(k).start, layout.range(k).end - 1))
            .collect()
    }

    /// Creators of 8 and 3 ranges (and equal ones) racing on one sequence: the ranges stored
    /// are exactly one layout's, its creators all succeed, the others are refused.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn racing_layouts_leave_exactly_one() {
        let eight = RangeLayout::decimal_digits(12, 8).unwrap();
        let three = RangeLayout::decimal_digits(12, 3).unwrap();
        for _round in 0..50 {
            let memory: &'static Memory = Box::leak(Box::default());
            let tasks: Vec<_> = (0..6)
                .map(|task| {
                    let layout = if task % 2 == 0 { eight } else { three };
                    tokio::spawn(async move {
                        let created = ShardedCounter::create(memory, layout, Pick::Random).await;
                        (layout, created.map(drop))
                    })
                })
                .collect();
            let mut results = Vec::new();
            for task in tasks {
                results.push(task.await.unwrap());
            }
            let rows = (&memory).list().await.unwrap();
            let winner = memory.layout.lock().unwrap().unwrap();
            assert_eq!(rows, rows_of(winner));
            for (layout, result) in results {
                if layout == winner {
                    result.unwrap();
                } else {
                    let refused = result.as_ref().map_err(Error::detail);
                    assert!(
                        matches!(
                            refused,
                            Err(ErrorDetail::InvalidConfig { reason }) if reason.contains("refused")
                        ),
                        "{result:?}"
                    );
                }
            }
        }
    }

    /// Ranges stored before layouts were recorded are taken as the layout when they fit it, and
    /// refuse it when they do not; rows that disagree with a recorded layout are corrupt.
    #[tokio::test]
    async fn unrecorded_and_disagreeing_ranges() {
        let layout = RangeLayout::new(1, 5, 3).unwrap();
        let legacy = Memory::default();
        legacy.rows.lock().unwrap().push(state(0, 3, 5));
        let other = RangeLayout::new(1, 6, 3).unwrap();
        let refused = ShardedCounter::create(&legacy, other, Pick::Random).await;
        assert!(matches!(
            refused.map_err(Error::into_detail),
            Err(ErrorDetail::InvalidConfig { .. })
        ));
        assert!(legacy.layout.lock().unwrap().is_none(), "nothing written");
        ShardedCounter::create(&legacy, layout, Pick::Random)
            .await
            .unwrap();
        let mut expected = rows_of(layout);
        expected[0].next = 3;
        assert_eq!((&legacy).list().await.unwrap(), expected);

        let disagreeing = Memory::default();
        *disagreeing.layout.lock().unwrap() = Some(layout);
        disagreeing.rows.lock().unwrap().push(state(0, 1, 6));
        let corrupt = ShardedCounter::create(&disagreeing, layout, Pick::Random).await;
        let detail = corrupt.as_ref().map_err(Error::detail);
        assert!(
            matches!(
                detail,
                Err(ErrorDetail::Corrupt(reason)) if reason.contains("the layout record")
            ),
            "{corrupt:?}"
        );
    }

    /// A stored range number beyond the layout, met when a batch is split over the ranges, is a
    /// typed error naming the record and field: it used to compute a range past `u64::MAX` (a
    /// panic), take from the record anyway, or index the used-up flags out of bounds (a panic)
    /// when the take found nothing.
    #[tokio::test]
    async fn a_range_number_out_of_bounds_is_corrupt_not_a_panic() {
        // Ranges of 2^33 values: range u32::MAX would start past u64::MAX.
        let layout = RangeLayout::new(0, 1 << 33, 3).unwrap();
        for k in [3, 99, u32::MAX] {
            let memory = Memory::default();
            let ids = ShardedCounter::create(&memory, layout, Pick::RoundRobin)
                .await
                .unwrap();
            for row in memory.rows.lock().unwrap().iter_mut() {
                row.next = row.max + 1; // used up
            }
            memory.rows.lock().unwrap().push(state(k, 1, 5));
            let err = ids.next_id().await.unwrap_err();
            assert!(
                matches!(err.detail(), ErrorDetail::Corrupt(reason)
                if reason.contains(&format!(
                    "the record of range {k} of sequence \"seq\": field range is {k}"
                ))),
                "{k}: {err:?}"
            );
        }
    }
}
