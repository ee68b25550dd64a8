//! Authorities: durable counters that hand out blocks of consecutive GDID counters, and the rules
//! every backend keeps ([`CounterState::reserve`], [`validate_name`]).

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::error::{AuthorityError, InvalidName, NameKind};
use gdid_core::Gdid;
use gdid_core::{AUTHORITY_MAX, COUNTER_MAX};

/// A boxed, `Send` future: what the object-safe companion traits return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The most ids one block holds: a whole era, counters 0 to `COUNTER_MAX` (2^60 ids). The limit
/// is what a store can keep: after such a block its next counter is 2^60, the largest value of
/// [`STORED_NEXT`](crate::backend::STORED_NEXT) (a signed 64-bit integer in every store), and a
/// larger block would not fit in one era. [`Block::check_size`] is the one check of it.
pub const BLOCK_SIZE_MAX: u64 = COUNTER_MAX + 1;

/// The rule of block sizes as every message says it: the generators' count errors, and
/// [`AuthorityError::InvalidSize`], whose message spells it out (error.rs is below this module)
/// and is held to it by a test.
pub(crate) const BLOCK_SIZES: &str = "a block holds 1 to 2^60 ids";

/// Consecutive counters `start .. start + len` of one era, reserved from one authority.
///
/// ```
/// use gdid_engine::Block;
///
/// let block = Block::new(0, 3, 1, 10).unwrap();
/// assert_eq!(block.first().to_string(), "0:3:1");
/// assert_eq!(block.last().to_string(), "0:3:10");
/// assert_eq!(block.ids().count(), 10);
/// assert_eq!((block.era(), block.authority(), block.start(), block.len()), (0, 3, 1, 10));
/// ```
///
/// A block is made only by its checked constructors ([`Block::new`], [`Block::reserved_before`]),
/// so a block that would issue [`Gdid::ZERO`] or pass `COUNTER_MAX` cannot exist:
///
/// ```compile_fail,E0451
/// let zero = gdid_engine::Block { era: 0, authority: 1, start: 0, len: 1 };
/// println!("{zero}");
/// ```
///
/// and its fields are read through accessors:
///
/// ```compile_fail,E0616
/// let block = gdid_engine::Block::new(0, 3, 1, 10).unwrap();
/// assert_eq!(block.start, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Block {
    era: u32,
    authority: u8,
    start: u64,
    len: u64,
}

impl Block {
    /// Checks a block size an authority is asked for: 1 to [`BLOCK_SIZE_MAX`]. Every authority
    /// and every store checks sizes with it, before anything is written or sent.
    ///
    /// ```
    /// use gdid_engine::{BLOCK_SIZE_MAX, Block};
    ///
    /// assert_eq!(Block::check_size(BLOCK_SIZE_MAX).unwrap(), BLOCK_SIZE_MAX);
    /// let error = Block::check_size(BLOCK_SIZE_MAX + 1).unwrap_err();
    /// assert_eq!(error.to_string(), "invalid block size 1152921504606846977: a block holds 1 to 2^60 ids");
    /// assert!(Block::check_size(0).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`AuthorityError::InvalidSize`] for 0 or above [`BLOCK_SIZE_MAX`].
    pub fn check_size(size: u64) -> Result<u64, AuthorityError> {
        if size == 0 || size > BLOCK_SIZE_MAX {
            return Err(AuthorityError::InvalidSize(size));
        }
        Ok(size)
    }

    /// Builds a block, checking it: `len ≥ 1`, `authority ≤ 15`, the last counter ≤ `COUNTER_MAX`,
    /// and not containing counter 0 of era 0 (so that [`Gdid::ZERO`] is never an id).
    ///
    /// # Errors
    ///
    /// [`AuthorityError::InvalidBlock`] saying which rule is broken.
    pub fn new(era: u32, authority: u8, start: u64, len: u64) -> Result<Block, AuthorityError> {
        let invalid = |reason: &str| {
            Err(AuthorityError::InvalidBlock(format!(
                "era {era}, authority {authority}, start {start}, len {len}: {reason}"
            )))
        };
        if len == 0 {
            return invalid("a block holds at least one id");
        }
        if authority > AUTHORITY_MAX {
            return invalid("the authority is above 15");
        }
        if start > COUNTER_MAX || len - 1 > COUNTER_MAX - start {
            return invalid("the block passes COUNTER_MAX");
        }
        if era == 0 && start == 0 {
            return invalid("counter 0 of era 0 is never issued");
        }
        Ok(Block {
            era,
            authority,
            start,
            len,
        })
    }

