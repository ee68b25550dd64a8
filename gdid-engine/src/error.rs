//! Errors of authorities and generators.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Boxed error of a store (a driver error, an I/O error).
pub type DriverError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The kinds every error falls in, whichever store it comes from: the one vocabulary of
/// [`AuthorityError::kind`], [`Error::kind`] and the backends' setup errors, each backend sorting
/// its driver's errors into it.
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
    /// A block size of 0, or above `COUNTER_MAX + 1`.
    #[error("invalid block size {0}: expected 1 to 2^60")]
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
    /// Every attempt of the retry policy ([`retry::run`](crate::backend::retry::run)) lost a race on
    /// `record`: too many writers at once, not a corrupt store. The caller may try again.
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
    Number(#[from] crate::backend::numbering::NumberConflict),
    /// A floor below where the counter already is: a floor only ever moves a counter forward
    /// ([`raise_floor`](crate::backend::raise_floor)), and the ids below the stored counter may have been
    /// issued.
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

/// What went wrong at one authority during the latest attempt to get a block.
#[derive(Debug, Clone)]
pub struct AuthorityFailure {
    /// The authority number.
    pub authority: u8,
    /// Its label.
    pub label: String,
    /// What happened.
    pub cause: FailureCause,
}

impl fmt::Display for AuthorityFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "authority {} ({}): {}",
            self.authority, self.label, self.cause
        )
    }
}

/// The cause in an [`AuthorityFailure`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum FailureCause {
    /// The authority answered with an error.
    Error(Arc<AuthorityError>),
    /// The authority did not answer within the allocation timeout.
    TimedOut(Duration),
    /// The authority answered with a block that overlaps or precedes one it gave before in this
    /// process: its counter went backwards (a restored backup?). The block was not used.
    WentBackwards {
        /// The block it answered with.
        block: super::Block,
        /// The end of the last block it gave.
        previous_end: gdid_core::Gdid,
    },
}

impl fmt::Display for FailureCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailureCause::Error(e) => write!(f, "{e}"),
            FailureCause::TimedOut(d) => write!(f, "no answer within {d:?}"),
            FailureCause::WentBackwards {
                block,
                previous_end,
            } => write!(
                f,
                "counter went backwards: block {block} is not after {previous_end}, refused"
            ),
        }
    }
}

/// Why a generator could not serve ids.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No authority could hand out a block: the latest cause at each authority tried.
    #[error("no id for {scope}/{sequence}: {}", Causes(.causes))]
    Unavailable {
        /// The scope.
        scope: String,
        /// The sequence.
        sequence: String,
        /// One entry per authority tried.
        causes: Vec<AuthorityFailure>,
    },
    /// The caller waited the whole request timeout for a block.
    #[error("no id for {scope}/{sequence} within {waited:?}: {}", Causes(.causes))]
    Timeout {
        /// The scope.
        scope: String,
        /// The sequence.
        sequence: String,
        /// How long the caller waited.
        waited: Duration,
        /// The latest cause at each authority tried so far (may be empty if none answered).
        causes: Vec<AuthorityFailure>,
    },
    /// The scope or sequence name is invalid.
    #[error(transparent)]
    InvalidName(#[from] InvalidName),
    /// A request for more ids than one call can serve.
    #[error("invalid count {count}: {reason}")]
    InvalidCount {
        /// The count asked for.
        count: u64,
        /// Why it cannot be served.
        reason: &'static str,
    },
    /// The generator is configured in a way that cannot work.
    #[error("invalid generator configuration: {reason}")]
    InvalidConfig {
        /// What is wrong.
        reason: String,
    },
    /// A store failed (strategies without a block cache report their store's error here).
    #[error("store error: {0}")]
    Store(Arc<DriverError>),
    /// The id space of the strategy is used up.
    #[error("exhausted: {0}")]
    Exhausted(String),
    /// Too many writers raced for the same record: every attempt of the retry policy lost
    /// (see [`AuthorityError::Contention`]). Nothing is corrupt; trying again may succeed.
    #[error("contention: {0}")]
    Contention(String),
    /// The stored state cannot be right (a counter of the wrong type, negative or missing, a
    /// range past its end, a window whose start is after its end): no id was issued from it, and
    /// none will be until it is repaired. The message names the row or document and the field.
    #[error("corrupt stored state: {0}")]
    Corrupt(String),
    /// The record or row values are taken from was last written on another database server (a
    /// failover to a replica, a restore onto another server), and a `u64` strategy has no era
    /// to move to: nothing is issued from it until an operator acts, as `remedy` says (see
    /// [`lineage`](crate::backend::lineage)).
    #[error(
        "{record} was last written on another database server (a failover or a restore): {remedy}"
    )]
    Switched {
        /// The record or row.
        record: String,
        /// What the operator runs to issue from it again.
        remedy: String,
    },
    /// The generator was closed ([`BlockGenerator::close`](super::BlockGenerator::close)): it
    /// serves no more blocks (a thread may still serve the slice it holds).
    #[error("the generator of {scope}/{sequence} is closed")]
    Closed {
        /// The scope.
        scope: String,
        /// The sequence.
        sequence: String,
    },
}

