//! Ids for code without async (diesel, command-line tools, build scripts): a [`Store`] that
//! owns a small tokio runtime, and [`Generator`]s whose `next_id()` returns the id. The caller
//! needs no runtime of its own.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let folder = std::env::temp_dir().join(format!("gdid-blocking-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&folder)?;
//! # let url = format!("sqlite:{}", folder.join("ids.sqlite").display());
//! # #[cfg(not(feature = "sqlite"))]
//! # let url = "memory:";
//! let store = gdid::blocking::Store::open(&url)?; // sqlite:ids.sqlite, mysql://, postgres://, …
//! let orders = store.block_generator("shop", "orders").build()?;
//! let id: gdid::Gdid = orders.next_id()?;
//! assert_eq!(Some(id.authority()), store.authority_number());
//! # Ok(())
//! # }
//! ```
//!
//! # The runtime
//!
//! Each store opened here starts a tokio runtime with one worker thread of its own (named
//! `gdid-blocking`). That thread runs the background work (a block generator's prefetch of its
//! next block, retries, the pool's upkeep) and drives the sockets and timers, between calls as
//! during them. A call runs on the calling thread, with the runtime entered, and parks the
//! thread while it waits for the store; in the steady state a GDID comes from memory without
//! waiting at all. The store, its generators and their clones share the runtime; it is shut
//! down when the last of them is dropped (from plain code, waiting up to 5 s for its threads
//! to end; inside an async context, where waiting is not allowed, telling them to end).
//!
//! Calling from inside another tokio runtime (a `#[tokio::main]`, say) **works**: nothing here
//! uses tokio's `block_on`, which panics there. It blocks that runtime's thread while it waits,
//! as any blocking call does, so async code should use [`gdid::Store`](crate::Store) instead
//! (or [`Generator::get_ref`] and `.await`). The one place it cannot work is a thread of a
//! blocking store's own runtime (a future passed to [`Store::block_on`], say): the call would
//! wait for the thread it blocks, and panics instead.

mod generator;
mod runtime;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use gdid_engine::plumbing::redact;
use gdid_engine::{DynAuthority, SharedIdGenerator};

pub use generator::{BlockGenerator, BlockGeneratorBuilder, Generator};
use runtime::{InRuntime, Runtime};

use crate::StoreError;

/// A store opened from its URL, for code without async: [`gdid::Store`](crate::Store) with a
/// runtime of its own (see [the module docs](self)). Cheap to clone.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = gdid::blocking::Store::open("memory:")?;
/// let ids = store.block_generator("shop", "orders").build()?;
/// assert_eq!(ids.next_id()?.to_string(), "0:1:1");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Store {
    store: InRuntime<crate::Store>,
}

impl Store {
    /// Opens the store of `url` as [`gdid::Store::open`](crate::Store::open) does, on a
    /// runtime of its own.
    ///
    /// # Errors
    ///
    /// As [`gdid::Store::open`](crate::Store::open); [`StoreError::Connect`] when the
    /// runtime's thread cannot be started.
    ///
    /// # Panics
    ///
    /// On a thread of a blocking store's runtime.
    pub fn open(url: &str) -> Result<Store, StoreError> {
        Store::options().open(url)
    }

    /// Opens several stores as one generator's authorities, as
    /// [`gdid::Store::open_all`](crate::Store::open_all) does, on one runtime of their own.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let stores = gdid::blocking::Store::open_all(&["memory:", "memory:"])?;
    /// assert_eq!(stores.numbers(), [Some(1), Some(2)]);
    /// let orders = stores.block_generator("shop", "orders").build()?;
    /// assert_eq!(orders.next_id()?.to_string(), "0:1:1");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`gdid::Store::open_all`](crate::Store::open_all).
    ///
    /// # Panics
    ///
    /// On a thread of a blocking store's runtime.
    pub fn open_all<U: AsRef<str>>(urls: &[U]) -> Result<Stores, StoreError> {
        Store::options().open_all(urls)
    }

    /// How to open a store ([`gdid::OpenOptions`](crate::OpenOptions), without async).
    ///
    /// ```
    /// # fn main() -> Result<(), gdid::StoreError> {
    /// let store = gdid::blocking::Store::options().authority(3).open("memory:")?;
    /// assert_eq!(store.authority_number(), Some(3));
    /// # Ok(())
    /// # }
    /// ```
    pub fn options() -> OpenOptions {
        OpenOptions::default()
    }

    /// A GDID generator of (`scope`, `sequence`) with this store as its authority; tune it
    /// ([`configure`](BlockGeneratorBuilder::configure)), then `.build()?`.
    pub fn block_generator(&self, scope: &str, sequence: &str) -> BlockGeneratorBuilder {
        BlockGeneratorBuilder::new(
            self.store.get().block_generator(scope, sequence),
            self.store.runtime().clone(),
        )
    }

