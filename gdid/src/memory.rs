//! `memory:` stores: in this process only, for tests and examples, as a [`Backend`].
#![cfg(feature = "engine")]

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use gdid_engine::backend::numbering::{COUNTER_KEY, MemoryRecord, NumberRecord};
use gdid_engine::durability::{Durability, Setting, Verdict};
use gdid_engine::sequences::Sequence;
use gdid_engine::{
    Authority, AuthorityError, Block, CounterState, DynAuthority, MemoryAuthority, OneAtATime,
    SharedIdGenerator,
    backend::{BoxFuture, CounterKey, CounterRow},
};

use crate::backend::Backend;
use crate::error::Sorted;

/// The named memory stores of this process (`memory:NAME`): opening one name twice opens one
/// store.
static NAMED: LazyLock<Mutex<HashMap<String, Arc<MemoryBackend>>>> = LazyLock::new(Mutex::default);

/// An in-process store: its number record, an authority per number, and its one-at-a-time
/// counters (apart from every authority's blocks, as a database store keeps them).
#[derive(Debug)]
pub(crate) struct MemoryBackend {
    record: MemoryRecord,
    authorities: Mutex<HashMap<u8, Arc<MemoryAuthority>>>,
    counters: Arc<MemoryAuthority>,
}

impl MemoryBackend {
    /// The store of `name` (what follows `memory:` in the URL; none for `memory` or `memory:`): a
    /// new one, or for a name this process opened before, that store. It is always reachable:
    /// `_lazy` changes nothing.
    pub(crate) fn open(name: &str, label: &str, _lazy: bool) -> Arc<MemoryBackend> {
        let fresh = || {
            Arc::new(MemoryBackend {
                record: MemoryRecord::new(label),
                authorities: Mutex::default(),
                counters: Arc::new(MemoryAuthority::new(COUNTER_KEY)),
            })
        };
        match Some(name.trim()).filter(|n| !n.is_empty()) {
            None => fresh(),
            Some(name) => NAMED
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(name.to_owned())
                .or_insert_with(fresh)
                .clone(),
        }
    }

    /// The store's authority `number`, made on first use.
    fn numbered(&self, number: u8) -> Arc<MemoryAuthority> {
        self.authorities
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(number)
            .or_insert_with(|| Arc::new(MemoryAuthority::new(number)))
            .clone()
    }
}

/// The one-at-a-time counters of a memory store.
#[derive(Debug, Clone)]
struct MemoryCounters(Arc<MemoryAuthority>);

impl CounterRow for MemoryCounters {
    async fn reserve_counter(
        &self,
        scope: &str,
        sequence: &str,
        n: u64,
    ) -> Result<Block, AuthorityError> {
        self.0.allocate(scope, sequence, n).await
    }
}

impl Backend for MemoryBackend {
    fn record(&self) -> &dyn NumberRecord {
        &self.record
    }

    fn authority(&self, number: u8) -> Arc<dyn DynAuthority> {
        self.numbered(number)
    }

    fn one_at_a_time(&self, scope: &str, sequence: &str) -> SharedIdGenerator<u64> {
        Arc::new(OneAtATime::new(
            MemoryCounters(self.counters.clone()),
            scope,
            sequence,
        ))
    }

    fn raise_floor<'a>(
        &'a self,
        key: CounterKey<'a>,
        floor: CounterState,
    ) -> BoxFuture<'a, Result<bool, AuthorityError>> {
        let counters = if key.key == COUNTER_KEY {
            self.counters.clone()
        } else {
            self.numbered(key.key)
        };
        Box::pin(async move { counters.raise_floor(key.scope, key.sequence, floor).await })
    }

    fn sequences(&self) -> BoxFuture<'_, Result<Vec<Sequence>, AuthorityError>> {
        let mut authorities: Vec<(u8, Arc<MemoryAuthority>)> = self
            .authorities
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(number, authority)| (*number, authority.clone()))
            .collect();
        authorities.push((COUNTER_KEY, self.counters.clone()));
        authorities.sort_by_key(|(number, _)| *number);
        Box::pin(async move {
            let mut sequences = Vec::new();
            for (_, authority) in authorities {
                sequences.extend(gdid_engine::sequences::list(&*authority).await?);
            }
            Ok(sequences)
        })
    }

    /// Nothing of it outlives the process.
    fn durability(&self) -> BoxFuture<'_, Result<Durability, Sorted>> {
        Box::pin(std::future::ready(Ok(Durability::new(
            "memory, in this process",
            vec![Setting::new(
                "memory",
                "in this process only",
                Verdict::IssuedAgain,
                "every counter starts again with the next process, which issues the same ids: \
                 for tests and examples; use a database store",
            )],
        ))))
    }

    fn is_duplicate_key(&self, _error: &(dyn std::error::Error + 'static)) -> bool {
        false
    }
}
