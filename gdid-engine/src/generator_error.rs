//! The error of a generator: what a caller of [`IdGenerator`](crate::IdGenerator) gets, with each
//! authority's cause.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::authority::Block;
use crate::error::{AuthorityError, DriverError, ErrorKind, InvalidName, NumberConflict, Recourse};

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
        block: Block,
        /// The end of the last block it gave.
        previous_end: gdid_core::Gdid,
    },
}

impl FailureCause {
    /// The kind of the cause: an error's own, [`ErrorKind::Unavailable`] for no answer,
    /// [`ErrorKind::Corrupt`] for a counter that went backwards (a store restored from an old
    /// backup, to repair).
    pub fn kind(&self) -> ErrorKind {
        match self {
            FailureCause::Error(error) => error.kind(),
            FailureCause::TimedOut(_) => ErrorKind::Unavailable,
            FailureCause::WentBackwards { .. } => ErrorKind::Corrupt,
        }
    }

    /// What to do about it: its kind's [`recourse`](ErrorKind::recourse).
    pub fn recourse(&self) -> Recourse {
        self.kind().recourse()
    }
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

/// Why a generator could not serve ids: one pointer wide, so that `Result<Gdid, Error>` (16
/// bytes) comes back in registers and the hot path copies no more than a successful id needs.
///
/// [`kind`](Self::kind) is the coarse class a caller acts on (try again, fix the configuration,
/// repair the store); [`detail`](Self::detail) is what happened, to match on. The detail is
/// boxed: the allocation happens only when something went wrong.
///
/// ```
/// use gdid_engine::{Error, ErrorDetail, ErrorKind};
///
/// let error = Error::corrupt("the row holds next = -1");
/// assert_eq!(error.kind(), ErrorKind::Corrupt);
/// assert!(matches!(error.detail(), ErrorDetail::Corrupt(reason) if reason.contains("-1")));
/// assert_eq!(error.to_string(), "corrupt stored state: the row holds next = -1");
/// ```
#[derive(Clone)]
pub struct Error(Box<ErrorDetail>);

/// What went wrong, in an [`Error`] ([`Error::detail`]).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorDetail {
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
    /// The store is not the authority asked for, or cannot be given a number (strategies
    /// without a block cache report their authority's [`AuthorityError::Number`] here).
    #[error(transparent)]
    Number(NumberConflict),
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
    /// The kind of the error.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind()
    }

    /// What to do about it: its kind's [`recourse`](ErrorKind::recourse). A caller's wait ends
    /// with an error of a lasting recourse as soon as it is known.
    pub fn recourse(&self) -> Recourse {
        self.0.kind().recourse()
    }

    /// What went wrong.
    pub fn detail(&self) -> &ErrorDetail {
        &self.0
    }

    /// What went wrong, taken out of the error.
    pub fn into_detail(self) -> ErrorDetail {
        *self.0
    }

    /// Wraps any store error ([`ErrorDetail::Store`]).
    #[cold]
    #[inline(never)]
    pub fn store(error: impl Into<DriverError>) -> Self {
        ErrorDetail::Store(Arc::new(error.into())).into()
    }

    /// [`ErrorDetail::Corrupt`]: the stored state cannot be right, as `reason` says.
    #[cold]
    #[inline(never)]
    pub fn corrupt(reason: impl Into<String>) -> Self {
        ErrorDetail::Corrupt(reason.into()).into()
    }

    /// [`ErrorDetail::Exhausted`]: the id space is used up, as `reason` says.
    #[cold]
    #[inline(never)]
    pub fn exhausted(reason: impl Into<String>) -> Self {
        ErrorDetail::Exhausted(reason.into()).into()
    }

    /// [`ErrorDetail::InvalidConfig`]: the generator cannot work, as `reason` says.
    #[cold]
    #[inline(never)]
    pub fn invalid_config(reason: impl Into<String>) -> Self {
        ErrorDetail::InvalidConfig {
            reason: reason.into(),
        }
        .into()
    }

    /// [`ErrorDetail::InvalidCount`]: `count` ids cannot be served at once, as `reason` says.
    #[cold]
    #[inline(never)]
    pub fn invalid_count(count: u64, reason: &'static str) -> Self {
        ErrorDetail::InvalidCount { count, reason }.into()
    }
}

impl ErrorDetail {
    /// The kind of the error. No authority serving is [`ErrorKind::Unavailable`], unless every
    /// authority's last answer was lasting (its [`recourse`](ErrorKind::recourse) is
    /// [`Repair`](Recourse::Repair) or [`Stop`](Recourse::Stop)): then it is the first one's
    /// kind, so that the error is not mistaken for an outage that a wait would end.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ErrorDetail::Unavailable { causes, .. } | ErrorDetail::Timeout { causes, .. } => {
                lasting_kind(causes).unwrap_or(ErrorKind::Unavailable)
            }
            ErrorDetail::Store(_) => ErrorKind::Unavailable,
            ErrorDetail::InvalidName(_)
            | ErrorDetail::InvalidCount { .. }
            | ErrorDetail::InvalidConfig { .. }
            | ErrorDetail::Closed { .. } => ErrorKind::Config,
            ErrorDetail::Number(_) | ErrorDetail::Switched { .. } => ErrorKind::Foreign,
            ErrorDetail::Exhausted(_) => ErrorKind::Exhausted,
            ErrorDetail::Contention(_) => ErrorKind::Conflict,
            ErrorDetail::Corrupt(_) => ErrorKind::Corrupt,
        }
    }
}