    /// The block a reservation of `size` made, read back from the stored state it left:
    /// `(era, next)` as a store returns them (signed 64-bit, as SQL `BIGINT` and BSON `Int64`).
    ///
    /// # Errors
    ///
    /// [`AuthorityError::Exhausted`] for an era past `u32::MAX`; [`AuthorityError::Corrupt`] for
    /// a negative era or counter, or a counter below `size`; [`AuthorityError::InvalidBlock`] for a
    /// block that breaks the rules of [`Block::new`].
    ///
    /// ```
    /// use gdid_engine::Block;
    ///
    /// let block = Block::reserved_before(3, 0, 101, 100).unwrap();
    /// assert_eq!((block.start(), block.len()), (1, 100));
    /// ```
    pub fn reserved_before(
        authority: u8,
        era: i64,
        next: i64,
        size: u64,
    ) -> Result<Block, AuthorityError> {
        let era = u32::try_from(era).map_err(|_| {
            if era > i64::from(u32::MAX) {
                AuthorityError::Exhausted
            } else {
                AuthorityError::Corrupt(format!("era {era} is negative"))
            }
        })?;
        let next = u64::try_from(next)
            .map_err(|_| AuthorityError::Corrupt(format!("next counter {next} is negative")))?;
        let start = next.checked_sub(size).ok_or_else(|| {
            AuthorityError::Corrupt(format!(
                "next counter {next} is below the block size {size} just reserved"
            ))
        })?;
        Block::new(era, authority, start, size)
    }

    /// The era of every id in the block.
    pub const fn era(&self) -> u32 {
        self.era
    }

    /// The authority that reserved the block, `0..=15`.
    pub const fn authority(&self) -> u8 {
        self.authority
    }

    /// The first counter.
    pub const fn start(&self) -> u64 {
        self.start
    }

    /// How many counters, at least 1 (a block is never empty).
    #[allow(clippy::len_without_is_empty)]
    pub const fn len(&self) -> u64 {
        self.len
    }

    /// The counter one past the last.
    pub const fn end(&self) -> u64 {
        self.start + self.len
    }

    /// The first id of the block.
    pub const fn first(&self) -> Gdid {
        self.id_at(0)
    }

    /// The last id of the block.
    pub const fn last(&self) -> Gdid {
        self.id_at(self.len - 1)
    }

    /// The `offset`-th id of the block (`offset < len`).
    pub(crate) const fn id_at(&self, offset: u64) -> Gdid {
        Gdid::from_raw(
            self.era,
            ((self.authority as u64) << Gdid::COUNTER_BITS) | (self.start + offset),
        )
    }

    /// Every id of the block, in order.
    pub fn ids(&self) -> impl Iterator<Item = Gdid> + use<> {
        let block = *self;
        (0..block.len).map(move |offset| block.id_at(offset))
    }

    /// Whether `id` is one of the block's ids.
    pub fn contains(&self, id: Gdid) -> bool {
        id.era() == self.era
            && id.authority() == self.authority
            && (self.start..self.end()).contains(&id.counter())
    }
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..={} ({} ids)", self.first(), self.last(), self.len)
    }
}

/// The durable state of one (scope, sequence) counter at an authority: the era and the next
/// counter to hand out. Backends persist it; [`reserve`](Self::reserve) is the one rule for moving
/// it forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CounterState {
    /// The current era.
    pub era: u32,
    /// The next counter to hand out in `era`; may be `COUNTER_MAX + 1` (the era is used up).
    pub next: u64,
}

impl CounterState {
    /// The state of a sequence never used: era 0, counter 1 (counter 0 of era 0 is never issued).
    pub const INITIAL: CounterState = CounterState { era: 0, next: 1 };