impl Error {
    /// Wraps any store error.
    pub fn store(error: impl Into<DriverError>) -> Self {
        Error::Store(Arc::new(error.into()))
    }

    /// The kind of the error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Unavailable { .. } | Error::Timeout { .. } | Error::Store(_) => {
                ErrorKind::Unavailable
            }
            Error::InvalidName(_)
            | Error::InvalidCount { .. }
            | Error::InvalidConfig { .. }
            | Error::Closed { .. }
            | Error::Switched { .. } => ErrorKind::Config,
            Error::Exhausted(_) => ErrorKind::Exhausted,
            Error::Contention(_) => ErrorKind::Conflict,
            Error::Corrupt(_) => ErrorKind::Corrupt,
        }
    }
}

impl From<AuthorityError> for Error {
    /// For strategies that ask an authority directly, without a block cache: every error keeps
    /// its [`kind`](AuthorityError::kind): a corrupt counter or block, an exhausted sequence, an
    /// invalid name or size (the count asked for), a lost race; a store that is another
    /// authority is a configuration error; a store that failed is a store error.
    fn from(error: AuthorityError) -> Self {
        match error {
            AuthorityError::InvalidName(name) => Error::InvalidName(name),
            AuthorityError::InvalidSize(count) => Error::InvalidCount {
                count,
                reason: "a store reserves 1 to 2^60 - 1 values at once",
            },
            AuthorityError::Corrupt(reason) | AuthorityError::InvalidBlock(reason) => {
                Error::Corrupt(reason)
            }
            conflict @ AuthorityError::Conflict(_) => Error::Contention(conflict.to_string()),
            AuthorityError::Exhausted => Error::Exhausted(AuthorityError::Exhausted.to_string()),
            contention @ AuthorityError::Contention { .. } => {
                Error::Contention(contention.to_string())
            }
            AuthorityError::Number(conflict) => Error::InvalidConfig {
                reason: conflict.to_string(),
            },
            AuthorityError::Switched { record, remedy } => Error::Switched { record, remedy },
            other => Error::store(other),
        }
    }
}

/// Formats the causes as `authority 1 (x): cause; authority 2 (y): cause`.
struct Causes<'a>(&'a [AuthorityFailure]);

impl fmt::Display for Causes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("no authority answered");
        }
        for (i, failure) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{failure}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authority_error_keeps_its_kind_where_a_generator_has_one() {
        let corrupt = Error::from(AuthorityError::Corrupt("next is -1".into()));
        assert!(matches!(&corrupt, Error::Corrupt(reason) if reason == "next is -1"));
        let name = InvalidName {
            kind: NameKind::Scope,
            name: "a b".into(),
            reason: "a space".into(),
        };
        let invalid = Error::from(AuthorityError::InvalidName(name.clone()));
        assert!(matches!(invalid, Error::InvalidName(n) if n == name));
        let exhausted = Error::from(AuthorityError::Exhausted);
        assert!(matches!(&exhausted, Error::Exhausted(_)), "{exhausted}");
        let lost = Error::from(AuthorityError::Contention {
            record: "the row".into(),
            attempts: 5,
            last: None,
        });
        assert!(matches!(&lost, Error::Contention(m) if m.starts_with("the row: lost 5")));
        assert_eq!(lost.kind(), ErrorKind::Conflict);
        assert_eq!(corrupt.kind(), ErrorKind::Corrupt);
        let failed = Error::from(AuthorityError::store("connection refused"));
        assert!(matches!(&failed, Error::Store(_)), "{failed}");
    }

    /// Every authority error is of the same kind once a strategy without a block cache (the
    /// one-at-a-time counter) passes it on: a size no store takes is not a store that failed
    /// (transient: tried again for ever), a bad block is corrupt, a lost race a conflict.
    #[test]
    fn an_authority_error_keeps_its_kind_through_a_generator_error() {
        let name = InvalidName {
            kind: NameKind::Sequence,
            name: String::new(),
            reason: "empty".into(),
        };
        let conflict = crate::backend::numbering::NumberConflict::NoneLeft { store: "s".into() };
        for error in [
            AuthorityError::InvalidName(name),
            AuthorityError::InvalidSize(0),
            AuthorityError::Number(conflict),
            AuthorityError::Exhausted,
            AuthorityError::InvalidBlock("start past the end".into()),
            AuthorityError::Corrupt("next is -1".into()),
            AuthorityError::store("connection refused"),
            AuthorityError::Conflict("deadlock".into()),
            AuthorityError::Contention {
                record: "the row".into(),
                attempts: 5,
                last: None,
            },
        ] {
            let (kind, message) = (error.kind(), error.to_string());
            let converted = Error::from(error);
            assert_eq!(converted.kind(), kind, "{message} became {converted}");
            assert_eq!(
                converted.kind().is_transient(),
                kind.is_transient(),
                "{message}"
            );
        }
    }
}
