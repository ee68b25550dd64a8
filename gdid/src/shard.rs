//! [`StoreShard`]: any store as a shard of hi-lo windows, so that one window agent or window
//! generator serves stores of every kind.
#![cfg(feature = "engine")]

use std::fmt;
use std::sync::Arc;

use gdid_engine::backend::BoxFuture;
use gdid_engine::windows::{Window, WindowShard};

use gdid_engine::ErrorKind;
use gdid_engine::backend::DriverError;

/// The error of a [`StoreShard`]: its store's error, and whether it says that stored windows
/// cannot be right.
#[derive(Debug)]
pub struct ShardError {
    error: DriverError,
    corrupt: bool,
    switched: bool,
}

impl ShardError {
    /// The error of a shard of type `S`.
    fn of<S: WindowShard>(error: S::Error) -> ShardError {
        ShardError {
            corrupt: S::is_corrupt(&error),
            switched: S::is_switched(&error),
            error: Box::new(error),
        }
    }

    /// Whether the store says that its stored windows cannot be right (rather than that it
    /// failed).
    ///
    /// ```no_run
    /// # fn check(error: &gdid::ShardError) {
    /// if error.is_corrupt() {
    ///     eprintln!("fix the stored windows: {error}");
    /// }
    /// # }
    /// ```
    pub fn is_corrupt(&self) -> bool {
        self.corrupt
    }

    /// Whether the store says that its open windows were last moved on another database server
    /// (a failover, a restore): none is taken from until
    /// [`Store::skip_windows`](crate::Store::skip_windows).
    pub fn is_switched(&self) -> bool {
        self.switched
    }

    /// The kind of the error: [`Corrupt`](ErrorKind::Corrupt) stored windows,
    /// [`Foreign`](ErrorKind::Foreign) when [switched](Self::is_switched), else the store
    /// failing ([`Unavailable`](ErrorKind::Unavailable)).
    pub fn kind(&self) -> ErrorKind {
        if self.corrupt {
            ErrorKind::Corrupt
        } else if self.switched {
            ErrorKind::Foreign
        } else {
            ErrorKind::Unavailable
        }
    }
}

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.error, f)
    }
}

impl std::error::Error for ShardError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}

/// The operations of [`WindowShard`], boxed: one implementation for every shard type.
trait ErasedShard: Send + Sync {
    fn prepare(&self) -> BoxFuture<'_, Result<(), ShardError>>;
    fn identity(&self, candidate: String) -> BoxFuture<'_, Result<String, ShardError>>;
    fn ping(&self) -> BoxFuture<'_, Result<(), ShardError>>;
    fn sequences(&self) -> BoxFuture<'_, Result<Vec<String>, ShardError>>;
    fn high_water(&self, sequence: String) -> BoxFuture<'_, Result<u64, ShardError>>;
    fn open_windows(&self, sequence: String) -> BoxFuture<'_, Result<u64, ShardError>>;
    fn windows(&self, sequence: String) -> BoxFuture<'_, Result<Vec<Window>, ShardError>>;
    fn claim(
        &self,
        sequence: String,
        start: u64,
        end: u64,
    ) -> BoxFuture<'_, Result<bool, ShardError>>;
    fn open(&self, sequence: String, start: u64, end: u64)
    -> BoxFuture<'_, Result<(), ShardError>>;
    fn take(
        &self,
        sequence: String,
        n: u64,
    ) -> BoxFuture<'_, Result<Option<(u64, u64)>, ShardError>>;
    fn prune(&self, sequence: String, keep: u64) -> BoxFuture<'_, Result<u64, ShardError>>;
    fn skip(&self, sequence: String, by: u64) -> BoxFuture<'_, Result<Option<u64>, ShardError>>;
}

/// `operation` boxed, its error a [`ShardError`] of a shard of type `S`.
fn erased<'a, S: WindowShard, T>(
    operation: impl Future<Output = Result<T, S::Error>> + Send + 'a,
) -> BoxFuture<'a, Result<T, ShardError>> {
    Box::pin(async move { operation.await.map_err(ShardError::of::<S>) })
}

