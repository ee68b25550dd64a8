//! [`SqlShardedCounter`]: N counter rows, each owning a fixed range of values.
//!
//! The "multiple counter documents" scheme: the value space (say, every 12-digit number) is cut
//! into N ranges, and row k of the `gdid_ranges` table hands out the values of range k, one
//! atomic statement each, never past its maximum. Writers spread over N rows instead of
//! queueing on one, and ids keep a fixed number of digits. Ids are unique and increase per
//! range, not across ranges.

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use gdid_core::generator::{Error as IdError, IdBatch, IdGenerator, NameKind, validate_name};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::error::Error;
use crate::sharded_rows;
use crate::store::SqlStore;

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
    /// use gdid_sql::RangeLayout;
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

/// A `u64` id generator over N fixed ranges of the `gdid_ranges` table; see the module docs.
#[derive(Debug)]
pub struct SqlShardedCounter {
    store: SqlStore,
    sequence: String,
    layout: RangeLayout,
    pick: Pick,
    turn: AtomicU32,
    rng: Mutex<StdRng>,
    /// Ranges seen used up (they never come back).
    used_up: Mutex<Vec<bool>>,
}

impl SqlShardedCounter {
    /// Creates the table and the rows of `layout` if missing, after checking that rows already
    /// there have the same ranges. A layout with more ranges of the same size adds the new ones.
    ///
    /// # Errors
    ///
    /// [`Error::Name`] for a bad sequence name, [`Error::Schema`] when the table or rows cannot be
    /// created, [`Error::Layout`] when stored rows disagree with `layout` (another layout was used
    /// for this sequence, or fewer ranges: going on could repeat ids).
    pub async fn create(
        store: SqlStore,
        sequence: &str,
        layout: RangeLayout,
        pick: Pick,
    ) -> Result<SqlShardedCounter, Error> {
        validate_name(NameKind::Sequence, sequence)?;
        let layout_error = |reason: String| Error::Layout {
            sequence: sequence.to_owned(),
            reason,
        };
        sharded_rows::ensure_schema(&store)
            .await
            .map_err(Error::Schema)?;
        // Check what is stored before writing anything: a range that differs would overlap.
        let rows = ranges(&store, sequence).await.map_err(Error::Schema)?;
        if rows.len() > layout.ranges as usize {
            return Err(layout_error(format!(
                "{} ranges are stored, the layout has only {}",
                rows.len(),
                layout.ranges
            )));
        }
        for (k, (shard, next, max)) in (0..).zip(&rows) {
            let range = layout.range(k);
            if (*shard, *max) != (sql_i32(k), sql_i64(range.end - 1)) {
                return Err(layout_error(format!(
                    "range {shard} ends at {max} in the database; range {k} of the layout ends at {}",
                    range.end - 1
                )));
            }
            if *next < sql_i64(range.start) || *next > sql_i64(range.end) {
                return Err(layout_error(format!(
                    "range {shard} is at {next}, outside {}..={}",
                    range.start, range.end
                )));
            }
        }
        // Then add the ranges that are missing (all of them the first time; more ranges of the
        // same size later is safe: they do not overlap).
        for k in u32::try_from(rows.len()).unwrap_or(u32::MAX)..layout.ranges {
            let range = layout.range(k);
            let (shard, first, max) = (sql_i32(k), sql_i64(range.start), sql_i64(range.end - 1));
            sharded_rows::insert(&store, sequence, shard, first, max)
                .await
                .map_err(Error::Schema)?;
        }
        Ok(SqlShardedCounter {
            store,
            sequence: sequence.to_owned(),
            layout,
            pick,
            turn: AtomicU32::new(0),
            rng: Mutex::new(StdRng::seed_from_u64(rand_seed())),
            used_up: Mutex::new(vec![false; layout.ranges as usize]),
        })
    }

    /// The layout.
    pub fn layout(&self) -> RangeLayout {
        self.layout
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

    /// Exactly `n` values from range `k`, or `None` when it has fewer left.
    async fn take_from(&self, k: u32, n: u64) -> Result<Option<u64>, IdError> {
        let n_sql = i64::try_from(n).map_err(|_| IdError::InvalidCount {
            count: n,
            reason: "too many ids for one call",
        })?;
        let shard = sql_i32(k);
        let taken = sharded_rows::take(&self.store, &self.sequence, shard, n_sql)
            .await
            .map_err(IdError::store)?;
        let Some(next) = taken else {
            if n == 1 {
                self.used_up.lock().unwrap_or_else(|e| e.into_inner())[k as usize] = true;
            }
            return Ok(None);
        };
        let range = self.layout.range(k);
        let first = u64::try_from(next)
            .ok()
            .and_then(|next| next.checked_sub(n))
            .filter(|first| range.start <= *first && first + n <= range.end)
            .ok_or_else(|| {
                IdError::store(format!(
                    "range {k} of {} returned {next}, outside {}..{}: corrupt row",
                    self.sequence, range.start, range.end
                ))
            })?;
        Ok(Some(first))
    }

    async fn take(&self, n: u64) -> Result<IdBatch<u64>, IdError> {
        if n == 0 {
            return Err(IdError::InvalidCount {
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
        let rows = ranges(&self.store, &self.sequence)
            .await
            .map_err(IdError::store)?;
        for (shard, next, max) in rows {
            let (Ok(k), Ok(next), Ok(max)) = (
                u32::try_from(shard),
                u64::try_from(next),
                u64::try_from(max),
            ) else {
                continue;
            };
            let available = (max + 1).saturating_sub(next).min(left);
            if available > 0
                && let Some(first) = self.take_from(k, available).await?
            {
                batch.push_run(first, available);
                left -= available;
            }
            if left == 0 {
                return Ok(batch);
            }
        }
        Err(IdError::Exhausted(format!(
            "the {} ranges of {} cannot give {n} more ids (taken for this call and lost: {})",
            self.layout.ranges,
            self.sequence,
            n - left
        )))
    }
}

impl IdGenerator for SqlShardedCounter {
    type Id = u64;

    async fn next_id(&self) -> Result<u64, IdError> {
        let batch = self.take(1).await?;
        batch
            .iter()
            .next()
            .ok_or_else(|| IdError::Exhausted("no id".into()))
    }

    async fn next_ids(&self, n: u64) -> Result<IdBatch<u64>, IdError> {
        self.take(n).await
    }
}

async fn ranges(store: &SqlStore, sequence: &str) -> Result<Vec<(i32, i64, i64)>, sqlx::Error> {
    sharded_rows::list(store, sequence).await
}

/// Range numbers fit in `i32`: a layout has at most `u32::MAX` ranges, checked by `sql_i32`.
fn sql_i32(k: u32) -> i32 {
    i32::try_from(k).unwrap_or(i32::MAX)
}

/// Values fit in `i64`: `RangeLayout::new` checks that the last is at most `i64::MAX`.
fn sql_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn rand_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::process::id())
}
