//! Authority numbers belong to stores.
//!
//! The counter space of a GDID is per (authority number, scope, sequence): two stores that serve
//! one sequence under one number issue the same ids. So a store's number is recorded **in the
//! store** the first time it is used, and every later use reads it back: the order in which
//! stores are listed, a store added in front, or a count of stores that changes, never changes a
//! store's number. The rules, kept here once for every backend:
//!
//! - a store with a recorded number is that authority; asking for another number is a
//!   [`NumberConflict::Recorded`], before any id is issued;
//! - a store with no record yet takes the number asked for; with none asked, the number its
//!   counters already use (a store written before numbers were recorded), or else the lowest
//!   number of `1..=15` (then 0) that no other store listed with it holds;
//! - two stores listed together never hold one number, recorded or used by their counters
//!   ([`NumberConflict::Shared`]);
//! - a store that cannot be read now is left out, unless its number is asked for (then that
//!   number is checked when it is first used); while one is left out, a store with no record is
//!   given no number ([`NumberConflict::Unseen`]): it might take the unread store's;
//! - the number is recorded with one insert-if-absent and read back, so two processes that give
//!   a fresh store two different numbers at the same moment agree on the one that was recorded
//!   first (the other gets the conflict).
//!
//! A backend supplies the three operations of [`NumberRecord`]; [`assign`] and [`claim`] do the
//! rest, and [`NumberCheck`] makes an authority claim its number before its first block.
//!
//! What no store can see: two stores that are never listed together. Giving them different
//! numbers is the deployment's part (at most 16 stores per sequence).

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Mutex;

use crate::authority::{BoxFuture, validate_names};
use crate::backend::retry;
use crate::error::AuthorityError;
use gdid_core::AUTHORITY_MAX;

/// The authority key of the one-at-a-time counters' rows and documents, whatever the store's
/// number: their values are the store's, so renumbering a store never starts them again. Rows of
/// this key are not counted by [`NumberRecord::numbers_in_counters`].
pub const COUNTER_KEY: u8 = 0;

/// Where a store keeps its authority number: the operations a backend implements. Each is one
/// statement or one request.
pub trait NumberRecord: Send + Sync + fmt::Debug {
    /// The store, as messages name it (a URL without its password, say).
    fn store(&self) -> String;

    /// The number recorded in the store, or `None` before the first use.
    ///
    /// A record that holds anything but a number from 0 to 15 is [`AuthorityError::Corrupt`].
    fn recorded_number(&self) -> BoxFuture<'_, Result<Option<u8>, AuthorityError>>;

    /// Records `number` unless a number is recorded already (insert-if-absent: a record is never
    /// changed).
    fn record_number(&self, number: u8) -> BoxFuture<'_, Result<(), AuthorityError>>;

    /// The authority numbers of the counters the store holds, but [`COUNTER_KEY`]: for a store
    /// written before numbers were recorded, the numbers it has issued blocks under (a store
    /// that issued blocks as authority 0 without a record is taken as fresh: its new number is
    /// never 0 unless asked for, so those ids are not issued again).
    fn numbers_in_counters(&self) -> BoxFuture<'_, Result<Vec<u8>, AuthorityError>>;

    /// Whether the server's own history shows that it was promoted from a replica or restored
    /// onto another server ([`lineage`](crate::backend::lineage)): then a missing record may be one
    /// the copy never received, and a number is given only when asked for
    /// ([`NumberConflict::RecordLost`]). The default: `false` (a store without replicas, or
    /// whose writes survive a failover).
    fn switched(&self) -> BoxFuture<'_, Result<bool, AuthorityError>> {
        Box::pin(std::future::ready(Ok(false)))
    }

    /// The era a counter record new in this store starts at: 0 until a fence of the whole store
    /// raised it ([`raise_floor_era`](Self::raise_floor_era)). The default: 0 (a store that keeps
    /// no floor era).
    fn floor_era(&self) -> BoxFuture<'_, Result<i64, AuthorityError>> {
        Box::pin(std::future::ready(Ok(0)))
    }

    /// Raises the store's floor era to `era` (never lowers it), so that a record the store lacks
    /// (one made after the backup a restore came from) starts above every era the store used:
    /// whether the store keeps a floor era. The default keeps none (`false`).
    fn raise_floor_era(&self, era: i64) -> BoxFuture<'_, Result<bool, AuthorityError>> {
        let _ = era;
        Box::pin(std::future::ready(Ok(false)))
    }
}

