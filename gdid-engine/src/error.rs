//! Errors of authorities and stores: what an [`Authority`](crate::Authority) answers with, and
//! the kinds every error falls in.

use std::fmt;

/// Boxed error of a store (a driver error, an I/O error).
pub type DriverError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The kinds every error falls in, whichever store it comes from: the one vocabulary of
/// [`AuthorityError::kind`], [`Error::kind`](crate::Error::kind) and the backends' setup errors,
/// each backend sorting its driver's errors into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The store failed, did not answer, or cannot be reached: trying again later, or at
    /// another authority, may succeed.
    Unavailable,
    /// Writers raced for one record (a duplicate key, a write conflict, a deadlock), and the
    /// retry policy lost: trying again may succeed.
    Conflict,
    /// A stored value no authority writes: the message names the record and the field. Nothing
    /// is issued from it until it is repaired.
    Corrupt,
    /// Something to fix in the call or the configuration: a name, a size, a count, a layout, an
    /// authority number, a URL.
    Config,
    /// The id space is used up.
    Exhausted,
}

impl ErrorKind {
    /// Whether trying again, unchanged, may succeed.
    pub fn is_transient(self) -> bool {
        matches!(self, ErrorKind::Unavailable | ErrorKind::Conflict)
    }
}

/// Which kind of name an [`InvalidName`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NameKind {
    /// A scope (think: a database).
    Scope,
    /// A sequence (think: a table).
    Sequence,
}

impl fmt::Display for NameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameKind::Scope => "scope",
            NameKind::Sequence => "sequence",
        })
    }
}

/// A scope or sequence name that breaks the naming rules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} name {name:?}: {reason}")]
pub struct InvalidName {
    /// Scope or sequence.
    pub kind: NameKind,
    /// The name (cut at 100 characters).
    pub name: String,
    /// Which rule it breaks.
    pub reason: String,
}

/// Why an authority could not hand out a block. Every backend sorts its driver's errors into the
/// same kinds: [`Store`](Self::Store) (the store failed or cannot be reached),
/// [`Conflict`](Self::Conflict) (a lost race: duplicate key, write conflict, deadlock),
/// [`Corrupt`](Self::Corrupt) (a stored value no authority writes, the record and field named),
/// [`Number`](Self::Number) and the invalid-input kinds (configuration to fix).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthorityError {
    /// The scope or sequence name is invalid.
    #[error(transparent)]
    InvalidName(#[from] InvalidName),
    /// A block size of 0, or above [`BLOCK_SIZE_MAX`](crate::BLOCK_SIZE_MAX)
    /// ([`Block::check_size`](crate::Block::check_size)).
    #[error("invalid block size {0}: a block holds 1 to 2^60 ids")]
    InvalidSize(u64),
    /// Era `u32::MAX` is used up: the sequence can issue no more ids.
    #[error("the sequence is exhausted: era 4294967295 is used up")]
    Exhausted,
    /// A block that breaks the block rules (a backend bug or a tampered store).
    #[error("invalid block: {0}")]
    InvalidBlock(String),
    /// The stored counter state is malformed (wrong type, negative, missing field...).
    #[error("corrupt counter state: {0}")]
    Corrupt(String),
    /// The store failed or cannot be reached: connection refused, server error, injected
    /// fault... (unavailable: trying again later, or at another authority, may succeed).
    #[error("store error: {0}")]
    Store(#[source] DriverError),
    /// A write lost a race to a concurrent writer: a duplicate key, a write conflict, a deadlock
    /// or a serialization failure the store reported. The engine's retry policy
    /// ([`retry`](crate::backend::retry)) tries it again.
    #[error("conflict with a concurrent writer: {0}")]
    Conflict(String),
    /// Every attempt of the retry policy ([`retry::run`](crate::backend::retry::run)) lost a race
    /// on `record`: too many writers at once, not a corrupt store. The caller may try again.
    #[error("{record}: lost {attempts} races in a row to concurrent writers{}", Last(.last))]
    Contention {
        /// The record raced for.
        record: String,
        /// How many attempts were lost.
        attempts: u32,
        /// The last conflict the store reported, if it reported one.
        last: Option<String>,
    },
    /// The store is another authority than the one asked for, or cannot be given a number (see
    /// [`numbering`](crate::backend::numbering)).
    #[error(transparent)]
    Number(#[from] NumberConflict),
    /// A floor below where the counter already is: a floor only ever moves a counter forward
    /// ([`raise_floor`](crate::backend::raise_floor)), and the ids below the stored counter may
    /// have been issued.
    #[error(
        "{record} is at era {era}, next counter {next}, past the floor asked for (era \
         {floor_era}, next counter {floor_next}): a floor is never lowered"
    )]
    FloorBelow {
        /// The record.
        record: String,
        /// Its era.
        era: i64,
        /// Its next counter.
        next: i64,
        /// The era of the floor asked for.
        floor_era: i64,
        /// The next counter of the floor asked for.
        floor_next: i64,
    },
    /// The record was last moved by another database server than the one that holds it now (a
    /// failover, a restore onto another server), and cannot move to a new era by itself: a
    /// `u64` counter has no era, and a record whose lineage changed less than a minute ago is
    /// on a connection that alternates between servers (see [`lineage`](crate::backend::lineage)).
    /// Nothing is issued from it until an operator acts, as `remedy` says; another authority
    /// may serve meanwhile.
    #[error(
        "{record} was last written on another database server (a failover or a restore): {remedy}"
    )]
    Switched {
        /// The record.
        record: String,
        /// What the operator runs to issue from it again.
        remedy: String,
    },
}