    /// The one-at-a-time counter of (`scope`, `sequence`): `u64` ids 1, 2, 3, … with one round
    /// trip to the store each ([`gdid::Store::one_at_a_time`](crate::Store::one_at_a_time)).
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let store = gdid::blocking::Store::open("memory:")?;
    /// let invoices = store.one_at_a_time("billing", "invoices");
    /// assert_eq!(invoices.next_id()?, 1);
    /// assert_eq!(invoices.next_id()?, 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn one_at_a_time(&self, scope: &str, sequence: &str) -> Generator<SharedIdGenerator<u64>> {
        self.generator(self.store.get().one_at_a_time(scope, sequence))
    }

    /// `ids`, any generator made from this store's [async side](Self::as_async) (a sharded
    /// counter, a window generator, a block generator with another store's authority as its
    /// failover), called without async on this store's runtime.
    ///
    /// ```
    /// use gdid::{Pick, RangeLayout};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let folder = std::env::temp_dir().join(format!("gdid-blocking-sharded-{}", std::process::id()));
    /// # std::fs::create_dir_all(&folder)?;
    /// # let url = format!("sqlite:{}", folder.join("ids.sqlite").display());
    /// # #[cfg(feature = "sqlite")] {
    /// let store = gdid::blocking::Store::open(&url)?;
    /// let layout = RangeLayout::new(1_000_000, 1_000_000, 4)?;
    /// let sharded = store.block_on(store.as_async().sharded("accounts", layout, Pick::RoundRobin))?;
    /// let accounts = store.generator(sharded);
    /// assert!(accounts.next_id()? >= 1_000_000);
    /// # }
    /// # Ok(())
    /// # }
    /// ```
    pub fn generator<G: gdid_engine::IdGenerator>(&self, ids: G) -> Generator<G> {
        Generator::new(ids, self.store.runtime().clone())
    }

    /// Runs `future` (the store's [async side](Self::as_async), say) to completion on this
    /// thread, with the store's runtime entered: what it spawns, and its sockets and timers,
    /// are the runtime's.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use gdid::IdGenerator;
    ///
    /// let store = gdid::blocking::Store::open("memory:")?;
    /// let invoices = store.as_async().one_at_a_time("billing", "invoices");
    /// let first = store.block_on(async { invoices.next_id().await })?;
    /// assert_eq!(first, 1);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Panics
    ///
    /// When `future` panics; on a thread of a blocking store's runtime (the call would wait
    /// for the thread it blocks: inside a future given here, use `.await`).
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.store.runtime().block_on(future)
    }

    /// The async store: every strategy and administration call, to run with
    /// [`block_on`](Self::block_on).
    pub fn as_async(&self) -> &crate::Store {
        self.store.get()
    }

    /// The store's URL without its password.
    pub fn label(&self) -> &str {
        self.store.get().label()
    }

    /// The authority number recorded in the store (0 to 15); `None` for a store opened
    /// [`unnumbered`](OpenOptions::unnumbered).
    pub fn authority_number(&self) -> Option<u8> {
        self.store.get().authority_number()
    }

    /// The store's authority, to add to another generator as its failover
    /// (`configure(|ids| ids.shared_authority(…))`): a generator made here keeps this store's
    /// runtime alive only through this store, so keep the store while the generator runs.
    /// `None` for a store opened [`unnumbered`](OpenOptions::unnumbered).
    pub fn authority(&self) -> Option<Arc<dyn DynAuthority>> {
        self.store.get().authority()
    }
}

/// Several stores opened together as one generator's authorities: [`gdid::Stores`](crate::Stores)
/// on a runtime of their own ([`Store::open_all`]). Cheap to clone.
#[derive(Clone)]
pub struct Stores {
    stores: InRuntime<crate::Stores>,
}

impl Stores {
    /// A GDID generator with every store that has a number as an authority, as
    /// [`gdid::Stores::block_generator`](crate::Stores::block_generator); tune it, then
    /// `.build()?`.
    pub fn block_generator(&self, scope: &str, sequence: &str) -> BlockGeneratorBuilder {
        BlockGeneratorBuilder::new(
            self.stores.get().block_generator(scope, sequence),
            self.stores.runtime().clone(),
        )
    }

    /// Each store's authority number, in the order given (`None`: left out, or unnumbered).
    pub fn numbers(&self) -> Vec<Option<u8>> {
        self.stores.get().numbers()
    }

    /// Each store's label (its URL, redacted), in the order given.
    pub fn labels(&self) -> Vec<&str> {
        self.stores.get().labels()
    }

    /// The labels of the stores left out because they could not be read.
    pub fn left_out(&self) -> Vec<&str> {
        self.stores.get().left_out()
    }

    /// The stores, as async [`gdid::Stores`](crate::Stores): every strategy over them, to run
    /// with [`block_on`](Self::block_on).
    pub fn as_async(&self) -> &crate::Stores {
        self.stores.get()
    }

