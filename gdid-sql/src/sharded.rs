//! [`SqlShardedCounter`]: N rows of the `gdid_ranges` table, each owning a fixed range of values
//! (see `gdid_core::generator::ranges` for the scheme). This file holds the two statements; the
//! pick, the skipping and the splitting are gdid-core's.

use gdid_core::generator::{
    Error as IdError, IdBatch, IdGenerator, NameKind, Pick, RangeLayout, RangeState, RangeStore,
    ShardedCounter, validate_name,
};

use crate::error::Error;
use crate::sharded_rows;
use crate::store::SqlStore;
use crate::stored::integer_in;

/// The ranges of one sequence in a SQL store.
#[derive(Debug)]
pub struct SqlRanges {
    store: SqlStore,
    sequence: String,
}

impl RangeStore for SqlRanges {
    fn sequence(&self) -> &str {
        &self.sequence
    }

    async fn take(&self, range: u32, n: u64) -> Result<Option<u64>, IdError> {
        let n = i64::try_from(n).map_err(|_| IdError::InvalidCount {
            count: n,
            reason: "too many ids for one call",
        })?;
        let shard = i32::try_from(range).map_err(IdError::store)?;
        let next = sharded_rows::take(&self.store, &self.sequence, shard, n)
            .await
            .map_err(IdError::store)?;
        next.map(|next| {
            u64::try_from(next).map_err(|_| {
                self.corrupt(i64::from(shard), &format!("next_value is {next}, negative"))
            })
        })
        .transpose()
    }

    async fn list(&self) -> Result<Vec<RangeState>, IdError> {
        let rows = sharded_rows::list(&self.store, &self.sequence)
            .await
            .map_err(IdError::store)?;
        rows.into_iter()
            .map(|(shard, next, max)| {
                let corrupt = |reason: String| self.corrupt(i64::from(shard), &reason);
                let range = u32::try_from(shard)
                    .map_err(|_| corrupt(format!("shard is {shard}, negative")))?;
                let next = integer_in("next_value", next.as_deref(), 0..=i64::MAX)
                    .map_err(&corrupt)?
                    .unsigned_abs();
                let max = integer_in("max_value", max.as_deref(), 0..=i64::MAX)
                    .map_err(&corrupt)?
                    .unsigned_abs();
                if next > max + 1 {
                    return Err(corrupt(format!(
                        "next_value is {next}, beyond the end of its range (max_value {max})"
                    )));
                }
                Ok(RangeState { range, next, max })
            })
            .collect()
    }
}

impl SqlRanges {
    /// The error for the row of `shard` holding what `reason` says.
    fn corrupt(&self, shard: i64, reason: &str) -> IdError {
        IdError::Corrupt(format!(
            "the gdid_ranges row (sequence {:?}, shard {shard}): {reason}",
            self.sequence
        ))
    }
}

/// A `u64` id generator over N fixed ranges of the `gdid_ranges` table: ids of a fixed number of
/// digits, writers spread over N rows, random or round-robin pick, used-up ranges skipped.
#[derive(Debug)]
pub struct SqlShardedCounter(ShardedCounter<SqlRanges>);

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
        sharded_rows::ensure_schema(&store)
            .await
            .map_err(Error::Schema)?;
        let ranges = SqlRanges {
            store,
            sequence: sequence.to_owned(),
        };
        // Check what is stored before writing anything: a range that differs would overlap.
        let stored = ranges.list().await.map_err(|e| Error::Layout {
            sequence: sequence.to_owned(),
            reason: e.to_string(),
        })?;
        let first_missing = layout
            .check_stored(&stored)
            .map_err(|reason| Error::Layout {
                sequence: sequence.to_owned(),
                reason,
            })?;
        for k in first_missing..layout.ranges() {
            let range = layout.range(k);
            let bound = |v: u64| i64::try_from(v).unwrap_or(i64::MAX); // RangeLayout keeps values in i64
            let shard = i32::try_from(k).unwrap_or(i32::MAX);
            sharded_rows::insert(
                &ranges.store,
                sequence,
                shard,
                bound(range.start),
                bound(range.end - 1),
            )
            .await
            .map_err(Error::Schema)?;
        }
        Ok(SqlShardedCounter(ShardedCounter::new(ranges, layout, pick)))
    }

    /// The layout.
    pub fn layout(&self) -> RangeLayout {
        self.0.layout()
    }
}

impl IdGenerator for SqlShardedCounter {
    type Id = u64;

    async fn next_id(&self) -> Result<u64, IdError> {
        self.0.next_id().await
    }

    async fn next_ids(&self, n: u64) -> Result<IdBatch<u64>, IdError> {
        self.0.next_ids(n).await
    }
}