pub use crate::error::NumberConflict;

/// What a store holds, as read before numbers are given out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holding {
    /// A recorded number, and the numbers its counters use (beside the recorded one: counters
    /// written before the record, under another number).
    Recorded {
        /// The recorded number.
        number: u8,
        /// The numbers its counters use.
        in_counters: Vec<u8>,
    },
    /// No record: the numbers its counters use (none for a fresh store).
    Unrecorded(Vec<u8>),
    /// No record on a server that was promoted or restored ([`NumberRecord::switched`]): the
    /// numbers its counters use. Given a number only when one is asked for.
    Lost(Vec<u8>),
    /// The store could not be read now (it is down). Without a number asked for it, it is left
    /// out; with one, that number is checked when it is first used.
    Unknown,
}

impl Holding {
    /// Reads what `record`'s store holds.
    ///
    /// # Errors
    ///
    /// The store's errors, and [`AuthorityError::Corrupt`] for a record that is not a number.
    pub async fn read(record: &dyn NumberRecord) -> Result<Holding, AuthorityError> {
        let recorded = record.recorded_number().await?;
        let mut in_counters = record.numbers_in_counters().await?;
        in_counters.sort_unstable();
        in_counters.dedup();
        Ok(match recorded {
            Some(number) => Holding::Recorded {
                number,
                in_counters,
            },
            None if record.switched().await? => Holding::Lost(in_counters),
            None => Holding::Unrecorded(in_counters),
        })
    }

    /// A store recorded as `number` whose counters use no other.
    pub fn recorded(number: u8) -> Holding {
        Holding::Recorded {
            number,
            in_counters: vec![number],
        }
    }

    /// Every number the store holds: recorded, or used by its counters.
    fn numbers(&self) -> Vec<u8> {
        match self {
            Holding::Recorded {
                number,
                in_counters,
            } => std::iter::once(*number)
                .chain(in_counters.iter().copied())
                .collect(),
            Holding::Unrecorded(found) | Holding::Lost(found) => found.clone(),
            Holding::Unknown => Vec::new(),
        }
    }
}

/// One store of a [`plan`]: its name, the number asked for, and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The store, for messages.
    pub store: String,
    /// The number asked for (`--authority`), if any.
    pub asked: Option<u8>,
    /// What it holds.
    pub holding: Holding,
}

