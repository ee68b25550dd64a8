//! [`GdidProvider`]: one [`BlockGenerator`] per (scope, sequence), and [`Sequenced`] types.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use super::authority::DynAuthority;
use super::block_generator::BlockGenerator;
use super::block_generator::BlockGeneratorBuilder;
use super::config::GeneratorConfig;
use super::generator_error::Error;
use gdid_core::Gdid;

/// A domain type that declares the sequence its ids come from, once: the Rust form of NFX's
/// `[UniqueSequence]` attribute.
///
/// ```
/// use gdid_engine::{GdidProvider, MemoryAuthority, Sequenced};
///
/// struct Customer;
/// impl Sequenced for Customer {
///     const SCOPE: &'static str = "shop";
///     const SEQUENCE: &'static str = "customer";
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), gdid_engine::Error> {
/// let ids = GdidProvider::builder().authority(MemoryAuthority::new(1)).build()?;
/// let first = ids.next_for::<Customer>().await?;
/// let second = ids.next_for::<Customer>().await?;
/// assert_eq!(second.counter(), first.counter() + 1);
/// # Ok(())
/// # }
/// ```
pub trait Sequenced {
    /// The scope of the type's ids.
    const SCOPE: &'static str;
    /// The sequence of the type's ids.
    const SEQUENCE: &'static str;
}

/// Keeps one [`BlockGenerator`] per (scope, sequence), all sharing the same authorities and
/// settings. Cheap to clone.
///
/// For the hottest paths, keep the [`BlockGenerator`] that [`generator`](Self::generator)
/// returns: it skips the lookup.
#[derive(Clone)]
pub struct GdidProvider {
    authorities: Vec<Arc<dyn DynAuthority>>,
    config: GeneratorConfig,
    generators: Arc<RwLock<HashMap<(String, String), BlockGenerator>>>,
}

impl std::fmt::Debug for GdidProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GdidProvider")
            .field("authorities", &self.authorities.len())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Builds a [`GdidProvider`]: the authorities in preference order and the settings every
/// generator gets, as for one [`BlockGenerator`].
pub type GdidProviderBuilder = BlockGeneratorBuilder<GdidProvider>;

impl Default for GdidProviderBuilder {
    fn default() -> Self {
        BlockGeneratorBuilder::new("probe", "probe")
    }
}

impl GdidProviderBuilder {
    /// Checks the authorities and settings (with a probe generator) and builds the provider.
    ///
    /// # Errors
    ///
    /// As [`BlockGeneratorBuilder::build`](super::BlockGeneratorBuilder::build).
    pub fn build(self) -> Result<GdidProvider, Error> {
        let provider = GdidProvider {
            authorities: self.authorities,
            config: self.config,
            generators: Arc::default(),
        };
        provider.make(&self.scope, &self.sequence)?;
        Ok(provider)
    }
}

impl GdidProvider {
    /// Starts building a provider.
    pub fn builder() -> GdidProviderBuilder {
        GdidProviderBuilder::default()
    }

    /// The generator of (scope, sequence), made on first use.
    ///
    /// # Errors
    ///
    /// [`ErrorDetail::InvalidName`](crate::ErrorDetail::InvalidName) for a bad scope or sequence.
    pub fn generator(&self, scope: &str, sequence: &str) -> Result<BlockGenerator, Error> {
        let key = (scope.to_owned(), sequence.to_owned());
        if let Some(generator) = self.read().get(&key) {
            return Ok(generator.clone());
        }
        let mut generators = self
            .generators
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(generator) = generators.get(&key) {
            return Ok(generator.clone());
        }
        let generator = self.make(scope, sequence)?;
        generators.insert(key, generator.clone());
        Ok(generator)
    }

    /// One id of (scope, sequence).
    ///
    /// # Errors
    ///
    /// As [`generator`](Self::generator) and [`BlockGenerator::next_id`].
    pub async fn next_id(&self, scope: &str, sequence: &str) -> Result<Gdid, Error> {
        self.generator(scope, sequence)?.next_id().await
    }

    /// One id of the sequence `T` declares.
    ///
    /// # Errors
    ///
    /// As [`next_id`](Self::next_id).
    pub async fn next_for<T: Sequenced>(&self) -> Result<Gdid, Error> {
        self.next_id(T::SCOPE, T::SEQUENCE).await
    }

    /// Closes every generator the provider made ([`BlockGenerator::close`]): each gives the ids it
    /// reserved and did not serve back to its store. How many ids went back, in all. Call it before
    /// the runtime ends: a generator only dropped gives back in a task of its own, which a runtime
    /// that is shutting down may cancel (the ids are then lost, never repeated). The provider's
    /// generators are closed for good: their calls after it get
    /// [`ErrorDetail::Closed`](crate::ErrorDetail::Closed).
    ///
    /// ```
    /// use gdid_engine::{GdidProvider, MemoryAuthority};
    /// use std::sync::Arc;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), gdid_engine::Error> {
    /// let authority = Arc::new(MemoryAuthority::new(1));
    /// let ids = GdidProvider::builder().authority(authority.clone()).build()?;
    /// ids.next_id("shop", "customer").await?;
    /// ids.next_id("shop", "order").await?;
    /// assert_eq!(ids.close().await?, 2 * 15); // blocks of 16, one id of each served
    ///
    /// let again = GdidProvider::builder().authority(authority).build()?;
    /// assert_eq!(again.next_id("shop", "order").await?.to_string(), "0:1:2"); // nothing lost
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// The first error of a generator that could not give its ids back (a store that is down):
    /// those ids are lost, never repeated. Every generator is closed all the same.
    pub async fn close(&self) -> Result<u64, Error> {
        let generators: Vec<BlockGenerator> = self.read().values().cloned().collect();
        let (mut given_back, mut first_error) = (0, None);
        for generator in generators {
            match generator.close().await {
                Ok(n) => given_back += n,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(given_back), Err)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<(String, String), BlockGenerator>> {
        self.generators
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn make(&self, scope: &str, sequence: &str) -> Result<BlockGenerator, Error> {
        self.authorities
            .iter()
            .fold(BlockGenerator::builder(scope, sequence), |b, a| {
                b.shared_authority(Arc::clone(a))
            })
            .config(self.config.clone())
            .build()
    }
}
