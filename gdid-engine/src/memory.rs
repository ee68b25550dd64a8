//! [`MemoryAuthority`]: an authority whose counters live in process memory. It is a
//! [`CounterStore`] like every store's authority: its records are a map, its operations a few
//! lines each, and every rule (sizes, eras, floors, give-backs, names and their spellings) is the
//! engine's, the same as on a database.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::authority::{BoxFuture, CounterState};
use super::error::AuthorityError;
use crate::backend::counter_store::{
    ADVANCED_ERA, Allocations, CounterFields, CounterKey, CounterStart, CounterStore, Numbering,
    STORED_NEXT, StoredCounter, StoredInt, counter_values, raise_floor,
};
use crate::backend::numbering::{NumberCheck, NumberRecord};
use gdid_core::AUTHORITY_MAX;

/// An authority durable only in memory: for tests, examples and benchmarks, never for ids that
/// outlive the process.
///
/// ```
/// use gdid_engine::{Authority, MemoryAuthority};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let authority = MemoryAuthority::new(4);
/// let block = authority.allocate("shop", "order", 100).await?;
/// assert_eq!((block.authority(), block.start(), block.len()), (4, 1, 100));
/// assert_eq!(authority.allocate("shop", "order", 1).await?.start(), 101);
/// # Ok(())
/// # }
/// ```
///
/// It is a [`CounterStore`](crate::backend::CounterStore): the engine's
/// [`Authority`](crate::Authority), [`CounterRow`](crate::backend::CounterRow),
/// [`raise_floor`](crate::backend::raise_floor) and [`sequences::list`](crate::sequences::list)
/// work on it as on a database's authority.
///
/// Clones share the store, the check of the number and the count of
/// [`allocations`](Self::allocations).
#[derive(Debug, Clone)]
pub struct MemoryAuthority {
    numbering: Numbering<MemoryStore>,
    allocations: Arc<AtomicU64>,
    max_sequences_per_scope: Option<u64>,
}

/// A store in process memory: counter records and an authority number, shared by the
/// authorities made on it ([`MemoryAuthority::on`]) and by its clones. Its
/// [`NumberRecord`] is the store's record of its number.
///
/// ```
/// use gdid_engine::{Authority, MemoryAuthority, MemoryStore};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let store = MemoryStore::new();
/// assert!(MemoryAuthority::on(&store, 2).allocate("shop", "orders", 1).await.is_ok());
/// // The store is authority 2 now: another number is refused before any id is issued.
/// assert!(MemoryAuthority::on(&store, 3).allocate("shop", "orders", 1).await.is_err());
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemoryStore(Arc<Mutex<Records>>);

/// What a memory store holds.
#[derive(Debug, Default)]
struct Records {
    /// The recorded authority number.
    number: Option<u8>,
    /// The counter records by (key, scope, sequence): the era and next counter, and the
    /// allocations ([`StoredCounter`]'s), as a store holds them.
    counters: BTreeMap<(u8, String, String), Record>,
}

/// One counter record.
#[derive(Debug, Clone)]
struct Record {
    values: [StoredInt; 2],
    allocations: [StoredInt; 3],
}

impl Record {
    /// The era and next counter, when they are what an authority writes and can still issue
    /// from (the condition of every conditional write).
    fn live(&self) -> Option<(i64, i64)> {
        match self.values {
            [StoredInt::Integer(era), StoredInt::Integer(next)]
                if ADVANCED_ERA.contains(&era) && STORED_NEXT.contains(&next) =>
            {
                Some((era, next))
            }
            _ => None,
        }
    }
}

impl MemoryStore {
    /// A store with no counter and no recorded number.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    fn lock(&self) -> MutexGuard<'_, Records> {
        // Every update is one insert or assignment of a complete value: a panic while holding
        // the lock cannot leave a half-written record.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The map key of `key`.
    fn of(key: &CounterKey<'_>) -> (u8, String, String) {
        (key.key, key.scope.to_owned(), key.sequence.to_owned())
    }