/// The numbers of stores listed together for one sequence, in their order, by the rules of this
/// module: `None` for a store that cannot be read and has no number asked for (it is left out).
/// Pure: nothing is read or written.
///
/// ```
/// use gdid_engine::backend::numbering::{Holding, Listed, plan};
///
/// let listed = |store: &str, holding| Listed { store: store.into(), asked: None, holding };
/// // A fresh store listed in front of one recorded as 1 gets 2: the recorded store keeps its 1.
/// let numbers = plan(&[
///     listed("sqlite:b.sqlite", Holding::Unrecorded(vec![])),
///     listed("sqlite:a.sqlite", Holding::recorded(1)),
/// ]);
/// assert_eq!(numbers, Ok(vec![Some(2), Some(1)]));
/// ```
///
/// # Errors
///
/// A [`NumberConflict`]: a number asked for that a store's record contradicts, a store whose
/// counters use several numbers and none asked for, two stores that would hold one number, a
/// store with no record listed with one that cannot be read, or no number left.
pub fn plan(stores: &[Listed]) -> Result<Vec<Option<u8>>, NumberConflict> {
    let unread = stores
        .iter()
        .find(|listed| listed.holding == Holding::Unknown && listed.asked.is_none());
    // First the numbers that are fixed: recorded, asked for, or the one its counters use.
    let mut fixed: Vec<Option<u8>> = Vec::with_capacity(stores.len());
    for listed in stores {
        let store = listed.store.clone();
        fixed.push(match (&listed.holding, listed.asked) {
            (Holding::Recorded { number, .. }, Some(asked)) if *number != asked => {
                return Err(NumberConflict::Recorded {
                    store,
                    recorded: *number,
                    asked,
                });
            }
            (Holding::Recorded { number, .. }, _) => Some(*number),
            (_, Some(asked)) => Some(asked),
            (Holding::Lost(_), None) => return Err(NumberConflict::RecordLost { store }),
            (Holding::Unrecorded(_), None) if unread.is_some() => {
                return Err(NumberConflict::Unseen {
                    store,
                    unread: unread.map_or_else(String::new, |u| u.store.clone()),
                });
            }
            (Holding::Unrecorded(found), None) if found.len() > 1 => {
                return Err(NumberConflict::Ambiguous {
                    store,
                    found: found.clone(),
                });
            }
            (Holding::Unrecorded(found), None) => found.first().copied(),
            (Holding::Unknown, None) => None,
        });
    }
    // A fixed number must not be held by another store listed with it.
    for (i, number) in fixed.iter().enumerate() {
        let Some(number) = *number else { continue };
        for (j, other) in stores.iter().enumerate() {
            if i != j && (fixed[j] == Some(number) || other.holding.numbers().contains(&number)) {
                return Err(NumberConflict::Shared {
                    store: stores[i].store.clone(),
                    other: other.store.clone(),
                    number,
                });
            }
        }
    }
    // Then the others, in order, the lowest free number each.
    let mut taken: BTreeSet<u8> = fixed.iter().flatten().copied().collect();
    taken.extend(stores.iter().flat_map(|listed| listed.holding.numbers()));
    let preference = (1..=AUTHORITY_MAX).chain([0]);
    stores
        .iter()
        .zip(fixed)
        .map(|(listed, fixed)| match fixed {
            Some(number) => Ok(Some(number)),
            None if listed.holding == Holding::Unknown => Ok(None),
            None => {
                let number = preference
                    .clone()
                    .find(|n| !taken.contains(n))
                    .ok_or_else(|| NumberConflict::NoneLeft {
                        store: listed.store.clone(),
                    })?;
                taken.insert(number);
                Ok(Some(number))
            }
        })
        .collect()
}

/// The authority numbers of `stores` listed together for one sequence (each with the number
/// asked for, if any), recorded in every store that can be reached and had none. A store that
/// cannot be reached now keeps the number asked for it, which an authority checks with
/// [`NumberCheck`] before its first block; with none asked it gets `None` (leave it out: its
/// number is in the store, unread), and a store with no record listed with it gets none either
/// ([`NumberConflict::Unseen`]).
///
/// # Errors
///
/// [`AuthorityError::Number`] for a [`NumberConflict`]; [`AuthorityError::Corrupt`] for a record
/// that is not a number; [`AuthorityError::Contention`] when other processes kept recording
/// numbers in between (see [`retry`]).
pub async fn assign(
    stores: &[(&dyn NumberRecord, Option<u8>)],
) -> Result<Vec<Option<u8>>, AuthorityError> {
    assign_with(stores, |_| Ok(Holding::Unknown)).await
}

/// The authority number of one store (the one asked for, if any), recorded in it: as [`assign`]
/// for a single store, but a store that cannot be reached is an error.
///
/// # Errors
///
/// As [`assign`], and the store's error.
pub async fn claim(record: &dyn NumberRecord, asked: Option<u8>) -> Result<u8, AuthorityError> {
    let numbers = assign_with(&[(record, asked)], Err).await?;
    numbers[0].ok_or_else(|| AuthorityError::store("the store could not be read"))
}

/// [`assign`], with `unreadable` deciding what a store error means.
async fn assign_with(
    stores: &[(&dyn NumberRecord, Option<u8>)],
    unreadable: impl Fn(AuthorityError) -> Result<Holding, AuthorityError>,
) -> Result<Vec<Option<u8>>, AuthorityError> {
    // Each round that does not settle means another process recorded a number in between: a
    // lost race, tried again under the engine's retry policy.
    let names = stores
        .iter()
        .map(|(record, _)| record.store())
        .collect::<Vec<_>>()
        .join(", ");
    retry::run(&format!("the authority numbers of {names}"), || async {
        let mut listed = Vec::with_capacity(stores.len());
        for (record, asked) in stores {
            let holding = match Holding::read(*record).await {
                Ok(holding) => holding,
                Err(AuthorityError::Store(e)) => unreadable(AuthorityError::Store(e))?,
                Err(other) => return Err(other),
            };
            listed.push(Listed {
                store: record.store(),
                asked: *asked,
                holding,
            });
        }
        let numbers = plan(&listed)?;
        let mut settled = true;
        for ((record, _), (listed, number)) in stores.iter().zip(listed.iter().zip(&numbers)) {
            if let (Holding::Unrecorded(_) | Holding::Lost(_), Some(number)) =
                (&listed.holding, number)
            {
                record.record_number(*number).await?;
                // Read back: another process may have recorded another number first.
                settled &= record.recorded_number().await? == Some(*number);
            }
        }
        Ok(settled.then_some(numbers))
    })
    .await
}

