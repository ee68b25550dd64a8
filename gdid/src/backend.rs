//! [`Backend`]: what each kind of store does for a [`Store`](crate::Store), implemented once per
//! kind (`database.rs` for SQL and MongoDB stores, `memory.rs`) and held as `Arc<dyn Backend>`,
//! so that the store's methods never ask which kind it is.
#![cfg(feature = "engine")]

use std::fmt;
use std::sync::Arc;

use gdid_engine::backend::numbering::NumberRecord;
use gdid_engine::durability::Durability;
use gdid_engine::sequences::Sequence;
use gdid_engine::{
    AuthorityError, CounterState, DynAuthority, Pick, RangeLayout, SharedIdGenerator,
    backend::{BoxFuture, CounterKey},
};

use crate::error::Sorted;
use crate::shard::StoreShard;

/// What a [`Backend`] does for a strategy of some stores only: `None` when this store does not
/// do it, or the work to await.
pub(crate) type Done<'a, T> = Option<BoxFuture<'a, Result<T, Sorted>>>;

/// The sharded counter a [`Backend`] makes, when it keeps ranges.
pub(crate) type Sharded<'a> = Done<'a, SharedIdGenerator<u64>>;

/// A store connected (or, for a failover store that is down, set up to connect on first use),
/// its schema created where it could be: every strategy it hands out.
pub(crate) trait Backend: Send + Sync + fmt::Debug {
    /// Where the store records its authority number.
    fn record(&self) -> &dyn NumberRecord;

    /// The store as authority `number` (at most 15), claimed in the store before its first
    /// block.
    fn authority(&self, number: u8) -> Arc<dyn DynAuthority>;

    /// The one-at-a-time counter of (`scope`, `sequence`): the store's, whatever its authority
    /// number, and claiming none.
    fn one_at_a_time(&self, scope: &str, sequence: &str) -> SharedIdGenerator<u64>;

    /// The sharded counter of `sequence`, its layout created if missing; `None` (the default)
    /// when the store keeps no ranges.
    fn sharded<'a>(&'a self, sequence: &'a str, layout: RangeLayout, pick: Pick) -> Sharded<'a> {
        let _ = (sequence, layout, pick);
        None
    }

    /// Moves every range of `sequence` forward by `by` values, as after a failover or a restore
    /// (`gdid_sql::SqlShardedCounter::skip`): how many ranges moved. `None` (the default) when
    /// the store keeps no ranges whose server can switch under them.
    fn skip_ranges<'a>(&'a self, sequence: &'a str, by: u64) -> Done<'a, u64> {
        let _ = (sequence, by);
        None
    }

    /// The store as a shard of hi-lo windows; `None` (the default) when it keeps no windows.
    fn shard(&self) -> Option<StoreShard> {
        None
    }

    /// Raises the floor of the counter record `key` (keyed by an authority number, or by
    /// `COUNTER_KEY` for the one-at-a-time counter) to `floor`
    /// (`gdid_engine::backend::raise_floor`).
    fn raise_floor<'a>(
        &'a self,
        key: CounterKey<'a>,
        floor: CounterState,
    ) -> BoxFuture<'a, Result<bool, AuthorityError>>;

    /// Every counter record of the store (`gdid_engine::sequences::list`).
    fn sequences(&self) -> BoxFuture<'_, Result<Vec<Sequence>, AuthorityError>>;

    /// Whether the store's acknowledged blocks survive a crash and a failover: its server's
    /// settings, judged (`gdid check`).
    fn durability(&self) -> BoxFuture<'_, Result<Durability, Sorted>>;

    /// The largest block the store's authority takes (an authority server's `--max-block`);
    /// `None`: no limit of its own.
    fn max_block(&self) -> Option<u64> {
        None
    }

    /// Whether `error`, or an error it comes from, is this kind of store's duplicate key.
    fn is_duplicate_key(&self, error: &(dyn std::error::Error + 'static)) -> bool;
}
