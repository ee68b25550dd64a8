//! A store's sequences: what its counter records say ([`Store::sequences`]), raising the floor
//! of one ([`Store::raise_floor`], [`Store::raise_counter_floor`]), and moving them to a new era
//! after a restore ([`Store::fence`]). The rules are the engine's
//! (`gdid_engine::backend::raise_floor`, `gdid::engine::sequences`,
//! `gdid_engine::backend::lineage`).
#![cfg(feature = "engine")]

use gdid_engine::backend::lineage::{fence_era, seconds_now};
use gdid_engine::backend::numbering::COUNTER_KEY;
use gdid_engine::sequences::Sequence;
use gdid_engine::{AuthorityError, CounterState, backend::CounterKey};

/// A record [`Store::fence`] moved to a new era.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fenced {
    /// The authority number the record is keyed by.
    pub key: u8,
    /// The scope.
    pub scope: String,
    /// The sequence.
    pub sequence: String,
    /// The era it was in.
    pub from_era: u64,
    /// The era it is in now: its next block starts there, counter 1.
    pub era: u32,
}

/// Which records [`Store::fence`] moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceScope<'a> {
    /// Every GDID record of the store.
    All,
    /// The GDID records (of every authority number) of one scope and sequence.
    Sequence {
        /// The scope.
        scope: &'a str,
        /// The sequence.
        sequence: &'a str,
    },
}

impl FenceScope<'_> {
    /// Whether the record `record` is of these (one-at-a-time counters included: a fence leaves
    /// them as they are).
    pub fn covers(&self, record: &Sequence) -> bool {
        match *self {
            FenceScope::All => true,
            FenceScope::Sequence { scope, sequence } => {
                record.scope == scope && record.sequence == sequence
            }
        }
    }
}

use crate::error::StoreError;
use crate::store::Store;

impl Store {
    /// Raises the floor of (`scope`, `sequence`)'s GDIDs from this store to `floor`: every
    /// block after it starts at `floor` or later, so that ids issued from now on come after
    /// those already in a table (a table migrated from auto-increment, say). One conditional
    /// write: safe while generators run (a block they hold is below the new floor, none is
    /// issued twice). The floor is never lowered; a missing counter is created at it. `true`
    /// when the counter moved (or was made), `false` when it was at the floor already.
    ///
    /// ```
    /// use gdid::IdGenerator;
    /// use gdid::engine::CounterState;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::Store::open("memory:").await?;
    /// store.raise_floor("shop", "orders", CounterState { era: 0, next: 1_000 }).await?;
    /// let orders = store.block_generator("shop", "orders").build()?;
    /// assert_eq!(orders.next_id().await?.to_string(), "0:1:1000");
    /// // a floor is never lowered
    /// assert!(store.raise_floor("shop", "orders", CounterState { era: 0, next: 5 }).await.is_err());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Sequences`] with [`AuthorityError::FloorBelow`] when the counter is past
    /// the floor, [`AuthorityError::InvalidName`] for a bad name or another spelling of a
    /// stored one, [`AuthorityError::InvalidBlock`] for a floor outside the counter space, a
    /// corrupt record or the store failing; [`StoreError::Unnumbered`] for a store opened
    /// [`unnumbered`](crate::OpenOptions::unnumbered).
    pub async fn raise_floor(
        &self,
        scope: &str,
        sequence: &str,
        floor: CounterState,
    ) -> Result<bool, StoreError> {
        let Some(number) = self.authority_number() else {
            return Err(StoreError::Unnumbered {
                url: self.label().to_owned(),
                what: "a GDID floor is kept per authority number, and it has none",
            });
        };
        self.raise(number, scope, sequence, floor).await
    }

    /// Raises the floor of the one-at-a-time counter of (`scope`, `sequence`) to `next`: its
    /// next id is `next` or more. As [`raise_floor`](Self::raise_floor) otherwise.
    ///
    /// ```
    /// use gdid::IdGenerator;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::Store::open("memory:").await?;
    /// store.raise_counter_floor("billing", "invoice", 10_001).await?;
    /// assert_eq!(store.one_at_a_time("billing", "invoice").next_id().await?, 10_001);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`raise_floor`](Self::raise_floor).
    pub async fn raise_counter_floor(
        &self,
        scope: &str,
        sequence: &str,
        next: u64,
    ) -> Result<bool, StoreError> {
        let floor = CounterState { era: 0, next };
        self.raise(COUNTER_KEY, scope, sequence, floor).await
    }

    /// Raises the floor of the counter record of (`scope`, `sequence`) keyed `key` to `floor`.
    async fn raise(
        &self,
        key: u8,
        scope: &str,
        sequence: &str,
        floor: CounterState,
    ) -> Result<bool, StoreError> {
        let key = CounterKey::new(key, scope, sequence);
        let raised = self.backend().raise_floor(key, floor);
        raised.await.map_err(|e| self.sequences_error(e))
    }

