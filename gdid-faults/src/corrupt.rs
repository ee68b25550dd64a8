//! Bad stored data: counters, ranges and windows corrupted in the real stores give a typed error,
//! never a panic and never an id.
//!
//! Each case sets up the real thing through the library's public API (an authority counter, a
//! one-at-a-time counter, a sharded counter's range, a hi-lo window), takes one id so that the row
//! or document exists, corrupts it with a raw statement, then asks for an id [`ASKS`] times (a
//! corrupt value that each call moves, a negative counter say, may become a valid-looking one
//! after a few calls). Every answer is sorted into an [`Answer`]; only [`Answer::Refused`] is
//! right. The SQL cases are in `corrupt/sql.rs`, the MongoDB ones in `corrupt/mongo.rs`.

mod mongo;
mod sql;

use std::fmt;
use std::future::Future;
use std::time::Duration;

use gdid_engine::windows::{AgentError, WindowAgent, WindowGenerator, WindowShard};
use gdid_engine::{
    Authority, AuthorityError, BlockGenerator, Error, ErrorDetail, FailureCause, IdGenerator,
};

use crate::error::SetupError;
use crate::row::{Row, Timing};

/// How many times each case asks for an id from the corrupt data.
pub const ASKS: usize = 3;

/// What one request for an id from corrupt data gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A typed error saying the data is corrupt and naming the row or document and the field
    /// (right): its message.
    Refused(String),
    /// An id (wrong).
    Issued(String),
    /// An error that is not a corruption report, or does not say where or which field (wrong):
    /// its message.
    Unclear(String),
    /// A panic (wrong): its message.
    Panicked(String),
}

/// What a case did and what each request gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseOutcome {
    /// The kind of corruption, in a few words.
    pub case: &'static str,
    /// The row or document and the field written, and the value.
    pub corrupted: String,
    /// One answer per request; a single [`Answer::Panicked`] when the case panicked.
    pub answers: Vec<Answer>,
}

impl CaseOutcome {
    /// Whether every request was refused with a typed error.
    pub fn is_refused(&self) -> bool {
        !self.answers.is_empty()
            && self
                .answers
                .iter()
                .all(|answer| matches!(answer, Answer::Refused(_)))
    }

    /// The ids handed out from the corrupt data.
    pub fn issued(&self) -> u64 {
        count(&self.answers, |answer| matches!(answer, Answer::Issued(_)))
    }

    /// The typed errors.
    pub fn refused(&self) -> u64 {
        count(&self.answers, |answer| matches!(answer, Answer::Refused(_)))
    }
}

impl fmt::Display for CaseOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}):", self.case, self.corrupted)?;
        for answer in &self.answers {
            match answer {
                Answer::Refused(message) => write!(f, "\n  typed error: {message}")?,
                Answer::Issued(id) => write!(f, "\n  ID ISSUED: {id}")?,
                Answer::Unclear(message) => write!(f, "\n  UNCLEAR ERROR: {message}")?,
                Answer::Panicked(message) => write!(f, "\n  PANIC: {message}")?,
            }
        }
        Ok(())
    }
}

fn count(answers: &[Answer], which: impl Fn(&Answer) -> bool) -> u64 {
    answers.iter().map(|answer| u64::from(which(answer))).sum()
}

/// Runs every case `url` can express (`sqlite:PATH`, `mysql://…`, `postgres://…` or
/// `mongodb://…`), each in a task of its own so that a panic is caught and reported.
///
/// # Errors
///
/// When the store cannot be reached or a case cannot be set up or corrupted.
pub async fn cases(url: &str) -> Result<Vec<CaseOutcome>, SetupError> {
    match gdid::store_kind(url)? {
        gdid::StoreKind::MongoDb => mongo::cases(url).await,
        kind if kind.is_sql() => sql::cases(url).await,
        kind => Err(format!(
            "no corrupt-data cases for a {kind:?} store ({})",
            gdid::redact(url)
        )
        .into()),
    }
}

/// The fault-table row of [`cases`] on `url`, the store called `name`.
///
/// # Errors
///
/// As [`cases`].
pub async fn bad_stored_data(name: &str, url: &str) -> Result<Row, SetupError> {
    Ok(row(name, &cases(url).await?))
}

/// The fault-table row of `outcomes`, the cases run on the store called `name`: the ids handed
/// out (must be 0) and the typed errors.
pub fn row(name: &str, outcomes: &[CaseOutcome]) -> Row {
    let mut kinds: Vec<&str> = Vec::new();
    for outcome in outcomes {
        let kind = outcome.case.split(':').next().unwrap_or(outcome.case);
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    let refused: u64 = outcomes.iter().map(CaseOutcome::refused).sum();
    Row {
        fault: format!("bad stored data ({name})"),
        done: format!(
            "{} corrupt rows ({}), each asked {ASKS} times: {refused} typed errors",
            outcomes.len(),
            kinds.join(", ")
        ),
        issued: outcomes.iter().map(CaseOutcome::issued).sum(),
        caller_errors: refused,
        duplicates: 0,
        lost_to_gaps: 0,
        timing: Timing::UNMEASURED,
    }
}

/// Where a corruption was written: what a right error message names.
#[derive(Debug, Clone)]
struct Place {
    /// The name that identifies the row or document (its sequence, or its `_id`).
    key: String,
    /// The field written.
    field: &'static str,
}

impl Place {
    fn new(key: impl Into<String>, field: &'static str) -> Place {
        Place {
            key: key.into(),
            field,
        }
    }
}

/// How an error of a call is judged: whether it is the typed corruption report of its API.
trait Judged: fmt::Display {
    fn is_corruption_report(&self) -> bool;
}

impl Judged for AuthorityError {
    fn is_corruption_report(&self) -> bool {
        matches!(self, AuthorityError::Corrupt(_))
    }
}

impl Judged for Error {
    fn is_corruption_report(&self) -> bool {
        match self.detail() {
            ErrorDetail::Corrupt(_) => true,
            // A BlockGenerator reports what each of its authorities answered.
            ErrorDetail::Unavailable { causes, .. } | ErrorDetail::Timeout { causes, .. } => {
                causes.iter().any(|failure| {
                    matches!(&failure.cause, FailureCause::Error(e) if matches!(e.as_ref(), AuthorityError::Corrupt(_)))
                })
            }
            _ => false,
        }
    }
}

/// Which API asks for the id after a counter row or document is corrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// [`Authority::allocate`] of a block of 1.
    Authority,
    /// [`BlockGenerator::next_id`], blocks of 1.
    BlockGenerator,
    /// The store's one-at-a-time counter (`SqlCounter`, `MongoCounter`).
    Counter,
}

