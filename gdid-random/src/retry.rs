//! [`insert_with_retry`]: insert under a fresh random id until one is not taken.

use std::fmt;
use std::future::Future;

use gdid_engine::{Error, IdGenerator};

/// Why [`insert_with_retry`] gave up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RetryError<Id: fmt::Debug, E: std::error::Error + 'static> {
    /// Every id tried was taken (a duplicate key each time): the range is full, or nearly.
    #[error("{} ids tried, every one taken (the range may be full): {tried:?}", tried.len())]
    Exhausted {
        /// The ids tried, in order.
        tried: Vec<Id>,
    },
    /// The insert failed for another reason than a duplicate key: returned at once.
    #[error("inserting under id {id:?}: {source}")]
    Insert {
        /// The id of the failed insert.
        id: Id,
        /// The store's error.
        #[source]
        source: E,
    },
    /// The generator gave no id.
    #[error(transparent)]
    Generator(Error),
}

/// Calls `insert(id)` with a new id from `ids` until it succeeds, at most `attempts` times; an
/// error for which `is_duplicate` holds means "taken, draw again", any other is returned at once.
/// Returns the id stored and what `insert` returned.
///
/// `is_duplicate` is the backend's duplicate-key test: `gdid_sql::is_duplicate_key` (MySQL and
/// MariaDB 1062, PostgreSQL 23505, SQLite's unique and primary-key constraints) or
/// `gdid_mongo::is_duplicate_key` (11000, also inside bulk writes).
///
/// How many attempts to allow: at a fill ratio `f` (ids stored / range size) an insert needs
/// `1 / (1 - f)` attempts on average, and all `k` attempts collide with probability `f^k`;
/// [`birthday::attempts_for`](crate::birthday::attempts_for) turns a target failure rate into `k`.
///
/// ```
/// use gdid_random::{IdRange, RandomIdGenerator, RetryError, insert_with_retry};
/// use std::collections::HashSet;
/// use std::sync::Mutex;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("duplicate")]
/// struct Duplicate;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let ids = RandomIdGenerator::new(IdRange::new(0..3).unwrap());
/// let table = Mutex::new(HashSet::new()); // stands in for a table with a unique index
/// let insert = |id: u64| {
///     let fresh = table.lock().unwrap().insert(id);
///     async move { if fresh { Ok(()) } else { Err(Duplicate) } }
/// };
/// for _ in 0..3 {
///     insert_with_retry(&ids, 1_000, insert, |_: &Duplicate| true).await.unwrap();
/// }
/// let full = insert_with_retry(&ids, 10, insert, |_| true).await.unwrap_err();
/// assert!(matches!(full, RetryError::Exhausted { ref tried } if tried.len() == 10));
/// # }
/// ```
///
/// # Errors
///
/// [`RetryError::Exhausted`] with every id tried, [`RetryError::Insert`] for any other insert
/// error, [`RetryError::Generator`] when `ids` fails.
pub async fn insert_with_retry<G, T, E, F, Fut>(
    ids: &G,
    attempts: usize,
    mut insert: F,
    is_duplicate: impl Fn(&E) -> bool,
) -> Result<(G::Id, T), RetryError<G::Id, E>>
where
    G: IdGenerator + ?Sized,
    G::Id: Clone + fmt::Debug,
    E: std::error::Error + 'static,
    F: FnMut(G::Id) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut tried = Vec::new();
    while tried.len() < attempts {
        let id = ids.next_id().await.map_err(RetryError::Generator)?;
        match insert(id.clone()).await {
            Ok(stored) => return Ok((id, stored)),
            Err(e) if is_duplicate(&e) => tried.push(id),
            Err(source) => return Err(RetryError::Insert { id, source }),
        }
    }
    Err(RetryError::Exhausted { tried })
}