    /// Every counter record of the store, of every authority number and the one-at-a-time
    /// counters: names, era, next counter, counters used, the last allocation's time, the recent
    /// rate and the runway (see `gdid::engine::sequences`).
    ///
    /// ```
    /// use gdid::IdGenerator;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::Store::open("memory:").await?;
    /// store.block_generator("shop", "orders").build()?.next_id().await?;
    /// let sequences = store.sequences().await?;
    /// assert_eq!((sequences[0].key, sequences[0].sequence.as_str()), (1, "orders"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Sequences`]: a corrupt record (named with its field), the store failing.
    pub async fn sequences(&self) -> Result<Vec<Sequence>, StoreError> {
        let listed = self.backend().sequences();
        listed.await.map_err(|e| self.sequences_error(e))
    }

    /// Moves GDID records to a new era, as after a restore of the store from a backup (a dump
    /// reloaded, a file system snapshot, a copied SQLite file): the restored records may be
    /// behind blocks that were issued after the backup, and nothing in the store can tell. Each
    /// record goes to era `max(era + 1, S)` (S: seconds since 2025-01-01 by this machine's
    /// clock), counter 1, so every id issued from it afterwards sorts after every id issued
    /// before, whichever copy issued it. Safe while generators run: a floor
    /// ([`raise_floor`](Self::raise_floor)), above every block they hold. The one-at-a-time
    /// counters are left as they are (a `u64` has no era): raise their floors
    /// ([`raise_counter_floor`](Self::raise_counter_floor)) past every value they issued.
    /// [`FenceScope::All`] also raises the store's floor era on a SQL store, so that a sequence
    /// made after the backup, which the restored store lacks, starts at that era, not at era 0
    /// again (MongoDB keeps no floor era: there such a sequence is not fenced).
    ///
    /// A failover to a promoted replica of PostgreSQL or MySQL/MariaDB needs none of this: the
    /// records see the new server's lineage and move by themselves
    /// (`gdid_engine::backend::lineage`).
    ///
    /// ```
    /// use gdid::{FenceScope, IdGenerator};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::Store::open("memory:").await?;
    /// let orders = store.block_generator("shop", "orders").build()?;
    /// let before = orders.next_id().await?;
    /// let fenced = store.fence(FenceScope::All).await?;
    /// assert_eq!(fenced.len(), 1);
    /// let after = store.block_generator("shop", "orders").build()?.next_id().await?;
    /// assert!(after > before && after.era() == fenced[0].era);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Sequences`]: a corrupt record anywhere in the store (nothing is moved: the
    /// records are listed first), an era past `u32::MAX` ([`AuthorityError::Exhausted`]) or the
    /// store failing (the records moved before it stay moved).
    pub async fn fence(&self, which: FenceScope<'_>) -> Result<Vec<Fenced>, StoreError> {
        let now = seconds_now();
        let records = self
            .sequences()
            .await?
            .into_iter()
            .filter(|record| !record.one_at_a_time && which.covers(record));
        let mut fenced = Vec::new();
        for record in records {
            let era = self.fence_record(&record, now).await?;
            fenced.push(Fenced {
                key: record.key,
                from_era: record.era,
                era,
                scope: record.scope,
                sequence: record.sequence,
            });
        }
        if which == FenceScope::All {
            self.raise_store_floor(now).await?;
        }
        Ok(fenced)
    }

    /// Raises the store's floor era (where the store keeps one: SQL stores) to [`fence_era`] of
    /// it and `now`: a sequence the restored store lacks (made after its backup) then starts
    /// above every era it used, instead of at era 0 again.
    async fn raise_store_floor(&self, now: i64) -> Result<(), StoreError> {
        let record = self.backend().record();
        let floor = record
            .floor_era()
            .await
            .map_err(|e| self.sequences_error(e))?;
        let era = fence_era(floor, now);
        if u32::try_from(era).is_err() {
            return Err(self.sequences_error(AuthorityError::Exhausted));
        }
        record
            .raise_floor_era(era)
            .await
            .map(drop)
            .map_err(|e| self.sequences_error(e))
    }

    /// Moves `record` to era [`fence_era`] of its era and `now`: its new era. A generator may
    /// move it meanwhile (a fence of its own, a rollover): the floor is computed again from where
    /// it went.
    async fn fence_record(&self, record: &Sequence, now: i64) -> Result<u32, StoreError> {
        let mut era = i64::try_from(record.era).unwrap_or(i64::MAX);
        for _ in 0..4 {
            let era_now = u32::try_from(fence_era(era, now))
                .map_err(|_| self.sequences_error(AuthorityError::Exhausted))?;
            let floor = CounterState {
                era: era_now,
                next: 1,
            };
            let key = CounterKey::new(record.key, &record.scope, &record.sequence);
            match self.backend().raise_floor(key, floor).await {
                Ok(_) => return Ok(era_now),
                Err(AuthorityError::FloorBelow { era: moved, .. }) => era = moved,
                Err(e) => return Err(self.sequences_error(e)),
            }
        }
        let record = format!("{}/{}", record.scope, record.sequence);
        Err(self.sequences_error(AuthorityError::Contention {
            record,
            attempts: 4,
            last: None,
        }))
    }

    fn sequences_error(&self, source: AuthorityError) -> StoreError {
        StoreError::Sequences {
            url: self.label().to_owned(),
            source,
        }
    }
}