    /// Writes the record of `key` as `values`, behind its authorities' backs (a new one if there
    /// is none): what a test does to a database's row.
    pub fn write(&self, key: &CounterKey<'_>, values: [StoredInt; 2]) {
        let allocations = [StoredInt::Missing, StoredInt::Missing, StoredInt::Missing];
        let mut records = self.lock();
        let record = records.counters.entry(Self::of(key)).or_insert(Record {
            values: values.clone(),
            allocations,
        });
        record.values = values;
    }

    /// Changes the record of `key` as `change` says, when there is one: whether it changed.
    fn change(&self, key: &CounterKey<'_>, change: impl FnOnce(&mut Record) -> bool) -> bool {
        let mut records = self.lock();
        records.counters.get_mut(&Self::of(key)).is_some_and(change)
    }

    /// Removes the record of `key`: its values, if there was one.
    pub fn remove(&self, key: &CounterKey<'_>) -> Option<[StoredInt; 2]> {
        let removed = self.lock().counters.remove(&Self::of(key));
        removed.map(|record| record.values)
    }

    /// Removes the recorded authority number (a store of before numbers were recorded).
    pub fn forget_number(&self) {
        self.lock().number = None;
    }
}

impl NumberRecord for MemoryStore {
    fn store(&self) -> String {
        "memory".into()
    }

    fn recorded_number(&self) -> BoxFuture<'_, Result<Option<u8>, AuthorityError>> {
        let number = self.lock().number;
        Box::pin(std::future::ready(Ok(number)))
    }

    fn record_number(&self, number: u8) -> BoxFuture<'_, Result<(), AuthorityError>> {
        self.lock().number.get_or_insert(number);
        Box::pin(std::future::ready(Ok(())))
    }

    fn numbers_in_counters(&self) -> BoxFuture<'_, Result<Vec<u8>, AuthorityError>> {
        let mut numbers: Vec<u8> = self
            .lock()
            .counters
            .keys()
            .map(|(key, _, _)| *key)
            .filter(|key| *key != crate::backend::numbering::COUNTER_KEY)
            .collect();
        numbers.dedup();
        Box::pin(std::future::ready(Ok(numbers)))
    }
}

impl MemoryAuthority {
    /// A new authority with no counters, on a store of its own that records `number`.
    ///
    /// # Panics
    ///
    /// When `number` is above 15.
    pub fn new(number: u8) -> Self {
        assert!(
            number <= AUTHORITY_MAX,
            "authority number {number} is above 15"
        );
        let store = MemoryStore::new();
        store.lock().number = Some(number);
        MemoryAuthority::with(store, NumberCheck::made(number))
    }

    /// Authority `number` on `store`: its number is checked against the one the store records
    /// (recorded if there is none) before the first block, as an authority of a database's is
    /// (see [`numbering`](crate::backend::numbering)).
    ///
    /// # Panics
    ///
    /// When `number` is above 15.
    pub fn on(store: &MemoryStore, number: u8) -> Self {
        assert!(
            number <= AUTHORITY_MAX,
            "authority number {number} is above 15"
        );
        MemoryAuthority::with(store.clone(), NumberCheck::new(number))
    }

    fn with(store: MemoryStore, check: NumberCheck) -> Self {
        MemoryAuthority {
            numbering: Numbering::new(store, check, "memory"),
            allocations: Arc::default(),
            max_sequences_per_scope: None,
        }
    }

    /// This authority, creating a record of a sequence new to its scope only while the scope
    /// holds fewer than `most` others ([`CounterStore::max_sequences_per_scope`]).
    ///
    /// ```
    /// use gdid_engine::{Authority, MemoryAuthority};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let authority = MemoryAuthority::new(1).with_max_sequences_per_scope(2);
    /// for sequence in ["orders", "invoices"] {
    ///     assert!(authority.allocate("shop", sequence, 10).await.is_ok());
    /// }
    /// let refused = authority.allocate("shop", "carts", 10).await.unwrap_err();
    /// assert!(refused.to_string().contains("scope \"shop\", which holds 2 already"));
    /// // The sequences it holds go on; another scope has room of its own.
    /// assert_eq!(authority.allocate("shop", "orders", 10).await.unwrap().start(), 11);
    /// assert!(authority.allocate("billing", "carts", 10).await.is_ok());
    /// # }
    /// ```
    pub fn with_max_sequences_per_scope(mut self, most: u64) -> Self {
        self.max_sequences_per_scope = Some(most);
        self
    }