/// Makes an authority claim its number in its store once, before its first block: an authority
/// built while its store was down, or by a constructor that does not connect, is checked when it
/// is first used. Clones share the check.
///
/// ```
/// use gdid_engine::backend::numbering::{MemoryRecord, NumberCheck};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let store = MemoryRecord::new("store a");
/// let check = NumberCheck::new(3);
/// check.ensure(&store).await.unwrap();               // records 3
/// assert!(NumberCheck::new(4).ensure(&store).await.is_err()); // the store is authority 3
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct NumberCheck {
    number: u8,
    done: std::sync::Arc<tokio::sync::OnceCell<()>>,
}

impl NumberCheck {
    /// A check of `number`, not made yet.
    pub fn new(number: u8) -> Self {
        NumberCheck {
            number,
            done: std::sync::Arc::default(),
        }
    }

    /// A check already made (by [`claim`]).
    pub fn made(number: u8) -> Self {
        NumberCheck {
            number,
            done: std::sync::Arc::new(tokio::sync::OnceCell::new_with(Some(()))),
        }
    }

    /// The number checked.
    pub fn number(&self) -> u8 {
        self.number
    }

    /// What an authority does before it reserves a block of (scope, sequence): the names
    /// checked (a bad one is refused before the store is touched), then the number claimed
    /// ([`ensure`](Self::ensure)). The number to reserve under.
    ///
    /// # Errors
    ///
    /// [`AuthorityError::InvalidName`], or as [`ensure`](Self::ensure).
    pub async fn before_block(
        &self,
        record: &dyn NumberRecord,
        scope: &str,
        sequence: &str,
    ) -> Result<u8, AuthorityError> {
        validate_names(scope, sequence)?;
        self.ensure(record).await?;
        Ok(self.number)
    }

    /// Claims the number in `record`'s store, the first time only (a failed check is tried
    /// again next time).
    ///
    /// # Errors
    ///
    /// As [`claim`].
    pub async fn ensure(&self, record: &dyn NumberRecord) -> Result<(), AuthorityError> {
        self.done
            .get_or_try_init(|| async { claim(record, Some(self.number)).await.map(drop) })
            .await
            .map(drop)
    }
}

/// A [`NumberRecord`] in process memory: for the in-memory store, tests and examples.
#[derive(Debug)]
pub struct MemoryRecord {
    store: String,
    recorded: Mutex<Option<u8>>,
    in_counters: Vec<u8>,
}

impl MemoryRecord {
    /// A fresh store named `store`.
    pub fn new(store: &str) -> Self {
        MemoryRecord {
            store: store.to_owned(),
            recorded: Mutex::new(None),
            in_counters: Vec::new(),
        }
    }