    /// Reserves `size` consecutive counters for `authority`: the block to hand out and the state
    /// to persist **before** handing it out.
    ///
    /// Rules: counter 0 of era 0 is skipped; a block never passes `COUNTER_MAX`: when `size` does
    /// not fit in what is left of the era, the era goes up by one and counting restarts at 0 (the
    /// rest of the old era is left unused).
    ///
    /// # Errors
    ///
    /// [`AuthorityError::InvalidSize`] for `size` 0 or above [`BLOCK_SIZE_MAX`];
    /// [`AuthorityError::Exhausted`] when era `u32::MAX` is used up; and
    /// [`AuthorityError::Corrupt`] for a stored state that no authority writes (`next` above
    /// `COUNTER_MAX + 1`).
    ///
    /// ```
    /// use gdid_engine::CounterState;
    /// use gdid_core::COUNTER_MAX;
    ///
    /// let (block, state) = CounterState::INITIAL.reserve(2, 100).unwrap();
    /// assert_eq!((block.start(), block.len(), state.next), (1, 100, 101));
    ///
    /// let near_end = CounterState { era: 7, next: COUNTER_MAX - 5 };
    /// let (block, state) = near_end.reserve(2, 100).unwrap();
    /// assert_eq!((block.era(), block.start(), state), (8, 0, CounterState { era: 8, next: 100 }));
    /// ```
    pub fn reserve(
        self,
        authority: u8,
        size: u64,
    ) -> Result<(Block, CounterState), AuthorityError> {
        Block::check_size(size)?;
        if self.next > COUNTER_MAX + 1 {
            return Err(AuthorityError::Corrupt(format!(
                "next counter {} of era {} is above COUNTER_MAX + 1",
                self.next, self.era
            )));
        }
        let mut era = self.era;
        let mut start = if era == 0 {
            self.next.max(1)
        } else {
            self.next
        };
        if COUNTER_MAX + 1 - start < size {
            era = era.checked_add(1).ok_or(AuthorityError::Exhausted)?;
            start = 0;
        }
        let block = Block::new(era, authority, start, size)?;
        Ok((
            block,
            CounterState {
                era,
                next: block.end(),
            },
        ))
    }

    /// The one rule of giving ids back: the unused `tail` of the latest block is returned to its
    /// counter only while the counter stands right after it (`self` is `tail.era`, `tail.end()`:
    /// nothing was reserved since), and the counter goes back to the tail's first counter. The
    /// state to persist, with one conditional write from `self`, or `None` when nothing can be
    /// given back (another block was reserved since, or the tail is only counter 0, which a
    /// stored counter never points at).
    ///
    /// Counter 0 is never given back: a stored `next` of 0 is not a state an authority writes
    /// (it would read as a record that hands out counter 0, then the counters from 1 again).
    ///
    /// ```
    /// use gdid_engine::{Block, CounterState};
    ///
    /// let (block, state) = CounterState::INITIAL.reserve(2, 100).unwrap();
    /// let tail = Block::new(0, 2, 6, 95).unwrap(); // ids 1-5 were served
    /// assert_eq!(state.give_back(&tail), Some(CounterState { era: 0, next: 6 }));
    /// let (_, later) = state.reserve(2, 100).unwrap(); // another block since: too late
    /// assert_eq!(later.give_back(&tail), None);
    /// # let _ = block;
    /// ```
    pub fn give_back(self, tail: &Block) -> Option<CounterState> {
        let at_tail_end = self.era == tail.era() && self.next == tail.end();
        let next = tail.start().max(1);
        (at_tail_end && next < tail.end()).then_some(CounterState {
            era: self.era,
            next,
        })
    }
}

/// Checks a scope or sequence name: 1 to 80 characters, ASCII letters and digits, with `_`, `.`
/// and `-` allowed only inside (not first or last).
///
/// # Errors
///
/// [`InvalidName`] saying which rule the name breaks.
///
/// ```
/// use gdid_engine::{NameKind, backend::validate_name};
///
/// assert!(validate_name(NameKind::Scope, "billing.v2").is_ok());
/// assert_eq!(
///     validate_name(NameKind::Sequence, "-orders").unwrap_err().to_string(),
///     "invalid sequence name \"-orders\": '-' is not allowed first"
/// );
/// ```
pub fn validate_name(kind: NameKind, name: &str) -> Result<(), InvalidName> {
    if is_valid_name(name.as_bytes()) {
        return Ok(());
    }
    name_error(kind, name)
}

/// Whether `name` is a valid name, read as bytes: the check of every block a store reserves.
/// Valid names are ASCII, so their bytes are their characters; anything else is left to
/// [`name_error`], which says what is wrong.
fn is_valid_name(name: &[u8]) -> bool {
    let inner = |c: u8| matches!(c, b'_' | b'.' | b'-');
    match (name.first(), name.last()) {
        (Some(&first), Some(&last)) => {
            name.len() <= 80
                && !inner(first)
                && !inner(last)
                && name.iter().all(|&c| c.is_ascii_alphanumeric() || inner(c))
        }
        _ => false,
    }
}