/// `(last: …)` after a [`AuthorityError::Contention`] message, when there is a last conflict.
struct Last<'a>(&'a Option<String>);

impl fmt::Display for Last<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(last) => write!(f, " (last: {last})"),
            None => Ok(()),
        }
    }
}

impl AuthorityError {
    /// Wraps any store error.
    pub fn store(error: impl Into<DriverError>) -> Self {
        AuthorityError::Store(error.into())
    }

    /// A driver's error, of the `kind` its backend sorted it into: a corrupt record or a lost
    /// race keeps the driver's message ([`Corrupt`](Self::Corrupt), [`Conflict`](Self::Conflict)),
    /// anything else is the store failing ([`Store`](Self::Store)).
    pub fn from_driver<E>(kind: ErrorKind, error: E) -> Self
    where
        E: Into<DriverError> + fmt::Display,
    {
        match kind {
            ErrorKind::Corrupt => AuthorityError::Corrupt(error.to_string()),
            ErrorKind::Conflict => AuthorityError::Conflict(error.to_string()),
            _ => AuthorityError::store(error),
        }
    }

    /// The kind of the error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            AuthorityError::InvalidName(_)
            | AuthorityError::InvalidSize(_)
            | AuthorityError::Number(_)
            | AuthorityError::FloorBelow { .. }
            | AuthorityError::Switched { .. } => ErrorKind::Config,
            AuthorityError::Exhausted => ErrorKind::Exhausted,
            AuthorityError::InvalidBlock(_) | AuthorityError::Corrupt(_) => ErrorKind::Corrupt,
            AuthorityError::Store(_) => ErrorKind::Unavailable,
            AuthorityError::Conflict(_) | AuthorityError::Contention { .. } => ErrorKind::Conflict,
        }
    }

    /// Whether trying again (here or at another authority) may succeed. Invalid names and sizes
    /// will fail the same way everywhere, and a store that is another authority than configured
    /// is a configuration to fix, not to fail over from.
    pub fn is_retryable(&self) -> bool {
        !matches!(
            self,
            AuthorityError::InvalidName(_)
                | AuthorityError::InvalidSize(_)
                | AuthorityError::Number(_)
                | AuthorityError::FloorBelow { .. }
        )
    }
}

/// Why a store cannot be the authority asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NumberConflict {
    /// The store is recorded as another authority.
    #[error(
        "{store} is authority {recorded} (recorded in it), not {asked}: \
         drop the number or give {recorded}"
    )]
    Recorded {
        /// The store.
        store: String,
        /// Its recorded number.
        recorded: u8,
        /// The number asked for.
        asked: u8,
    },
    /// The store has no record and counters of several authority numbers, so which one it is
    /// must be said.
    #[error(
        "{store} has no recorded authority number and holds counters of authorities {found:?}: \
         give the number it is to keep"
    )]
    Ambiguous {
        /// The store.
        store: String,
        /// The numbers its counters use.
        found: Vec<u8>,
    },
    /// Two stores listed together would be one authority.
    #[error(
        "{store} and {other} would both be authority {number}: \
         two stores of one sequence would issue the same ids"
    )]
    Shared {
        /// One store.
        store: String,
        /// The other.
        other: String,
        /// The number both hold or ask for.
        number: u8,
    },
    /// The store has no record, but its server was promoted from a replica (or restored onto
    /// another server): the record may be one the copy never received, and the number it would
    /// take may be the one another store's copy holds.
    #[error(
        "{store} has no recorded authority number, and its server was promoted from a replica \
         or restored (its history shows another server): the record may have been lost with \
         the old primary; give the number it had with --authority"
    )]
    RecordLost {
        /// The store.
        store: String,
    },
    /// The stores listed together hold every number.
    #[error("no authority number is left for {store}: the other stores hold all 16")]
    NoneLeft {
        /// The store.
        store: String,
    },
    /// A store with no record cannot be given a number while a store listed with it cannot be
    /// read: the number it would take may be the unread store's.
    #[error(
        "{store} has no recorded authority number and {unread} cannot be read now, so the \
         number it would take may be {unread}'s: give it --authority, or try again when \
         {unread} answers"
    )]
    Unseen {
        /// The store with no record.
        store: String,
        /// The store that cannot be read.
        unread: String,
    },
}