    /// The store: to make more authorities on it, or to read and write it behind this one's back
    /// in tests.
    pub fn store(&self) -> &MemoryStore {
        self.numbering.record()
    }

    /// The authority number (the key of its records of GDIDs).
    fn own_number(&self) -> u8 {
        self.numbering.check().number()
    }

    /// Sets the stored state of (scope, sequence), e.g. near `COUNTER_MAX` to test era rollover.
    pub fn with_state(self, scope: &str, sequence: &str, state: CounterState) -> Self {
        let key = CounterKey::new(self.own_number(), scope, sequence);
        self.store().write(
            &key,
            [
                StoredInt::Integer(i64::from(state.era)),
                StoredInt::Integer(i64::try_from(state.next).unwrap_or(i64::MAX)),
            ],
        );
        self
    }

    /// The stored state of (scope, sequence), if it was ever used and holds a state.
    pub fn state(&self, scope: &str, sequence: &str) -> Option<CounterState> {
        let key = CounterKey::new(self.own_number(), scope, sequence);
        let records = self.store().lock();
        records
            .counters
            .get(&MemoryStore::of(&key))
            .and_then(state_of)
    }

    /// Raises the floor of (scope, sequence) to `floor`: the engine's
    /// [`raise_floor`](crate::backend::raise_floor), as on a store. A missing counter is made at
    /// the floor; whether the counter moved or was made.
    ///
    /// ```
    /// use gdid_engine::{Authority, MemoryAuthority, CounterState};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let authority = MemoryAuthority::new(1);
    /// assert!(authority.raise_floor("shop", "order", CounterState { era: 0, next: 500 }).await?);
    /// assert_eq!(authority.allocate("shop", "order", 1).await?.start(), 500);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`raise_floor`](crate::backend::raise_floor): a bad name, a floor outside the counter
    /// space, [`AuthorityError::FloorBelow`].
    pub async fn raise_floor(
        &self,
        scope: &str,
        sequence: &str,
        floor: CounterState,
    ) -> Result<bool, AuthorityError> {
        raise_floor(
            self,
            CounterKey::new(self.own_number(), scope, sequence),
            floor,
        )
        .await
    }

    /// Every counter of this authority's number that holds a state, as
    /// `((scope, sequence), state)`, sorted.
    pub fn states(&self) -> Vec<((String, String), CounterState)> {
        let number = self.own_number();
        self.store()
            .lock()
            .counters
            .iter()
            .filter(|((key, _, _), _)| *key == number)
            .filter_map(|((_, scope, sequence), record)| {
                Some(((scope.clone(), sequence.clone()), state_of(record)?))
            })
            .collect()
    }

    /// How many blocks this authority has handed out.
    pub fn allocations(&self) -> u64 {
        self.allocations.load(Ordering::Relaxed)
    }
}

/// The state a record holds, when it holds one.
fn state_of(record: &Record) -> Option<CounterState> {
    match &record.values {
        [StoredInt::Integer(era), StoredInt::Integer(next)] => Some(CounterState {
            era: u32::try_from(*era).ok()?,
            next: u64::try_from(*next).ok()?,
        }),
        _ => None,
    }
}

impl CounterStore for MemoryAuthority {
    const FIELDS: CounterFields = CounterFields {
        era: "era",
        next: "next",
    };

    type Numbers = MemoryStore;

    fn numbering(&self) -> &Numbering<MemoryStore> {
        &self.numbering
    }

    fn max_sequences_per_scope(&self) -> Option<u64> {
        self.max_sequences_per_scope
    }

    fn record_name(&self, key: &CounterKey<'_>) -> String {
        let CounterKey {
            key,
            scope,
            sequence,
        } = key;
        format!("the memory counter (authority {key}, scope {scope:?}, sequence {sequence:?})")
    }

