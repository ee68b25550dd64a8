//! [`OneAtATime`]: the one-at-a-time counter, the simplest strategy of all: a
//! `u64` incremented in the store for every id (1, 2, 3, …), continuous and monotonic, one round
//! trip per id. The rule is kept here once; a backend supplies [`CounterRow`].

use super::backend::CounterRow;
use super::generator_error::Error;
use super::id_generator::{IdBatch, IdGenerator};

/// A `u64` counter incremented in the store for every id: continuous (1, 2, 3, …) and monotonic,
/// correct under any concurrency, one round trip per id. Values past 2^60 are refused
/// ([`ErrorDetail::Exhausted`](crate::ErrorDetail::Exhausted)), never wrapped.
#[derive(Debug, Clone)]
pub struct OneAtATime<S> {
    store: S,
    scope: String,
    sequence: String,
}

impl<S: CounterRow> OneAtATime<S> {
    /// The counter of (scope, sequence) in `store`.
    pub fn new(store: S, scope: &str, sequence: &str) -> Self {
        OneAtATime {
            store,
            scope: scope.to_owned(),
            sequence: sequence.to_owned(),
        }
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The scope and the sequence.
    pub fn name(&self) -> (&str, &str) {
        (&self.scope, &self.sequence)
    }

    /// `n` values: the first and how many.
    async fn take(&self, n: u64) -> Result<(u64, u64), Error> {
        let block = self
            .store
            .reserve_counter(&self.scope, &self.sequence, n)
            .await
            .map_err(Error::from)?;
        if block.era() != 0 {
            return Err(Error::exhausted(format!(
                "counter {}/{} passed 2^60",
                self.scope, self.sequence
            )));
        }
        Ok((block.start(), block.len()))
    }
}

impl<S: CounterRow> IdGenerator for OneAtATime<S> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorDetail;
    use crate::authority::Block;
    use crate::error::AuthorityError;

    /// A counter row that hands out what it is told to.
    struct Scripted(Block);

    impl CounterRow for Scripted {
        async fn reserve_counter(&self, _: &str, _: &str, _: u64) -> Result<Block, AuthorityError> {
            Ok(self.0)
        }
    }

    #[tokio::test]
    async fn a_counter_past_its_first_era_is_exhausted_never_wrapped() {
        let fine = OneAtATime::new(Scripted(Block::new(0, 0, 5, 3).unwrap()), "s", "q");
        assert_eq!(fine.next_id().await.unwrap(), 5);
        let batch = fine.next_ids(3).await.unwrap();
        assert_eq!(batch.iter().collect::<Vec<_>>(), [5, 6, 7]);
        let rolled = OneAtATime::new(Scripted(Block::new(1, 0, 1, 1).unwrap()), "s", "q");
        let exhausted = rolled.next_id().await.unwrap_err();
        assert!(
            matches!(exhausted.detail(), ErrorDetail::Exhausted(_)),
            "{exhausted}"
        );
    }
}
