//! The one retry policy of the store operations that can lose a race: a conditional write that
//! matched nothing because the record is missing or another writer moved it, an insert-if-absent
//! that met a concurrent insert, a write conflict or a deadlock the store reported
//! ([`AuthorityError::Conflict`]). Every backend runs its races through [`run`]: the same number
//! of tries everywhere, and the same kind when they are all lost ([`AuthorityError::Contention`],
//! which is not corruption: the caller may try again, here or at another authority).

use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

use rand::Rng;

use crate::error::AuthorityError;

/// How many times an operation that loses races is tried before [`AuthorityError::Contention`]:
/// enough for writers of one row on three Galera nodes at once, where about one attempt in two
/// meets a certification conflict, and more on a loaded machine (a single server's lock waits
/// are far rarer). 20 tries once let one of 600 one-at-a-time reservations lose every race,
/// with the nodes beside a full test run.
pub const ATTEMPTS: u32 = 40;

/// How many times a schema statement that loses races is tried ([`run_driver`]): on Galera a
/// DDL statement runs on every node at once and aborts what it meets, so stores making the
/// tables on several nodes take turns.
pub const DDL_ATTEMPTS: u32 = 40;

/// Whether `error` is a lost race that the policy tries again.
pub fn is_lost_race(error: &AuthorityError) -> bool {
    matches!(error, AuthorityError::Conflict(_))
}

/// Runs `attempt` until it gives a value, at most [`ATTEMPTS`] times: an attempt that returns
/// `Ok(None)` (it lost a race and changed nothing that matters) or a lost race
/// ([`is_lost_race`]) is tried again; any other error is returned as it is. `record` names what
/// the races are about, for the error (written only then).
///
/// # Errors
///
/// The first error that is not a lost race, or [`AuthorityError::Contention`] when every attempt
/// lost.
///
/// ```
/// use gdid_engine::AuthorityError;
/// use gdid_engine::backend::retry;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut tries = 0;
/// let won = retry::run("the row", || {
///     tries += 1;
///     let lost = tries < 3;
///     async move { Ok::<_, AuthorityError>((!lost).then_some(tries)) }
/// })
/// .await;
/// assert_eq!(won.unwrap(), 3);
///
/// let err = retry::run("the row", || async { Ok::<Option<()>, _>(None) }).await.unwrap_err();
/// assert!(matches!(err, AuthorityError::Contention { attempts: retry::ATTEMPTS, .. }));
/// assert_eq!(err.recourse(), gdid_engine::Recourse::Again);
/// # }
/// ```
pub async fn run<T, F, Fut>(
    record: &(impl Display + ?Sized),
    mut attempt: F,
) -> Result<T, AuthorityError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<T>, AuthorityError>>,
{
    let mut last = None;
    for tried in 1..=ATTEMPTS {
        match attempt().await {
            Ok(Some(done)) => return Ok(done),
            Ok(None) => {}
            Err(error) if is_lost_race(&error) => last = Some(error.to_string()),
            Err(error) => return Err(error),
        }
        if tried < ATTEMPTS {
            tokio::time::sleep(backoff(tried)).await;
        }
    }
    Err(AuthorityError::Contention {
        record: record.to_string(),
        attempts: ATTEMPTS,
        last,
    })
}

/// As [`run`], for an operation whose errors are a driver's, not [`AuthorityError`]s (a schema
/// statement, a window's or a range's write): an error `lost` calls a lost race (a deadlock, a
/// serialization failure, a Galera certification conflict, each rolled back by the server) is
/// tried again, at most `attempts` times in all ([`ATTEMPTS`], or [`DDL_ATTEMPTS`] for a schema
/// statement), with the same waits; any other error, or the last lost race, is returned as it
/// is.
///
/// # Errors
///
/// The first error that is not a lost race, or the last one when every attempt lost.
///
/// ```
/// use gdid_engine::backend::retry;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut tries = 0;
/// let done = retry::run_driver(
///     retry::ATTEMPTS,
///     || {
///         tries += 1;
///         let outcome = if tries < 3 { Err("deadlock") } else { Ok(tries) };
///         async move { outcome }
///     },
///     |error: &&str| *error == "deadlock",
/// )
/// .await;
/// assert_eq!(done, Ok(3));
/// # }
/// ```
pub async fn run_driver<T, E, F, Fut>(
    attempts: u32,
    mut attempt: F,
    lost: impl Fn(&E) -> bool,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut tried = 1;
    loop {
        match attempt().await {
            Err(error) if lost(&error) && tried < attempts => {
                tokio::time::sleep(backoff(tried)).await;
                tried += 1;
            }
            outcome => return outcome,
        }
    }
}

/// How long to wait after losing race number `tried` (from 1): a random time up to 2^`tried`
/// milliseconds, at most 64, so that writers who collided do not collide again in step (2 ms,
/// then 4, 8, 16, 32, then 64 at most: about 1.3 s in all at worst before
/// [`AuthorityError::Contention`], 0.6 s on average).
fn backoff(tried: u32) -> Duration {
    let most = 1u64 << tried.min(6);
    Duration::from_micros(rand::rng().random_range(0..=most * 1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lost_races_are_tried_again_and_other_errors_are_not() {
        for (error, tries_expected) in [
            (AuthorityError::Conflict("deadlock".into()), ATTEMPTS),
            (AuthorityError::Corrupt("x".into()), 1),
        ] {
            let mut tries = 0;
            let err = run("r", || {
                tries += 1;
                let error = match &error {
                    AuthorityError::Conflict(m) => AuthorityError::Conflict(m.clone()),
                    _ => AuthorityError::Corrupt("x".into()),
                };
                async { Err::<Option<()>, _>(error) }
            })
            .await
            .unwrap_err();
            assert_eq!(tries, tries_expected, "{error}");
            if tries_expected == ATTEMPTS {
                let last = matches!(&err, AuthorityError::Contention { last: Some(l), .. } if l.contains("deadlock"));
                assert!(last, "{err}");
            } else {
                assert!(matches!(err, AuthorityError::Corrupt(_)), "{err}");
            }
        }
    }
}