impl<S: WindowShard + 'static> ErasedShard for S {
    fn skip(&self, sequence: String, by: u64) -> BoxFuture<'_, Result<Option<u64>, ShardError>> {
        erased::<S, _>(async move { WindowShard::skip(self, &sequence, by).await })
    }

    fn prune(&self, sequence: String, keep: u64) -> BoxFuture<'_, Result<u64, ShardError>> {
        erased::<S, _>(async move { WindowShard::prune(self, &sequence, keep).await })
    }

    fn prepare(&self) -> BoxFuture<'_, Result<(), ShardError>> {
        erased::<S, _>(async move { WindowShard::prepare(self).await })
    }

    fn identity(&self, candidate: String) -> BoxFuture<'_, Result<String, ShardError>> {
        erased::<S, _>(async move { WindowShard::identity(self, &candidate).await })
    }

    fn ping(&self) -> BoxFuture<'_, Result<(), ShardError>> {
        erased::<S, _>(async move { WindowShard::ping(self).await })
    }

    fn sequences(&self) -> BoxFuture<'_, Result<Vec<String>, ShardError>> {
        erased::<S, _>(async move { WindowShard::sequences(self).await })
    }

    fn high_water(&self, sequence: String) -> BoxFuture<'_, Result<u64, ShardError>> {
        erased::<S, _>(async move { WindowShard::high_water(self, &sequence).await })
    }

    fn open_windows(&self, sequence: String) -> BoxFuture<'_, Result<u64, ShardError>> {
        erased::<S, _>(async move { WindowShard::open_windows(self, &sequence).await })
    }

    fn windows(&self, sequence: String) -> BoxFuture<'_, Result<Vec<Window>, ShardError>> {
        erased::<S, _>(async move { WindowShard::windows(self, &sequence).await })
    }

    fn claim(
        &self,
        sequence: String,
        start: u64,
        end: u64,
    ) -> BoxFuture<'_, Result<bool, ShardError>> {
        erased::<S, _>(async move { WindowShard::claim(self, &sequence, start, end).await })
    }

    fn open(
        &self,
        sequence: String,
        start: u64,
        end: u64,
    ) -> BoxFuture<'_, Result<(), ShardError>> {
        erased::<S, _>(async move { WindowShard::open(self, &sequence, start, end).await })
    }

    fn take(
        &self,
        sequence: String,
        n: u64,
    ) -> BoxFuture<'_, Result<Option<(u64, u64)>, ShardError>> {
        erased::<S, _>(async move { WindowShard::take(self, &sequence, n).await })
    }
}

/// A store as a shard of hi-lo windows, whatever its kind: what
/// [`Stores::window_agent`](crate::Stores::window_agent) and
/// [`Stores::window_generator`](crate::Stores::window_generator) are made of. Cheap to clone.
///
/// ```no_run
/// use gdid::engine::windows::WindowShard;
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = gdid::Store::open("sqlite:ids.sqlite").await?;
/// let shard = store.window_shard()?;
/// println!("{} has windows of {:?}", shard.label(), shard.sequences().await?);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct StoreShard {
    label: String,
    shard: Arc<dyn ErasedShard>,
}

impl StoreShard {
    /// Any shard of hi-lo windows as a `StoreShard`, named `label` in agents' reports and
    /// errors: to add a shard of your own to stores opened by URL.
    ///
    /// ```
    /// use gdid::engine::windows::WindowShard;
    ///
    /// fn beside_the_others<S: WindowShard + 'static>(mine: S) -> gdid::StoreShard {
    ///     gdid::StoreShard::new("my shard", mine)
    /// }
    /// ```
    pub fn new<S: WindowShard + 'static>(label: &str, shard: S) -> StoreShard {
        StoreShard {
            label: label.to_owned(),
            shard: Arc::new(shard),
        }
    }

    /// The store's URL without its password.
    pub fn label(&self) -> &str {
        &self.label
    }
}

impl fmt::Debug for StoreShard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreShard({})", self.label)
    }
}

impl WindowShard for StoreShard {
    type Error = ShardError;

    fn prune(
        &self,
        sequence: &str,
        keep: u64,
    ) -> impl Future<Output = Result<u64, ShardError>> + Send {
        self.shard.prune(sequence.to_owned(), keep)
    }

    fn is_corrupt(error: &ShardError) -> bool {
        error.corrupt
    }

    fn is_switched(error: &ShardError) -> bool {
        error.switched
    }

    fn skip(
        &self,
        sequence: &str,
        by: u64,
    ) -> impl Future<Output = Result<Option<u64>, ShardError>> + Send {
        self.shard.skip(sequence.to_owned(), by)
    }

    fn prepare(&self) -> impl Future<Output = Result<(), ShardError>> + Send {
        self.shard.prepare()
    }

    fn identity(&self, candidate: &str) -> impl Future<Output = Result<String, ShardError>> + Send {
        self.shard.identity(candidate.to_owned())
    }

    fn ping(&self) -> impl Future<Output = Result<(), ShardError>> + Send {
        self.shard.ping()
    }

    fn sequences(&self) -> impl Future<Output = Result<Vec<String>, ShardError>> + Send {
        self.shard.sequences()
    }

    fn high_water(&self, sequence: &str) -> impl Future<Output = Result<u64, ShardError>> + Send {
        self.shard.high_water(sequence.to_owned())
    }

    fn open_windows(&self, sequence: &str) -> impl Future<Output = Result<u64, ShardError>> + Send {
        self.shard.open_windows(sequence.to_owned())
    }

    fn windows(
        &self,
        sequence: &str,
    ) -> impl Future<Output = Result<Vec<Window>, ShardError>> + Send {
        self.shard.windows(sequence.to_owned())
    }

    fn claim(
        &self,
        sequence: &str,
        start: u64,
        end: u64,
    ) -> impl Future<Output = Result<bool, ShardError>> + Send {
        self.shard.claim(sequence.to_owned(), start, end)
    }

    fn open(
        &self,
        sequence: &str,
        start: u64,
        end: u64,
    ) -> impl Future<Output = Result<(), ShardError>> + Send {
        self.shard.open(sequence.to_owned(), start, end)
    }

    fn take(
        &self,
        sequence: &str,
        n: u64,
    ) -> impl Future<Output = Result<Option<(u64, u64)>, ShardError>> + Send {
        self.shard.take(sequence.to_owned(), n)
    }
}