/// Asks for ids of `sequence` in scope `scope` through `via`: `authority` itself, a
/// [`BlockGenerator`] over it, or the one-at-a-time counter `counter` makes of it (the store's
/// `new(authority, scope, sequence)`).
async fn ask_via<A, C>(
    via: Via,
    place: &Place,
    (scope, sequence): (&str, &str),
    authority: A,
    counter: impl FnOnce(A, &str, &str) -> C,
) -> Result<Vec<Answer>, SetupError>
where
    A: Authority,
    C: IdGenerator<Id = u64>,
{
    Ok(match via {
        Via::Authority => ask(place, || authority.allocate(scope, sequence, 1)).await,
        Via::BlockGenerator => {
            let ids = BlockGenerator::builder(scope, sequence)
                .authority(authority)
                .fixed_block_size(1)
                .no_prefetch()
                .allocation_timeout(Duration::from_secs(1))
                .request_timeout(Duration::from_secs(1))
                .build()?;
            ask(place, || ids.next_id()).await
        }
        Via::Counter => {
            let ids = counter(authority, scope, sequence);
            ask(place, || ids.next_id()).await
        }
    })
}

/// Asks `call` for an id [`ASKS`] times and judges each answer against `place`.
async fn ask<T, E, F, Fut>(place: &Place, mut call: F) -> Vec<Answer>
where
    T: fmt::Display,
    E: Judged,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut answers = Vec::with_capacity(ASKS);
    for _ in 0..ASKS {
        answers.push(match call().await {
            Ok(id) => Answer::Issued(id.to_string()),
            Err(error) => judge(&error, place),
        });
    }
    answers
}

/// A typed corruption report that names the row or document and the field is
/// [`Answer::Refused`]; any other error is [`Answer::Unclear`].
fn judge(error: &impl Judged, place: &Place) -> Answer {
    let message = error.to_string();
    if error.is_corruption_report() && message.contains(&place.key) && message.contains(place.field)
    {
        Answer::Refused(message)
    } else {
        Answer::Unclear(message)
    }
}

/// The one window of `sequence` on `shard` (0..100, taken up to 10), corrupted by `corrupt`,
/// then asked through a new client: a right error names `place`.
async fn window_case<S>(
    shard: S,
    sequence: &str,
    corrupt: impl Future<Output = Result<(), SetupError>>,
    place: Place,
) -> Result<Vec<Answer>, SetupError>
where
    S: WindowShard + Clone,
    AgentError<S::Error>: Send + Sync,
{
    let mut agent = WindowAgent::new(100, 1)?;
    agent.add_shard("a", shard.clone()).await?;
    agent.run_once(&[sequence]).await?;
    let shards = vec![("a".to_owned(), shard)];
    WindowGenerator::new(shards.clone(), sequence, 10)?
        .next_id()
        .await?;
    corrupt.await?;
    let ids = WindowGenerator::new(shards, sequence, 10)?;
    Ok(ask(&place, || ids.next_id()).await)
}

/// A case's outcome, with a panic in its task reported as [`Answer::Panicked`].
async fn run_case<F>(
    case: &'static str,
    corrupted: String,
    task: F,
) -> Result<CaseOutcome, SetupError>
where
    F: Future<Output = Result<Vec<Answer>, SetupError>> + Send + 'static,
{
    let answers = match tokio::spawn(task).await {
        Ok(answers) => answers?,
        Err(e) if e.is_panic() => {
            let payload = e.into_panic();
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "(no message)".to_owned());
            vec![Answer::Panicked(message)]
        }
        Err(e) => return Err(e.into()),
    };
    Ok(CaseOutcome {
        case,
        corrupted,
        answers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place() -> Place {
        Place::new("row-7", "next")
    }

    #[test]
    fn only_a_corruption_report_naming_the_place_and_field_is_refused() {
        let named = AuthorityError::Corrupt("row-7: next is -1".into());
        assert!(matches!(judge(&named, &place()), Answer::Refused(_)));
        let nowhere = AuthorityError::Corrupt("next is -1".into());
        assert!(matches!(judge(&nowhere, &place()), Answer::Unclear(_)));
        let untyped = AuthorityError::store("row-7: next is -1");
        assert!(matches!(judge(&untyped, &place()), Answer::Unclear(_)));
    }

    #[tokio::test]
    async fn a_panic_in_a_case_is_an_answer_not_a_crash() {
        let outcome = run_case("panics", "nothing".into(), async {
            if ASKS > 0 {
                panic!("bad row");
            }
            Ok(Vec::new())
        })
        .await
        .unwrap();
        assert_eq!(outcome.answers, vec![Answer::Panicked("bad row".into())]);
        assert!(!outcome.is_refused());
    }
}