    /// The era and next counter move as [`CounterState::reserve`] moves them (the era goes up by
    /// one when the block would pass `COUNTER_MAX`).
    async fn advance(
        &self,
        key: &CounterKey<'_>,
        size: i64,
        at: Allocations,
    ) -> Result<Option<[StoredInt; 2]>, AuthorityError> {
        let mut records = self.store().lock();
        let Some(record) = records.counters.get_mut(&MemoryStore::of(key)) else {
            return Ok(None);
        };
        let Some((era, next)) = record.live() else {
            return Ok(None);
        };
        let at_state = CounterState {
            era: u32::try_from(era).map_err(|_| AuthorityError::Exhausted)?,
            next: next.unsigned_abs(),
        };
        let (_, moved) = at_state.reserve(key.key, size.unsigned_abs())?;
        let previous = record.allocations[0].clone();
        record.values = [
            StoredInt::Integer(i64::from(moved.era)),
            StoredInt::Integer(i64::try_from(moved.next).unwrap_or(i64::MAX)),
        ];
        record.allocations = [
            StoredInt::Integer(at.at),
            previous,
            StoredInt::Integer(size),
        ];
        self.allocations.fetch_add(1, Ordering::Relaxed);
        Ok(Some(record.values.clone()))
    }

    async fn raise(
        &self,
        key: &CounterKey<'_>,
        era: i64,
        next: i64,
    ) -> Result<bool, AuthorityError> {
        Ok(self.store().change(key, |record| {
            let below = record.live().is_some_and(|at| at < (era, next));
            if below {
                record.values = [StoredInt::Integer(era), StoredInt::Integer(next)];
            }
            below
        }))
    }

    async fn lower(
        &self,
        key: &CounterKey<'_>,
        era: i64,
        from: i64,
        to: i64,
    ) -> Result<bool, AuthorityError> {
        Ok(self.store().change(key, |record| {
            let at_tail_end = record.live() == Some((era, from));
            if at_tail_end {
                record.values[1] = StoredInt::Integer(to);
            }
            at_tail_end
        }))
    }

    async fn records(&self) -> Result<Vec<StoredCounter>, AuthorityError> {
        let records = self.store().lock();
        Ok(records
            .counters
            .iter()
            .map(|((key, scope, sequence), record)| StoredCounter {
                key: StoredInt::Integer(i64::from(*key)),
                scope: scope.clone(),
                sequence: sequence.clone(),
                values: record.values.clone(),
                allocations: record.allocations.clone(),
            })
            .collect())
    }

    async fn spellings(
        &self,
        key: &CounterKey<'_>,
    ) -> Result<Vec<(String, String)>, AuthorityError> {
        let records = self.store().lock();
        Ok(records
            .counters
            .keys()
            .filter(|(_, scope, sequence)| {
                scope.eq_ignore_ascii_case(key.scope) && sequence.eq_ignore_ascii_case(key.sequence)
            })
            .map(|(_, scope, sequence)| (scope.clone(), sequence.clone()))
            .collect())
    }

    async fn read(&self, key: &CounterKey<'_>) -> Result<Option<[StoredInt; 2]>, AuthorityError> {
        let records = self.store().lock();
        let record = records.counters.get(&MemoryStore::of(key));
        Ok(record.map(|record| record.values.clone()))
    }

    async fn insert_if_absent(
        &self,
        key: &CounterKey<'_>,
        start: CounterStart,
    ) -> Result<(), AuthorityError> {
        let mut records = self.store().lock();
        let (mut era, mut next) = match start {
            CounterStart::At { era, next } => (era, next),
            CounterStart::Fresh | CounterStart::AfterSiblings => (0, 1),
        };
        if start == CounterStart::AfterSiblings {
            let siblings = records.counters.iter().filter(|((k, scope, sequence), _)| {
                *k != key.key && scope == key.scope && sequence == key.sequence
            });
            for ((k, scope, sequence), sibling) in siblings {
                let name = self.record_name(&CounterKey::new(*k, scope, sequence));
                let (sibling_era, sibling_next) =
                    counter_values(&name, &Self::FIELDS, sibling.values.clone())?;
                era = era.max(sibling_era);
                next = next.max(sibling_next);
            }
        }
        records
            .counters
            .entry(MemoryStore::of(key))
            .or_insert(Record {
                values: [StoredInt::Integer(era), StoredInt::Integer(next)],
                allocations: [StoredInt::Missing, StoredInt::Missing, StoredInt::Missing],
            });
        Ok(())
    }
}
