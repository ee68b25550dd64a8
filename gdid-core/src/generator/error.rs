//! Errors of authorities and generators.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Boxed error of a store (a driver error, an I/O error).
pub type StoreError = Box<dyn std::error::Error + Send + Sync + 'static>;

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

/// Why an authority could not hand out a block.
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
    /// The store failed: connection refused, server error, injected fault...
    #[error("store error: {0}")]
    Store(#[source] StoreError),
    /// The store is another authority than the one asked for, or cannot be given a number (see
    /// [`numbering`](super::numbering)).
    #[error(transparent)]
    Number(#[from] super::numbering::NumberConflict),
}

impl AuthorityError {
    /// Wraps any store error.
    pub fn store(error: impl Into<StoreError>) -> Self {
        AuthorityError::Store(error.into())
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
        previous_end: crate::Gdid,
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
    Store(Arc<StoreError>),
    /// The id space of the strategy is used up.
    #[error("exhausted: {0}")]
    Exhausted(String),
    /// The stored state cannot be right (a counter of the wrong type, negative or missing, a
    /// range past its end, a window whose start is after its end): no id was issued from it, and
    /// none will be until it is repaired. The message names the row or document and the field.
    #[error("corrupt stored state: {0}")]
    Corrupt(String),
}

impl Error {
    /// Wraps any store error.
    pub fn store(error: impl Into<StoreError>) -> Self {
        Error::Store(Arc::new(error.into()))
    }
}

impl From<AuthorityError> for Error {
    /// For strategies that ask an authority directly, without a block cache: a corrupt counter,
    /// an exhausted sequence and an invalid name keep their kind, a store that is another
    /// authority is a configuration error, anything else is a store error.
    fn from(error: AuthorityError) -> Self {
        match error {
            AuthorityError::InvalidName(name) => Error::InvalidName(name),
            AuthorityError::Corrupt(reason) => Error::Corrupt(reason),
            AuthorityError::Exhausted => Error::Exhausted(AuthorityError::Exhausted.to_string()),
            AuthorityError::Number(conflict) => Error::InvalidConfig {
                reason: conflict.to_string(),
            },
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
        let failed = Error::from(AuthorityError::store("connection refused"));
        assert!(matches!(&failed, Error::Store(_)), "{failed}");
    }
}
