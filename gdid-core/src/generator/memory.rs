//! [`MemoryAuthority`]: an authority whose counters live in process memory.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::authority::{Authority, Block, CounterState, validate_name};
use super::error::{AuthorityError, NameKind};
use crate::gdid::AUTHORITY_MAX;

/// An authority durable only in memory: for tests, examples and benchmarks, never for ids that
/// outlive the process.
///
/// ```
/// use gdid_core::generator::{Authority, MemoryAuthority};
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
#[derive(Debug)]
pub struct MemoryAuthority {
    number: u8,
    counters: Mutex<HashMap<(String, String), CounterState>>,
    allocations: AtomicU64,
}

impl MemoryAuthority {
    /// A new authority with no counters.
    ///
    /// # Panics
    ///
    /// When `number` is above 15.
    pub fn new(number: u8) -> Self {
        assert!(
            number <= AUTHORITY_MAX,
            "authority number {number} is above 15"
        );
        MemoryAuthority {
            number,
            counters: Mutex::new(HashMap::new()),
            allocations: AtomicU64::new(0),
        }
    }

    /// Sets the stored state of (scope, sequence), e.g. near `COUNTER_MAX` to test era rollover.
    pub fn with_state(self, scope: &str, sequence: &str, state: CounterState) -> Self {
        self.lock()
            .insert((scope.to_owned(), sequence.to_owned()), state);
        self
    }

    /// The stored state of (scope, sequence), if it was ever used.
    pub fn state(&self, scope: &str, sequence: &str) -> Option<CounterState> {
        self.lock()
            .get(&(scope.to_owned(), sequence.to_owned()))
            .copied()
    }

    /// How many blocks this authority has handed out.
    pub fn allocations(&self) -> u64 {
        self.allocations.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), CounterState>> {
        // A panic while holding the lock cannot leave a half-written state: every update is one
        // insert of a complete value.
        self.counters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Authority for MemoryAuthority {
    fn number(&self) -> u8 {
        self.number
    }

    fn label(&self) -> String {
        "memory".into()
    }

    async fn allocate(
        &self,
        scope: &str,
        sequence: &str,
        size: u64,
    ) -> Result<Block, AuthorityError> {
        validate_name(NameKind::Scope, scope)?;
        validate_name(NameKind::Sequence, sequence)?;
        let mut counters = self.lock();
        let state = counters
            .entry((scope.to_owned(), sequence.to_owned()))
            .or_insert(CounterState::INITIAL);
        let (block, next) = state.reserve(self.number, size)?;
        *state = next;
        self.allocations.fetch_add(1, Ordering::Relaxed);
        Ok(block)
    }
}