/// The first cause's kind when every cause is lasting; `None` when one may change with a wait
/// (or none was had).
fn lasting_kind(causes: &[AuthorityFailure]) -> Option<ErrorKind> {
    let first = causes.first()?.cause.kind();
    causes
        .iter()
        .all(|failure| failure.cause.recourse().is_lasting())
        .then_some(first)
}

impl From<ErrorDetail> for Error {
    #[cold]
    #[inline(never)]
    fn from(detail: ErrorDetail) -> Self {
        Error(Box::new(detail))
    }
}

impl From<InvalidName> for Error {
    #[cold]
    fn from(name: InvalidName) -> Self {
        ErrorDetail::InvalidName(name).into()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for Error {
    /// As the detail's: `Closed { scope: .., sequence: .. }`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl From<AuthorityError> for Error {
    /// For strategies that ask an authority directly, without a block cache: every error keeps
    /// its [`kind`](AuthorityError::kind): a corrupt counter or block, an exhausted sequence, an
    /// invalid name or size (the count asked for), a lost race; a store that is another
    /// authority keeps its conflict; a store that failed is a store error.
    #[cold]
    fn from(error: AuthorityError) -> Self {
        match error {
            AuthorityError::InvalidName(name) => ErrorDetail::InvalidName(name).into(),
            AuthorityError::InvalidSize(count) => {
                Error::invalid_count(count, crate::authority::BLOCK_SIZES)
            }
            AuthorityError::Corrupt(reason) | AuthorityError::InvalidBlock(reason) => {
                Error::corrupt(reason)
            }
            conflict @ AuthorityError::Conflict(_) => {
                ErrorDetail::Contention(conflict.to_string()).into()
            }
            AuthorityError::Exhausted => Error::exhausted(AuthorityError::Exhausted.to_string()),
            contention @ AuthorityError::Contention { .. } => {
                ErrorDetail::Contention(contention.to_string()).into()
            }
            AuthorityError::Number(conflict) => ErrorDetail::Number(conflict).into(),
            AuthorityError::Switched { record, remedy } => {
                ErrorDetail::Switched { record, remedy }.into()
            }
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
    use crate::error::{NameKind, NumberConflict};

    /// The point of the box: an error is one pointer, and an id or an error comes back in two
    /// registers.
    #[test]
    fn an_error_is_one_pointer_wide() {
        assert_eq!(size_of::<Error>(), size_of::<usize>());
        assert_eq!(size_of::<Option<Error>>(), size_of::<usize>());
        assert!(size_of::<Result<gdid_core::Gdid, Error>>() <= 16);
    }

    /// The detail keeps what the enum said: message, source, kind, debug form, variant.
    #[test]
    fn an_error_shows_its_detail() {
        let name = InvalidName {
            kind: NameKind::Scope,
            name: "a b".into(),
            reason: "a space".into(),
        };
        let detail = ErrorDetail::InvalidName(name.clone());
        let error = Error::from(name);
        assert_eq!(error.to_string(), detail.to_string());
        assert_eq!(format!("{error:?}"), format!("{detail:?}"));
        assert_eq!(error.kind(), ErrorKind::Config);
        let store = Error::store("connection refused");
        let source = |e: &dyn std::error::Error| e.source().map(ToString::to_string);
        assert_eq!(source(&store), source(store.detail()));
        let closed = Error::from(ErrorDetail::Closed {
            scope: "s".into(),
            sequence: "q".into(),
        });
        let detail = closed.clone().into_detail();
        assert!(matches!(detail, ErrorDetail::Closed { scope, .. } if scope == "s"));
        assert_eq!(closed.to_string(), "the generator of s/q is closed");
    }

    #[test]
    fn an_authority_error_keeps_its_kind_where_a_generator_has_one() {
        let corrupt = Error::from(AuthorityError::Corrupt("next is -1".into()));
        assert!(matches!(corrupt.detail(), ErrorDetail::Corrupt(reason) if reason == "next is -1"));
        let name = InvalidName {
            kind: NameKind::Scope,
            name: "a b".into(),
            reason: "a space".into(),
        };
        let invalid = Error::from(AuthorityError::InvalidName(name.clone()));
        assert!(matches!(invalid.into_detail(), ErrorDetail::InvalidName(n) if n == name));
        let exhausted = Error::from(AuthorityError::Exhausted);
        assert!(
            matches!(exhausted.detail(), ErrorDetail::Exhausted(_)),
            "{exhausted}"
        );
        let lost = Error::from(AuthorityError::Contention {
            record: "the row".into(),
            attempts: 20,
            last: None,
        });
        assert!(
            matches!(lost.detail(), ErrorDetail::Contention(m) if m.starts_with("the row: lost 20"))
        );
        assert_eq!(lost.kind(), ErrorKind::Conflict);
        assert_eq!(corrupt.kind(), ErrorKind::Corrupt);
        let failed = Error::from(AuthorityError::store("connection refused"));
        assert!(matches!(failed.detail(), ErrorDetail::Store(_)), "{failed}");
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
        let conflict = NumberConflict::NoneLeft { store: "s".into() };
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
