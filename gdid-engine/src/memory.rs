//! [`MemoryAuthority`]: an authority whose counters live in process memory.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::authority::{Authority, Block, CounterState, validate_names};
use super::counter_store::{CounterKey, check_spelling, floor_of};
use super::error::AuthorityError;
use gdid_core::{AUTHORITY_MAX, COUNTER_MAX};

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

    /// Raises the floor of (scope, sequence) to `floor`, as
    /// [`raise_floor`](crate::backend::raise_floor) does on a store (the same rule, [`floor_of`]):
    /// a missing counter is made at the floor; whether the counter moved or was made.
    ///
    /// ```
    /// use gdid_engine::{Authority, MemoryAuthority, CounterState};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let authority = MemoryAuthority::new(1);
    /// assert!(authority.raise_floor("shop", "order", CounterState { era: 0, next: 500 })?);
    /// assert_eq!(authority.allocate("shop", "order", 1).await?.start(), 500);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`raise_floor`](crate::backend::raise_floor): a bad name, a floor outside the counter
    /// space, [`AuthorityError::FloorBelow`].
    pub fn raise_floor(
        &self,
        scope: &str,
        sequence: &str,
        floor: CounterState,
    ) -> Result<bool, AuthorityError> {
        validate_names(scope, sequence)?;
        if floor.next == 0 || floor.next > COUNTER_MAX + 1 {
            return Err(AuthorityError::InvalidBlock(format!(
                "a floor of era {}, next counter {}: expected a next counter from 1 to 2^60",
                floor.era, floor.next
            )));
        }
        let mut counters = self.lock();
        let key = (scope.to_owned(), sequence.to_owned());
        if !counters.contains_key(&key) {
            check_names(&counters, self.number, scope, sequence)?;
        }
        match floor_of(counters.get(&key).copied(), floor) {
            Ok(Some(raised)) => {
                counters.insert(key, raised);
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(at) => Err(AuthorityError::FloorBelow {
                record: format!("the memory counter ({scope:?}, {sequence:?})"),
                era: i64::from(at.era),
                next: i64::try_from(at.next).unwrap_or(i64::MAX),
                floor_era: i64::from(floor.era),
                floor_next: i64::try_from(floor.next).unwrap_or(i64::MAX),
            }),
        }
    }

    /// Every counter, as `((scope, sequence), state)`, sorted.
    pub fn states(&self) -> Vec<((String, String), CounterState)> {
        let mut states: Vec<_> = self.lock().iter().map(|(k, v)| (k.clone(), *v)).collect();
        states.sort_by(|a, b| a.0.cmp(&b.0));
        states
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

/// The engine's rule of names and case ([`check_spelling`]) on the counters of a memory
/// authority.
fn check_names(
    counters: &HashMap<(String, String), CounterState>,
    key: u8,
    scope: &str,
    sequence: &str,
) -> Result<(), AuthorityError> {
    let spellings = counters
        .keys()
        .filter(|(s, q)| s.eq_ignore_ascii_case(scope) && q.eq_ignore_ascii_case(sequence))
        .cloned()
        .collect();
    check_spelling(&CounterKey::new(key, scope, sequence), spellings)
}

impl Authority for MemoryAuthority {
    fn number(&self) -> u8 {
        self.number
    }

    fn label(&self) -> String {
        "memory".into()
    }

    async fn allocate(&self, scope: &str, seq: &str, size: u64) -> Result<Block, AuthorityError> {
        validate_names(scope, seq)?;
        let mut counters = self.lock();
        let key = (scope.to_owned(), seq.to_owned());
        if !counters.contains_key(&key) {
            check_names(&counters, self.number, scope, seq)?;
        }
        let state = counters.entry(key).or_insert(CounterState::INITIAL);
        let (block, next) = state.reserve(self.number, size)?;
        *state = next;
        self.allocations.fetch_add(1, Ordering::Relaxed);
        Ok(block)
    }

    async fn give_back(&self, scope: &str, seq: &str, tail: Block) -> Result<bool, AuthorityError> {
        if tail.authority() != self.number {
            return Err(AuthorityError::InvalidBlock(format!(
                "{tail} is not a block of authority {}",
                self.number
            )));
        }
        let mut counters = self.lock();
        let Some(state) = counters.get_mut(&(scope.to_owned(), seq.to_owned())) else {
            return Ok(false);
        };
        match state.give_back(&tail) {
            Some(back) => {
                *state = back;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}