    /// A store with no record whose counters use `numbers` (written before numbers were
    /// recorded).
    pub fn with_counters(store: &str, numbers: &[u8]) -> Self {
        MemoryRecord {
            in_counters: numbers.to_vec(),
            ..MemoryRecord::new(store)
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<u8>> {
        self.recorded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl NumberRecord for MemoryRecord {
    fn store(&self) -> String {
        self.store.clone()
    }

    fn recorded_number(&self) -> BoxFuture<'_, Result<Option<u8>, AuthorityError>> {
        let recorded = *self.lock();
        Box::pin(async move { Ok(recorded) })
    }

    fn record_number(&self, number: u8) -> BoxFuture<'_, Result<(), AuthorityError>> {
        self.lock().get_or_insert(number);
        Box::pin(async { Ok(()) })
    }

    fn numbers_in_counters(&self) -> BoxFuture<'_, Result<Vec<u8>, AuthorityError>> {
        let found = self.in_counters.clone();
        Box::pin(async move { Ok(found) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(store: &str, asked: Option<u8>, holding: Holding) -> Listed {
        Listed {
            store: store.to_owned(),
            asked,
            holding,
        }
    }

    fn fresh(store: &str) -> Listed {
        listed(store, None, Holding::Unrecorded(vec![]))
    }

    #[test]
    fn a_store_keeps_its_recorded_number_whatever_the_order() {
        let a = listed("a", None, Holding::recorded(1));
        assert_eq!(plan(&[a.clone(), fresh("b")]), Ok(vec![Some(1), Some(2)]));
        assert_eq!(plan(&[fresh("b"), a.clone()]), Ok(vec![Some(2), Some(1)]));
        assert_eq!(
            plan(&[fresh("c"), fresh("b"), a]),
            Ok(vec![Some(2), Some(3), Some(1)])
        );
    }

    #[test]
    fn fresh_stores_get_the_lowest_numbers_no_listed_store_holds() {
        assert_eq!(plan(&[fresh("a")]), Ok(vec![Some(1)]));
        let b = listed("b", None, Holding::recorded(2));
        let c = listed("c", None, Holding::Unrecorded(vec![1]));
        assert_eq!(
            plan(&[fresh("a"), b, c]),
            Ok(vec![Some(3), Some(2), Some(1)])
        );
        let all: Vec<Listed> = (1..=15)
            .map(|n| listed(&format!("s{n}"), None, Holding::recorded(n)))
            .chain([fresh("last")])
            .collect();
        assert_eq!(plan(&all).unwrap()[15], Some(0), "0 comes after 1 to 15");
    }

    #[test]
    fn a_promoted_store_without_its_record_takes_only_the_number_asked_for() {
        let lost = listed("promoted", None, Holding::Lost(vec![3]));
        assert_eq!(
            plan(&[lost]),
            Err(NumberConflict::RecordLost {
                store: "promoted".into()
            }),
            "not even the number its counters use: the record may have said another"
        );
        let asked = listed("promoted", Some(3), Holding::Lost(vec![3]));
        assert_eq!(plan(&[asked, fresh("b")]), Ok(vec![Some(3), Some(1)]));
    }

    #[test]
    fn an_asked_number_that_the_record_contradicts_is_refused() {
        let a = listed("a", Some(2), Holding::recorded(1));
        assert_eq!(
            plan(&[a]),
            Err(NumberConflict::Recorded {
                store: "a".into(),
                recorded: 1,
                asked: 2
            })
        );
        assert_eq!(
            plan(&[listed("a", Some(1), Holding::recorded(1))]),
            Ok(vec![Some(1)])
        );
    }

    #[test]
    fn a_store_of_before_the_record_keeps_the_number_its_counters_use() {
        let old = listed("old", None, Holding::Unrecorded(vec![4]));
        assert_eq!(plan(&[fresh("new"), old]), Ok(vec![Some(1), Some(4)]));
        let mixed = listed("mixed", None, Holding::Unrecorded(vec![0, 1]));
        assert!(matches!(
            plan(&[mixed]),
            Err(NumberConflict::Ambiguous { found, .. }) if found == vec![0, 1]
        ));
        let chosen = listed("mixed", Some(1), Holding::Unrecorded(vec![0, 1]));
        assert_eq!(plan(&[chosen]), Ok(vec![Some(1)]));
    }

    #[test]
    fn two_listed_stores_never_share_a_number() {
        let a = listed("a", None, Holding::recorded(1));
        let b = listed("b", None, Holding::recorded(1));
        assert!(matches!(
            plan(&[a.clone(), b]),
            Err(NumberConflict::Shared { number: 1, .. })
        ));
        let asks_one = listed("c", Some(1), Holding::Unrecorded(vec![]));
        assert!(matches!(
            plan(&[a.clone(), asks_one]),
            Err(NumberConflict::Shared { number: 1, .. })
        ));
        // Its old counters of authority 1 are ids that a's authority 1 could issue again.
        let old_one = listed("d", Some(2), Holding::Unrecorded(vec![1, 2]));
        assert!(matches!(
            plan(&[a, old_one]),
            Err(NumberConflict::Shared { number: 1, .. })
        ));
    }

    #[test]
    fn a_store_that_cannot_be_read_is_left_out_unless_its_number_is_given() {
        let down = listed("down", None, Holding::Unknown);
        let a = listed("a", None, Holding::recorded(1));
        assert_eq!(plan(&[a.clone(), down]), Ok(vec![Some(1), None]));
        let asked = listed("down", Some(2), Holding::Unknown);
        assert_eq!(plan(&[a, asked.clone()]), Ok(vec![Some(1), Some(2)]));
        // A fresh store may take the number of the unread one: it gets none.
        let unread = listed("down", None, Holding::Unknown);
        assert!(matches!(
            plan(&[fresh("new"), unread]),
            Err(NumberConflict::Unseen { store, unread }) if store == "new" && unread == "down"
        ));
        // Unless the unread one's number is given.
        assert_eq!(plan(&[fresh("new"), asked]), Ok(vec![Some(1), Some(2)]));
    }

    #[test]
    fn numbers_a_recorded_store_used_before_its_record_stay_its_own() {
        // Recorded as 2 by --authority 2, with counters of authority 1 from before the record:
        // a fresh store listed with it must not take 1 and issue its old ids again.
        let old = listed(
            "old",
            None,
            Holding::Recorded {
                number: 2,
                in_counters: vec![1, 2],
            },
        );
        assert_eq!(
            plan(&[fresh("new"), old.clone()]),
            Ok(vec![Some(3), Some(2)])
        );
        let asks_one = listed("new", Some(1), Holding::Unrecorded(vec![]));
        assert!(matches!(
            plan(&[asks_one, old]),
            Err(NumberConflict::Shared { number: 1, .. })
        ));
    }

    /// Whether `error` is the conflict of number 2 asked of a store that records 1.
    fn asks_2_of_recorded_1(error: &AuthorityError) -> bool {
        matches!(
            error,
            AuthorityError::Number(NumberConflict::Recorded {
                recorded: 1,
                asked: 2,
                ..
            })
        )
    }

    #[tokio::test]
    async fn claiming_records_the_number_once_and_refuses_another() {
        let store = MemoryRecord::new("a");
        assert_eq!(claim(&store, None).await.unwrap(), 1);
        assert_eq!(claim(&store, None).await.unwrap(), 1);
        assert_eq!(claim(&store, Some(1)).await.unwrap(), 1);
        let refused = claim(&store, Some(2)).await.unwrap_err();
        assert!(asks_2_of_recorded_1(&refused), "{refused}");
    }

    #[tokio::test]
    async fn one_store_listed_twice_is_refused_fresh_or_recorded() {
        for asked in [[None, None], [Some(1), Some(2)], [Some(3), Some(3)]] {
            let fresh = MemoryRecord::new("a");
            let err = assign(&[(&fresh, asked[0]), (&fresh, asked[1])])
                .await
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    AuthorityError::Number(
                        NumberConflict::Shared { .. } | NumberConflict::Recorded { .. }
                    )
                ),
                "{asked:?}: {err}"
            );
        }
        let recorded = MemoryRecord::new("b");
        assert_eq!(claim(&recorded, None).await.unwrap(), 1);
        let err = assign(&[(&recorded, None), (&recorded, None)])
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                AuthorityError::Number(NumberConflict::Shared { number: 1, .. })
            ),
            "{err}"
        );
        let err = assign(&[(&recorded, Some(2)), (&MemoryRecord::new("c"), None)])
            .await
            .unwrap_err();
        assert!(asks_2_of_recorded_1(&err), "{err}");
    }

    #[tokio::test]
    async fn assign_records_every_fresh_store_in_list_order() {
        let (a, b) = (MemoryRecord::new("a"), MemoryRecord::new("b"));
        assert_eq!(assign(&[(&a, None)]).await.unwrap(), vec![Some(1)]);
        // b listed in front of a: a keeps 1, b gets 2.
        let numbers = assign(&[(&b, None), (&a, None)]).await.unwrap();
        assert_eq!(numbers, vec![Some(2), Some(1)]);
        assert_eq!(b.lock().as_ref(), Some(&2));
        let numbers = assign(&[(&a, None), (&b, None)]).await.unwrap();
        assert_eq!(numbers, vec![Some(1), Some(2)]);
    }
}