/// The error of a name [`is_valid_name`] refused, read character by character; `Ok` for none
/// (it agrees with `is_valid_name`: the test `names_are_judged_alike_as_bytes_and_characters`).
#[cold]
fn name_error(kind: NameKind, name: &str) -> Result<(), InvalidName> {
    let invalid = |reason: String| {
        Err(InvalidName {
            kind,
            name: name.chars().take(100).collect(),
            reason,
        })
    };
    let len = name.chars().count();
    if !(1..=80).contains(&len) {
        return invalid(format!("{len} characters, expected 1 to 80"));
    }
    for (index, c) in name.chars().enumerate() {
        let inner = matches!(c, '_' | '.' | '-');
        if !(c.is_ascii_alphanumeric() || inner) {
            return invalid(format!(
                "{c:?} at character {index} is not a letter, digit, '_', '.' or '-'"
            ));
        }
        if inner && index == 0 {
            return invalid(format!("{c:?} is not allowed first"));
        }
        if inner && index == len - 1 {
            return invalid(format!("{c:?} is not allowed last"));
        }
    }
    Ok(())
}

/// Checks the scope, then the sequence name, of a counter ([`validate_name`]).
pub(crate) fn validate_names(scope: &str, sequence: &str) -> Result<(), InvalidName> {
    validate_name(NameKind::Scope, scope)?;
    validate_name(NameKind::Sequence, sequence)
}

/// A numbered issuer of blocks backed by a durable counter per (scope, sequence).
///
/// Implementations keep the rules of [`CounterState::reserve`] and [`validate_name`], and return
/// a block only once its new high-water mark is durable: a crash may lose ids (gaps), never repeat
/// them.
pub trait Authority: Send + Sync + 'static {
    /// The authority number, `0..=15`, written into every id it issues.
    fn number(&self) -> u8;

    /// A short description for errors and logs (a store kind and address, never a password).
    fn label(&self) -> String;

    /// Reserves `size` consecutive counters of (scope, sequence).
    fn allocate(
        &self,
        scope: &str,
        sequence: &str,
        size: u64,
    ) -> impl Future<Output = Result<Block, AuthorityError>> + Send;

    /// Gives back `tail`, the unused end of the latest block this authority handed out for
    /// (scope, sequence), so that its ids are issued later instead of lost: by one conditional
    /// write, only while nothing was reserved after it ([`CounterState::give_back`]). Whether the
    /// ids went back. The caller must never serve them afterwards, whatever the answer.
    ///
    /// The default gives nothing back (`Ok(false)`): the ids are lost, never repeated.
    fn give_back(
        &self,
        scope: &str,
        sequence: &str,
        tail: Block,
    ) -> impl Future<Output = Result<bool, AuthorityError>> + Send {
        let _ = (scope, sequence, tail);
        std::future::ready(Ok(false))
    }
}

impl<A: Authority> Authority for std::sync::Arc<A> {
    fn number(&self) -> u8 {
        (**self).number()
    }

    fn label(&self) -> String {
        (**self).label()
    }

    async fn allocate(
        &self,
        scope: &str,
        sequence: &str,
        size: u64,
    ) -> Result<Block, AuthorityError> {
        (**self).allocate(scope, sequence, size).await
    }

    async fn give_back(
        &self,
        scope: &str,
        sequence: &str,
        tail: Block,
    ) -> Result<bool, AuthorityError> {
        (**self).give_back(scope, sequence, tail).await
    }
}

/// The object-safe companion of [`Authority`], implemented for every authority, so that one
/// generator can fail over between authorities of different types.
pub trait DynAuthority: Send + Sync + 'static {
    /// See [`Authority::number`].
    fn number(&self) -> u8;
    /// See [`Authority::label`].
    fn label(&self) -> String;
    /// See [`Authority::allocate`].
    fn allocate_boxed<'a>(
        &'a self,
        scope: &'a str,
        sequence: &'a str,
        size: u64,
    ) -> Boxed<'a, Block>;
    /// See [`Authority::give_back`].
    fn give_back_boxed<'a>(
        &'a self,
        scope: &'a str,
        sequence: &'a str,
        tail: Block,
    ) -> Boxed<'a, bool>;
}

/// An authority shows its number and label.
impl std::fmt::Debug for dyn DynAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynAuthority")
            .field("number", &self.number())
            .field("label", &self.label())
            .finish()
    }
}

