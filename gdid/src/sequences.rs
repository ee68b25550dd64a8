//! A store's sequences: what its counter records say ([`Store::sequences`]), and raising the floor
//! of one ([`Store::raise_floor`], [`Store::raise_counter_floor`]). The rules are the engine's
//! (`gdid::engine::raise_floor`, `gdid::engine::sequences`).

use gdid_core::generator::numbering::COUNTER_KEY;
use gdid_core::generator::sequences::Sequence;
use gdid_core::generator::{AuthorityError, CounterKey, CounterState};

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
    /// corrupt record or the store failing.
    pub async fn raise_floor(
        &self,
        scope: &str,
        sequence: &str,
        floor: CounterState,
    ) -> Result<bool, StoreError> {
        self.raise(self.authority_number(), scope, sequence, floor)
            .await
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

    fn sequences_error(&self, source: AuthorityError) -> StoreError {
        StoreError::Sequences {
            url: self.label().to_owned(),
            source,
        }
    }
}
