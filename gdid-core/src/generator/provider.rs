//! [`GdidProvider`]: one [`BlockGenerator`] per (scope, sequence), and [`Sequenced`] types.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use super::authority::DynAuthority;
use super::block_generator::BlockGenerator;
use super::config::{BlockGeneratorBuilder, GeneratorConfig};
use super::error::Error;
use crate::Gdid;

/// A domain type that declares the sequence its ids come from, once: the Rust form of NFX's
/// `[UniqueSequence]` attribute.
///
/// ```
/// use gdid_core::generator::{GdidProvider, MemoryAuthority, Sequenced};
///
/// struct Customer;
/// impl Sequenced for Customer {
///     const SCOPE: &'static str = "shop";
///     const SEQUENCE: &'static str = "customer";
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), gdid_core::generator::Error> {
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
    /// [`Error::InvalidName`] for a bad scope or sequence.
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