/// What the methods of [`DynAuthority`] return: the answer of an [`Authority`], boxed.
type Boxed<'a, T> = BoxFuture<'a, Result<T, AuthorityError>>;

impl<A: Authority> DynAuthority for A {
    fn number(&self) -> u8 {
        Authority::number(self)
    }

    fn label(&self) -> String {
        Authority::label(self)
    }

    fn allocate_boxed<'a>(
        &'a self,
        scope: &'a str,
        sequence: &'a str,
        size: u64,
    ) -> Boxed<'a, Block> {
        Box::pin(self.allocate(scope, sequence, size))
    }

    fn give_back_boxed<'a>(
        &'a self,
        scope: &'a str,
        sequence: &'a str,
        tail: Block,
    ) -> Boxed<'a, bool> {
        Box::pin(self.give_back(scope, sequence, tail))
    }
}

#[cfg(test)]
mod tests {

    /// The byte check and the character-by-character one accept exactly the same names.
    #[test]
    fn names_are_judged_alike_as_bytes_and_characters() {
        let long = "a".repeat(80);
        let too_long = "a".repeat(81);
        let names = [
            "", "a", "-", "a-", "-a", "a-b", "a.b_c-d", "A9", "a b", "é", "aé", "a\0", "_a", "a_",
            ".", "a..b", &long, &too_long, "ab\u{7f}", "café-1", "ok.v2",
        ];
        for name in names {
            assert_eq!(
                is_valid_name(name.as_bytes()),
                name_error(NameKind::Scope, name).is_ok(),
                "{name:?}"
            );
        }
    }
    use super::*;

    #[test]
    fn the_first_block_of_era_zero_skips_counter_zero() {
        let (block, next) = CounterState { era: 0, next: 0 }.reserve(0, 5).unwrap();
        assert_eq!((block.start, block.len, next.next), (1, 5, 6));
        assert!(!block.ids().any(|id| id.is_zero()));
        let (block, _) = CounterState { era: 1, next: 0 }.reserve(0, 5).unwrap();
        assert_eq!(block.start, 0, "counter 0 is fine in later eras");
    }

    #[test]
    fn blocks_follow_each_other_without_gap_or_overlap() {
        let mut state = CounterState::INITIAL;
        let mut expected_start = 1;
        for size in [1, 7, 100, 1 << 40] {
            let (block, next) = state.reserve(4, size).unwrap();
            assert_eq!(block.start, expected_start);
            assert_eq!(block.len, size);
            expected_start += size;
            state = next;
        }
    }

    #[test]
    fn era_rolls_over_when_the_block_would_pass_counter_max() {
        let exact = CounterState {
            era: 3,
            next: COUNTER_MAX - 9,
        };
        let (block, state) = exact.reserve(1, 10).unwrap();
        assert_eq!(
            (block.era, block.start, block.last().counter()),
            (3, COUNTER_MAX - 9, COUNTER_MAX)
        );
        assert_eq!(
            state,
            CounterState {
                era: 3,
                next: COUNTER_MAX + 1
            }
        );
        let (block, state) = state.reserve(1, 10).unwrap();
        assert_eq!((block.era, block.start), (4, 0));
        assert_eq!(state.next, 10);

        let tight = CounterState {
            era: 3,
            next: COUNTER_MAX - 8,
        };
        let (block, _) = tight.reserve(1, 10).unwrap();
        assert_eq!((block.era, block.start), (4, 0));

        let last_era = CounterState {
            era: u32::MAX,
            next: COUNTER_MAX,
        };
        assert!(matches!(
            last_era.reserve(1, 2),
            Err(AuthorityError::Exhausted)
        ));
    }

    #[test]
    fn a_tail_goes_back_only_while_nothing_was_reserved_after_it() {
        let (block, state) = CounterState::INITIAL.reserve(1, 10).unwrap();
        assert_eq!(block.start, 1);
        let whole = state.give_back(&block);
        assert_eq!(
            whole,
            Some(CounterState::INITIAL),
            "an unused block goes back whole"
        );
        let tail = Block::new(0, 1, 4, 7).unwrap();
        assert_eq!(
            state.give_back(&tail),
            Some(CounterState { era: 0, next: 4 })
        );
        let (_, later) = state.reserve(1, 10).unwrap();
        assert_eq!(later.give_back(&tail), None, "reserved since");
        let other_era = CounterState { era: 1, next: 11 };
        assert_eq!(other_era.give_back(&tail), None, "same counter, other era");
        // A tail from counter 0 (a later era's first block) goes back from counter 1.
        let rolled = CounterState { era: 4, next: 10 };
        let from_zero = Block::new(4, 1, 0, 10).unwrap();
        assert_eq!(
            rolled.give_back(&from_zero),
            Some(CounterState { era: 4, next: 1 })
        );
        let only_zero = Block::new(4, 1, 0, 1).unwrap();
        assert_eq!(CounterState { era: 4, next: 1 }.give_back(&only_zero), None);
    }

