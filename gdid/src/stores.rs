//! [`Stores`]: several stores opened together, as the authorities of one generator or the shards
//! of hi-lo windows; the windows of one [`Store`] are made here too.
#![cfg(feature = "engine")]

use std::sync::Arc;

use gdid_engine::windows::{WindowAgent, WindowGenerator};
use gdid_engine::{BlockGenerator, BlockGeneratorBuilder, SharedIdGenerator};

use crate::error::StoreError;
use crate::shard::StoreShard;
use crate::store::strategy_error;
use crate::{Store, StoreKind};

/// Several stores opened together as the authorities of one generator, each with the number
/// the rules of `gdid_engine::backend::numbering` give it ([`OpenOptions::open_all`]). Cheap to
/// clone.
///
/// ```
/// use gdid::IdGenerator;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let stores = gdid::Store::open_all(&["memory:a", "memory:b"]).await?;
/// assert_eq!(stores.labels(), ["memory:a", "memory:b"]);
/// let ids = stores.block_generator("shop", "orders").build()?;
/// let id = ids.next_id().await?;
/// assert_eq!(Some(id.authority()), stores.numbers()[0]);
/// # Ok(())
/// # }
/// ```
///
/// [`OpenOptions::open_all`]: crate::OpenOptions::open_all
#[derive(Debug, Clone)]
pub struct Stores {
    members: Vec<Member>,
}

/// One store of [`Stores`]: `store` is `None` when it is left out.
#[derive(Debug, Clone)]
struct Member {
    label: String,
    store: Option<Store>,
}

impl Stores {
    /// The stores, in order: each label, and the store as its authority (`None`: left out).
    pub(crate) fn of(members: Vec<(String, Option<Store>)>) -> Stores {
        Stores {
            members: members
                .into_iter()
                .map(|(label, store)| Member { label, store })
                .collect(),
        }
    }

    /// A GDID generator of (`scope`, `sequence`) with every store that has a number as an
    /// authority, tried in the order the stores were given; tune it, then `.build()?`. When
    /// every store is an authority server (`http://…`, `https://…`), the one that answers fastest
    /// is tried first instead, so each client keeps to its closest authority
    /// (`BlockGeneratorBuilder::prefer_fastest`).
    pub fn block_generator(&self, scope: &str, sequence: &str) -> BlockGeneratorBuilder {
        let builder = self.stores().fold(
            BlockGenerator::builder(scope, sequence),
            |builder, store| match store.authority() {
                Some(authority) => store.fit(builder.shared_authority(authority)),
                None => builder,
            },
        );
        let remote =
            |store: &Store| crate::store_kind(store.label()).is_ok_and(|k| k == StoreKind::Http);
        if self.stores().next().is_some() && self.stores().all(remote) {
            builder.prefer_fastest()
        } else {
            builder
        }
    }

    /// `u64` ids of `sequence` from the open windows of the stores, taken from the first (in
    /// the order given) that has one, `batch` values per round trip. A window agent
    /// ([`window_agent`](Self::window_agent)) opens the windows.
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let urls = ["mysql://root@127.0.0.1/a", "postgres://postgres@127.0.0.1/b"];
    /// let stores = gdid::Store::options().unnumbered().open_all(&urls).await?;
    /// let agent = stores.window_agent(1_000_000, 2).await?;
    /// agent.run_once(&["orders"]).await?;
    /// let orders = stores.window_generator("orders", 100)?;
    /// # let _ = orders;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Strategy`] for a bad sequence name or a `batch` of 0;
    /// [`StoreError::Unsupported`] for a `memory:` store.
    pub fn window_generator(
        &self,
        sequence: &str,
        batch: u64,
    ) -> Result<SharedIdGenerator<u64>, StoreError> {
        let shards = self.stores().map(Store::window_shard);
        window_generator(shards.collect::<Result<_, _>>()?, sequence, batch)
    }

