//! [`SqlCounter`]: the one-at-a-time counter, the naive baseline.

use gdid_core::generator::{Error, IdBatch, IdGenerator};

use crate::authority::{COUNTER_KEY, SqlAuthority};
use crate::counters::RowStart;

/// A `u64` counter incremented in the database for every id: continuous (1, 2, 3, …) and
/// monotonic, correct under any concurrency, and one database round trip per id. The baseline
/// the block strategies are measured against.
///
/// It shares the `gdid_counters` table with [`SqlAuthority`]: its row per (scope, sequence) is
/// keyed by authority 0 whatever the store's authority number, so renumbering a store never
/// starts a counter again. Its row starts after the sequence's other rows (a counter made, before
/// it was keyed 0, from an authority numbered otherwise goes on from where it was). A store that
/// is authority 0 draws its blocks of a sequence from the same row: both stay unique.
#[derive(Debug, Clone)]
pub struct SqlCounter {
    authority: SqlAuthority,
    scope: String,
    sequence: String,
}

impl SqlCounter {
    /// A counter of (scope, sequence) on the authority's store (its number plays no part).
    pub fn new(authority: SqlAuthority, scope: &str, sequence: &str) -> Self {
        SqlCounter {
            authority,
            scope: scope.to_owned(),
            sequence: sequence.to_owned(),
        }
    }

    async fn take(&self, n: u64) -> Result<(u64, u64), Error> {
        let block = self
            .authority
            .reserve(
                COUNTER_KEY,
                &self.scope,
                &self.sequence,
                n,
                RowStart::AfterSiblings,
            )
            .await
            .map_err(Error::from)?;
        if block.era() != 0 {
            return Err(Error::Exhausted(format!(
                "counter {}/{} passed 2^60",
                self.scope, self.sequence
            )));
        }
        Ok((block.start(), block.len()))
    }
}

impl IdGenerator for SqlCounter {
    type Id = u64;

    async fn next_id(&self) -> Result<u64, Error> {
        Ok(self.take(1).await?.0)
    }

    async fn next_ids(&self, n: u64) -> Result<IdBatch<u64>, Error> {
        let (first, len) = self.take(n).await?;
        let mut batch = IdBatch::consecutive_u64();
        batch.push_run(first, len);
        Ok(batch)
    }
}