    #[test]
    fn bad_sizes_and_states_are_errors() {
        assert!(matches!(
            CounterState::INITIAL.reserve(0, 0),
            Err(AuthorityError::InvalidSize(0))
        ));
        assert!(matches!(
            CounterState::INITIAL.reserve(0, COUNTER_MAX + 2),
            Err(AuthorityError::InvalidSize(_))
        ));
        assert!(matches!(
            CounterState {
                era: 0,
                next: u64::MAX
            }
            .reserve(0, 1),
            Err(AuthorityError::Corrupt(_))
        ));
        assert!(matches!(
            CounterState::INITIAL.reserve(16, 1),
            Err(AuthorityError::InvalidBlock(_))
        ));
    }

    #[test]
    fn stored_states_turn_into_blocks_or_typed_errors() {
        assert_eq!(Block::reserved_before(2, 0, 11, 10).unwrap().start, 1);
        assert!(matches!(
            Block::reserved_before(2, 0, 10, 10),
            Err(AuthorityError::InvalidBlock(_))
        ));
        assert!(matches!(
            Block::reserved_before(2, 1 << 32, 10, 10),
            Err(AuthorityError::Exhausted)
        ));
        assert!(matches!(
            Block::reserved_before(2, -1, 10, 10),
            Err(AuthorityError::Corrupt(_))
        ));
        assert!(matches!(
            Block::reserved_before(2, 0, -1, 10),
            Err(AuthorityError::Corrupt(_))
        ));
        assert!(matches!(
            Block::reserved_before(2, 0, 5, 10),
            Err(AuthorityError::Corrupt(_))
        ));
    }

    #[test]
    fn every_size_error_says_the_one_rule() {
        for size in [0, BLOCK_SIZE_MAX + 1, u64::MAX] {
            let error = Block::check_size(size).unwrap_err();
            assert!(matches!(error, AuthorityError::InvalidSize(s) if s == size));
            assert_eq!(
                error.to_string(),
                format!("invalid block size {size}: {BLOCK_SIZES}")
            );
        }
        assert_eq!(Block::check_size(1).unwrap(), 1);
        assert_eq!(Block::check_size(BLOCK_SIZE_MAX).unwrap(), BLOCK_SIZE_MAX);
    }

    #[test]
    fn blocks_are_checked() {
        assert!(Block::new(0, 0, 0, 1).is_err());
        assert!(Block::new(0, 0, 1, 0).is_err());
        assert!(Block::new(0, 16, 1, 1).is_err());
        assert!(Block::new(0, 0, COUNTER_MAX, 2).is_err());
        assert!(Block::new(0, 0, COUNTER_MAX, 1).is_ok());
        assert!(Block::new(9, 15, 0, COUNTER_MAX + 1).is_ok());
    }

    #[test]
    fn names_are_validated() {
        for good in ["a", "orders", "Billing.v2", "a-b_c.d", &"x".repeat(80)] {
            assert_eq!(validate_name(NameKind::Scope, good), Ok(()), "{good}");
        }
        for (bad, reason) in [
            ("", "0 characters, expected 1 to 80"),
            (&"x".repeat(81), "81 characters, expected 1 to 80"),
            ("_a", "'_' is not allowed first"),
            ("a.", "'.' is not allowed last"),
            (
                "a b",
                "' ' at character 1 is not a letter, digit, '_', '.' or '-'",
            ),
            (
                "a/b",
                "'/' at character 1 is not a letter, digit, '_', '.' or '-'",
            ),
            (
                "é",
                "'é' at character 0 is not a letter, digit, '_', '.' or '-'",
            ),
        ] {
            let err = validate_name(NameKind::Sequence, bad).unwrap_err();
            assert_eq!(err.reason, reason, "{bad:?}");
        }
    }
}