    /// A window agent with each store as a shard (prepared): each
    /// [`run_once`](WindowAgent::run_once) keeps `min_open_windows` windows of `window_size`
    /// values open on every shard, for every sequence it is given. See
    /// [`window_generator`](Self::window_generator).
    ///
    /// # Errors
    ///
    /// [`StoreError::Agent`] for a window size of 0, a shard that cannot be prepared, or one
    /// store given twice; [`StoreError::Unsupported`] for a `memory:` store.
    pub async fn window_agent(
        &self,
        window_size: u64,
        min_open_windows: u64,
    ) -> Result<WindowAgent<StoreShard>, StoreError> {
        let mut agent = WindowAgent::new(window_size, min_open_windows)?;
        for store in self.stores() {
            agent
                .add_shard(store.label(), store.window_shard()?)
                .await?;
        }
        Ok(agent)
    }

    /// The stores opened, in order (those [`left_out`](Self::left_out) are not): each hands out
    /// every strategy.
    pub fn stores(&self) -> impl Iterator<Item = &Store> {
        self.members
            .iter()
            .filter_map(|member| member.store.as_ref())
    }

    /// Each store's authority number, in the order given: `None` for a store left out or
    /// opened [`unnumbered`](crate::OpenOptions::unnumbered).
    pub fn numbers(&self) -> Vec<Option<u8>> {
        self.members
            .iter()
            .map(|member| member.store.as_ref().and_then(Store::authority_number))
            .collect()
    }

    /// Every store's URL without its password, in the order given.
    pub fn labels(&self) -> Vec<&str> {
        self.members.iter().map(|m| m.label.as_str()).collect()
    }

    /// The stores left out of [`block_generator`](Self::block_generator): they could not be
    /// read when opened, and no number was asked for them (their number is in the store,
    /// unread).
    pub fn left_out(&self) -> Vec<&str> {
        self.members
            .iter()
            .filter(|member| member.store.is_none())
            .map(|member| member.label.as_str())
            .collect()
    }
}

impl Store {
    /// `u64` ids of `sequence` from the open windows of this store as the one shard, `batch`
    /// values per round trip. A window agent ([`window_agent`](Self::window_agent)) opens the
    /// windows.
    ///
    /// # Errors
    ///
    /// [`StoreError::Strategy`] for a bad sequence name or a `batch` of 0;
    /// [`StoreError::Unsupported`] on a `memory:` store.
    pub fn window_generator(
        &self,
        sequence: &str,
        batch: u64,
    ) -> Result<SharedIdGenerator<u64>, StoreError> {
        window_generator(vec![self.window_shard()?], sequence, batch)
    }

    /// A window agent with this store as its one shard (prepared): each
    /// [`run_once`](WindowAgent::run_once) keeps `min_open_windows` windows of `window_size`
    /// values open for every sequence. For several shards, see
    /// [`Stores::window_agent`](crate::Stores::window_agent).
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::Store::options().unnumbered().open("sqlite:ids.sqlite").await?;
    /// let agent = store.window_agent(100_000, 2).await?;
    /// agent.run_once(&["orders"]).await?;
    /// let orders = store.window_generator("orders", 100)?;
    /// # let _ = orders;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Agent`] for a window size of 0 or a store that cannot be prepared;
    /// [`StoreError::Unsupported`] on a `memory:` store.
    pub async fn window_agent(
        &self,
        window_size: u64,
        min_open_windows: u64,
    ) -> Result<WindowAgent<StoreShard>, StoreError> {
        let this = Stores::of(vec![(self.label().to_owned(), Some(self.clone()))]);
        this.window_agent(window_size, min_open_windows).await
    }
}

/// `u64` ids of `sequence` from the windows of `shards`, in order.
fn window_generator(
    shards: Vec<StoreShard>,
    sequence: &str,
    batch: u64,
) -> Result<SharedIdGenerator<u64>, StoreError> {
    let url = shards
        .iter()
        .map(StoreShard::label)
        .collect::<Vec<_>>()
        .join(", ");
    let shards = shards
        .into_iter()
        .map(|shard| (shard.label().to_owned(), shard))
        .collect();
    WindowGenerator::new(shards, sequence, batch)
        .map(|ids| Arc::new(ids) as SharedIdGenerator<u64>)
        .map_err(|e| strategy_error("window generator", sequence, &url, e.into()))
}
