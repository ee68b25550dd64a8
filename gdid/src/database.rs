//! [`Database`]: the one [`Backend`] of every database store (SQL or MongoDB), made of what each
//! supplies ([`Driver`]).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use gdid_engine::backend::numbering::{COUNTER_KEY, NumberRecord};
use gdid_engine::durability::Durability;
use gdid_engine::sequences::{self, Sequence};
use gdid_engine::windows::WindowShard;
use gdid_engine::{
    Authority, AuthorityError, CounterState, DynAuthority, IdGenerator, OneAtATime, Pick,
    RangeLayout, SharedIdGenerator,
    backend::{BoxFuture, CounterKey, CounterRow, CounterStore, raise_floor},
};

use crate::backend::{Backend, Done, Sharded};
use crate::error::Sorted;
use crate::shard::StoreShard;

/// What a database store (SQL or MongoDB) supplies: a [`Backend`] is made of it once, by
/// [`Database`].
pub(crate) trait Driver: Send + Sync + fmt::Debug + 'static {
    /// The store's authority, which is also its one-at-a-time counters' row.
    type Authority: Authority + CounterRow + CounterStore + Clone + fmt::Debug + 'static;
    /// The sharded counter.
    type Sharded: IdGenerator<Id = u64> + 'static;
    /// The store as a shard of hi-lo windows.
    type Shard: WindowShard + 'static;

    /// Where the store records its authority number.
    fn record(&self) -> &dyn NumberRecord;

    /// The store as authority `number`: an error when it is past 15.
    fn numbered(&self, number: u8) -> Result<Self::Authority, impl std::error::Error>;

    /// The sharded counter of `sequence`, its layout created if missing.
    fn sharded(
        &self,
        sequence: &str,
        layout: RangeLayout,
        pick: Pick,
    ) -> impl Future<Output = Result<Self::Sharded, Sorted>> + Send;

    /// Moves every range of `sequence` forward by `by` values (`Backend::skip_ranges`), or says
    /// why the store does not.
    fn skip_ranges<'a>(&'a self, sequence: &'a str, by: u64) -> BoxFuture<'a, Result<u64, Sorted>>;

    /// Its server's settings, judged ([`Backend::durability`]).
    fn durability(&self) -> BoxFuture<'_, Result<Durability, Sorted>>;

    /// The store as a shard, and its label.
    fn shard(&self) -> (String, Self::Shard);

    /// Whether `error` is this kind of store's duplicate key (its driver's error).
    fn is_duplicate_key(error: &(dyn std::error::Error + 'static)) -> bool;

    /// Whether the store holds its counter records' table or collection: `false` only for a
    /// store opened creating nothing where none was ever made (a collection that does not exist
    /// reads as empty: MongoDB keeps the default).
    fn has_counters(&self) -> BoxFuture<'_, Result<bool, AuthorityError>> {
        Box::pin(std::future::ready(Ok(true)))
    }
}

/// A database store as a [`Backend`], with its authority of each number asked for: one
/// authority (and its clones) claims its number in the store once, before its first block.
#[derive(Debug)]
pub(crate) struct Database<S: Driver> {
    store: S,
    authorities: Mutex<HashMap<u8, S::Authority>>,
}

/// `store` as authority `number`, checked against its record before the first block. Numbers
/// are checked before a backend is asked for an authority.
fn authority_of<S: Driver>(store: &S, number: u8) -> S::Authority {
    store
        .numbered(number)
        .unwrap_or_else(|_| unreachable!("authority number {number} was checked"))
}

impl<S: Driver> Database<S> {
    /// `store` as a backend.
    pub(crate) fn new(store: S) -> Self {
        Database {
            store,
            authorities: Mutex::default(),
        }
    }

    /// The store as authority `number`.
    fn numbered(&self, number: u8) -> S::Authority {
        self.authorities
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(number)
            .or_insert_with(|| authority_of(&self.store, number))
            .clone()
    }
}

impl<S: Driver> Backend for Database<S> {
    fn record(&self) -> &dyn NumberRecord {
        self.store.record()
    }

    fn authority(&self, number: u8) -> Arc<dyn DynAuthority> {
        Arc::new(self.numbered(number))
    }

    fn one_at_a_time(&self, scope: &str, sequence: &str) -> SharedIdGenerator<u64> {
        // The counters' row is keyed `COUNTER_KEY` whatever the store's number, and reserving
        // it claims no number: an authority of that key only reaches the row.
        let row = authority_of(&self.store, COUNTER_KEY);
        Arc::new(OneAtATime::new(row, scope, sequence))
    }

    fn sharded<'a>(&'a self, sequence: &'a str, layout: RangeLayout, pick: Pick) -> Sharded<'a> {
        Some(Box::pin(async move {
            let ids = self.store.sharded(sequence, layout, pick).await?;
            Ok(Arc::new(ids) as SharedIdGenerator<u64>)
        }))
    }

    fn skip_ranges<'a>(&'a self, sequence: &'a str, by: u64) -> Done<'a, u64> {
        Some(self.store.skip_ranges(sequence, by))
    }

    fn shard(&self) -> Option<StoreShard> {
        let (label, shard) = self.store.shard();
        Some(StoreShard::new(&label, shard))
    }

    fn raise_floor<'a>(
        &'a self,
        key: CounterKey<'a>,
        floor: CounterState,
    ) -> BoxFuture<'a, Result<bool, AuthorityError>> {
        Box::pin(async move {
            // The record of `key` is reached without claiming a number: the store's number was
            // settled when it was opened, and `COUNTER_KEY` is the counters' row.
            let record = authority_of(&self.store, key.key);
            raise_floor(&record, key, floor).await
        })
    }

    fn sequences(&self) -> BoxFuture<'_, Result<Vec<Sequence>, AuthorityError>> {
        Box::pin(async move {
            // A store opened creating nothing, without its table, has no records.
            if !self.store.has_counters().await? {
                return Ok(Vec::new());
            }
            sequences::list(&authority_of(&self.store, COUNTER_KEY)).await
        })
    }

    fn durability(&self) -> BoxFuture<'_, Result<Durability, Sorted>> {
        self.store.durability()
    }

    fn is_duplicate_key(&self, error: &(dyn std::error::Error + 'static)) -> bool {
        std::iter::successors(Some(error), |e| e.source()).any(S::is_duplicate_key)
    }
}
