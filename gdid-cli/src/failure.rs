//! [`Failure`]: why a command failed, every command's one error type, and so its exit status:
//! 2 where no retry helps (the arguments, a value, a store to repair), 1 otherwise; a reader that
//! went away (`gdid next | head`) is no failure at all.

use std::io;
use std::net::SocketAddr;
use std::process::ExitCode;

use gdid::StoreError;
use gdid::engine::Error as GeneratorError;

use crate::form::BadValue;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    /// The arguments cannot work together, or one of them cannot be read (exit status 2).
    #[error("{0}")]
    BadArguments(String),
    /// A value that is not an id in the form it was said to be in (exit status 2).
    #[error(transparent)]
    BadValue(#[from] BadValue),
    /// `gdid convert`: values that could not be converted, each reported as it was met (exit
    /// status 2).
    #[error("{0} value(s) could not be converted")]
    Refused(u64),
    /// A line of `gdid verify`'s input that is no id (exit status 2).
    #[error("{place}: {reason}")]
    BadLine {
        /// `file:line`.
        place: String,
        /// What is wrong.
        reason: String,
    },
    /// An input file that cannot be read (exit status 2).
    #[error("{file}: {source}")]
    Unreadable {
        /// The file.
        file: String,
        /// Why.
        source: io::Error,
    },
    /// The strategy and the stores or settings do not fit together (exit status 2).
    #[error("--strategy {strategy}: {reason}")]
    Unsuitable {
        /// The strategy, as the command line names it.
        strategy: String,
        /// Why it cannot run.
        reason: String,
    },
    /// A store with no DDL, given to `gdid schema` (exit status 2).
    #[error(
        "{0} has no DDL to print or apply: MongoDB collections and their indexes are made on \
         first use, memory and http stores keep no tables"
    )]
    NoDdl(String),
    /// `gdid sequences show` of a sequence the store has no record of (exit status 2).
    #[error("{url} has no counter record of scope {scope:?}, sequence {sequence:?}")]
    NoSuchSequence {
        /// The store, redacted.
        url: String,
        /// The scope.
        scope: String,
        /// The sequence.
        sequence: String,
    },
    /// A store could not be opened, read or written, its authority number settled, or a
    /// strategy set up on it (exit status 2 where no retry helps: a URL, a number, a bad name, a
    /// store to repair).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A SQL store could not be reached, or refused the DDL (exit status 2 where no retry
    /// helps).
    #[error(transparent)]
    Sql(#[from] gdid::sql::Error),
    /// The generator refused its configuration, or gave no id (exit status 2 where no retry
    /// helps).
    #[error(transparent)]
    Generator(#[from] GeneratorError),
    /// `gdid bench`: `next_id` failed: the first error, and how many calls failed before every
    /// task stopped (exit status 1).
    #[error("next_id failed after {ids} id(s) ({errors} failed call(s) in all): {first}")]
    Bench {
        /// Ids issued before the tasks stopped.
        ids: u64,
        /// Calls that failed.
        errors: u64,
        /// The first error.
        first: GeneratorError,
    },
    /// `gdid bench`: a task ended abnormally, or the latencies could not be recorded (exit
    /// status 1).
    #[error("the benchmark failed: {0}")]
    Task(String),
    /// A shard of `gdid agent` failed or its value space is used up, ids repeated or gone
    /// backwards in `gdid verify`'s input: the message says which (exit status 1).
    #[error("{0}")]
    Failed(String),
    /// `gdid check`: a setting where an acknowledged block can be lost or come back, or that
    /// could not be judged (exit status 1): `store: name (verdict), …` for each store.
    #[error("at risk: {0}")]
    AtRisk(String),
    /// `gdid serve` cannot listen on its address (exit status 1).
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// The address asked for.
        address: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// `gdid serve` stopped serving (exit status 1).
    #[error("serving failed: {0}")]
    Serving(io::Error),
    /// The command's runtime could not be started (exit status 1).
    #[error("cannot start the runtime: {0}")]
    Runtime(io::Error),
    /// The output could not be written (exit status 1).
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl Failure {
    /// The exit status: 2 where no retry helps, 1 otherwise.
    pub(crate) fn exit_code(&self) -> ExitCode {
        ExitCode::from(if self.is_bad_input() { 2 } else { 1 })
    }

    /// Whether no retry will help: bad arguments or values, or a store's or generator's error
    /// whose recourse is lasting (a URL, a number, a store that is another authority than
    /// asked, a strategy the store cannot keep, a bad name or layout, a store to repair).
    fn is_bad_input(&self) -> bool {
        match self {
            Failure::BadArguments(_)
            | Failure::BadValue(_)
            | Failure::Refused(_)
            | Failure::BadLine { .. }
            | Failure::Unreadable { .. }
            | Failure::Unsuitable { .. }
            | Failure::NoDdl(_)
            | Failure::NoSuchSequence { .. } => true,
            Failure::Store(e) => e.recourse().is_lasting(),
            Failure::Sql(e) => e.kind().recourse().is_lasting(),
            Failure::Generator(e) => e.recourse().is_lasting(),
            Failure::Bench { .. }
            | Failure::Task(_)
            | Failure::Failed(_)
            | Failure::AtRisk(_)
            | Failure::Listen { .. }
            | Failure::Serving(_)
            | Failure::Runtime(_)
            | Failure::Output(_) => false,
        }
    }

    /// A reader that went away (`gdid next | head`) is not a failure.
    pub(crate) fn is_closed_pipe(&self) -> bool {
        matches!(self, Failure::Output(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_retry_helps_bad_input_and_a_retry_may_help_the_rest() {
        let bad = Failure::BadArguments("--count 0".into());
        assert_eq!(bad.exit_code(), ExitCode::from(2));
        let output = Failure::Output(io::Error::other("disk full"));
        assert_eq!(output.exit_code(), ExitCode::from(1));
        assert_eq!(output.to_string(), "cannot write the output: disk full");
        assert!(!output.is_closed_pipe());
        assert!(Failure::Output(io::ErrorKind::BrokenPipe.into()).is_closed_pipe());
        assert!(!Failure::Serving(io::ErrorKind::BrokenPipe.into()).is_closed_pipe());
    }
}