    /// `ids`, any generator made from these stores' [async side](Self::as_async) (a window
    /// generator over them, say), called without async on their runtime, as
    /// [`Store::generator`].
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let folder = std::env::temp_dir().join(format!("gdid-blocking-windows-{}", std::process::id()));
    /// # std::fs::create_dir_all(&folder)?;
    /// # let urls = ["a", "b"].map(|n| format!("sqlite:{}", folder.join(n).display()));
    /// # #[cfg(feature = "sqlite")] {
    /// let shards = gdid::blocking::Store::options().unnumbered().open_all(&urls)?;
    /// let agent = shards.block_on(shards.as_async().window_agent(1_000, 1))?;
    /// shards.block_on(agent.run_once(&["orders"]))?;
    /// let orders = shards.generator(shards.as_async().window_generator("orders", 10)?);
    /// assert!(orders.next_id()? >= 1);
    /// # }
    /// # Ok(())
    /// # }
    /// ```
    pub fn generator<G: gdid_engine::IdGenerator>(&self, ids: G) -> Generator<G> {
        Generator::new(ids, self.stores.runtime().clone())
    }

    /// Runs `future` to completion on this thread with the stores' runtime entered, as
    /// [`Store::block_on`].
    ///
    /// # Panics
    ///
    /// As [`Store::block_on`].
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.stores.runtime().block_on(future)
    }
}

impl fmt::Debug for Stores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Stores").field(self.stores.get()).finish()
    }
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Store").field(self.store.get()).finish()
    }
}

/// How [`Store::options`] opens a store: [`gdid::OpenOptions`](crate::OpenOptions) without
/// async. Options that have no method here: `OpenOptions::from(gdid::Store::options()…)`.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    options: crate::OpenOptions,
}

impl OpenOptions {
    /// The MongoDB database used when the URL names none (`gdid` unless set).
    pub fn default_mongodb_database(self, name: &str) -> Self {
        self.options.default_mongodb_database(name).into()
    }

    /// The MongoDB collection of the counter documents (`gdid_counters` unless set).
    pub fn mongodb_collection(self, name: &str) -> Self {
        self.options.mongodb_collection(name).into()
    }

    /// Opens the store as authority `number` (0 to 15), as
    /// [`gdid::OpenOptions::authority`](crate::OpenOptions::authority).
    pub fn authority(self, number: u8) -> Self {
        self.options.authority(number).into()
    }

    /// The numbers of the stores given to [`open_all`](Self::open_all), in order, as
    /// [`gdid::OpenOptions::authorities`](crate::OpenOptions::authorities).
    pub fn authorities(self, numbers: &[u8]) -> Self {
        self.options.authorities(numbers).into()
    }

    /// Opens stores without an authority number, as
    /// [`gdid::OpenOptions::unnumbered`](crate::OpenOptions::unnumbered).
    pub fn unnumbered(self) -> Self {
        self.options.unnumbered().into()
    }

    /// The bearer token sent to `http://…` and `https://…` stores, as
    /// [`gdid::OpenOptions::http_token`](crate::OpenOptions::http_token).
    pub fn http_token(self, token: &str) -> Self {
        self.options.http_token(token).into()
    }

    /// A PEM certificate to trust for `https://…` stores, as
    /// [`gdid::OpenOptions::http_root_certificate_pem`](crate::OpenOptions::http_root_certificate_pem).
    pub fn http_root_certificate_pem(self, pem: &[u8]) -> Self {
        self.options.http_root_certificate_pem(pem).into()
    }

    /// The client certificate shown to `https://…` stores that ask for one, as
    /// [`gdid::OpenOptions::http_client_certificate_pem`](crate::OpenOptions::http_client_certificate_pem).
    pub fn http_client_certificate_pem(self, chain_pem: &[u8], key_pem: &[u8]) -> Self {
        self.options
            .http_client_certificate_pem(chain_pem, key_pem)
            .into()
    }

    /// Opens the store of `url` on a runtime of its own, as [`Store::open`] does.
    ///
    /// # Errors
    ///
    /// As [`Store::open`].
    ///
    /// # Panics
    ///
    /// On a thread of a blocking store's runtime.
    pub fn open(&self, url: &str) -> Result<Store, StoreError> {
        let runtime = start_runtime(url)?;
        let store = runtime.block_on(self.options.open(url))?;
        Ok(Store {
            store: InRuntime::new(store, runtime),
        })
    }

    /// Opens several stores as one generator's authorities on one runtime of their own, as
    /// [`Store::open_all`] does.
    ///
    /// # Errors
    ///
    /// As [`gdid::OpenOptions::open_all`](crate::OpenOptions::open_all).
    ///
    /// # Panics
    ///
    /// On a thread of a blocking store's runtime.
    pub fn open_all<U: AsRef<str>>(&self, urls: &[U]) -> Result<Stores, StoreError> {
        let runtime = start_runtime(urls.first().map_or("", AsRef::as_ref))?;
        let stores = runtime.block_on(self.options.open_all(urls))?;
        Ok(Stores {
            stores: InRuntime::new(stores, runtime),
        })
    }
}

/// A runtime for the store of `url`, or the error that names it.
fn start_runtime(url: &str) -> Result<Arc<Runtime>, StoreError> {
    Runtime::start().map_err(|e| StoreError::Connect {
        url: redact(url.trim()),
        kind: gdid_engine::ErrorKind::Unavailable,
        source: format!("cannot start the gdid::blocking runtime: {e}").into(),
    })
}

impl From<crate::OpenOptions> for OpenOptions {
    fn from(options: crate::OpenOptions) -> Self {
        OpenOptions { options }
    }
}
