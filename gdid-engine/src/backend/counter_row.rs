//! [`CounterRow`]: the store operation behind the one-at-a-time counter
//! ([`OneAtATime`](crate::OneAtATime)).

use std::future::Future;

use crate::authority::Block;
use crate::error::AuthorityError;

/// The store operation behind a [`OneAtATime`](crate::OneAtATime) counter.
pub trait CounterRow: Send + Sync {
    /// Reserves `n` consecutive values of the counter of (scope, sequence), durably, in one
    /// atomic step. The counter is the store's, not an authority's: its row is keyed
    /// [`COUNTER_KEY`](crate::backend::numbering::COUNTER_KEY) whatever the store's authority
    /// number, and a missing row starts after the sequence's other rows (a counter made before it
    /// was keyed 0 goes on from where it was).
    fn reserve_counter(
        &self,
        scope: &str,
        sequence: &str,
        n: u64,
    ) -> impl Future<Output = Result<Block, AuthorityError>> + Send;
}
