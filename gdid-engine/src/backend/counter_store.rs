//! Authorities over a store: the rules of an authority's counter record, once, for every backend.
//! A backend implements the few store-specific operations of [`CounterStore`] (a conditional
//! write, a read, an insert-if-absent, in its own dialect) and gets [`Authority`] and
//! [`CounterRow`] from the engine: the names checked, the store's authority number claimed before
//! the first block, the size checked, a missing record created, a lost race tried again
//! ([`retry`](crate::backend::retry)), and the stored values validated and rolled into a [`Block`]
//! ([`counter_values`], [`Block::reserved_before`]), a corrupt record named with its field.

use std::fmt::{self, Display};
use std::future::Future;
use std::ops::RangeInclusive;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use super::counter_row::CounterRow;
use super::lineage::{CLOCKS_APART_MAX_SECS, FENCE_MIN_INTERVAL_SECS, Lineage};
use super::numbering::{COUNTER_KEY, NumberCheck, NumberRecord};
use super::retry;
use crate::authority::{Authority, Block, CounterState, validate_names};
use crate::error::{AuthorityError, InvalidName, NameKind};
use gdid_core::Gdid;

/// `COUNTER_MAX` as a store holds it (signed 64-bit: SQL `BIGINT`, BSON `Int64`).
pub const STORED_COUNTER_MAX: i64 = (1 << Gdid::COUNTER_BITS) - 1;

/// The values of `next` an authority writes: 1 (a new record; a 0 would hand out counter 0 and
/// then the counters from 1 again) to `COUNTER_MAX + 1` (the era used up).
pub const STORED_NEXT: RangeInclusive<i64> = 1..=STORED_COUNTER_MAX + 1;

/// The values of `era` an authority writes (an era past `u32::MAX` is
/// [`AuthorityError::Exhausted`], not corrupt).
pub const STORED_ERA: RangeInclusive<i64> = 0..=i64::MAX;

/// The values of an authority number an authority writes: 0 to 15 (`AUTHORITY_MAX`).
pub const STORED_AUTHORITY: RangeInclusive<i64> = 0..=gdid_core::AUTHORITY_MAX as i64;

/// The values of `era` the conditional write ([`CounterStore::advance`]) moves forward: the eras
/// a block can still be issued in. A record past `u32::MAX` is exhausted and left as it is (the
/// era going up by one past `i64::MAX` would overflow the store's integer): [`reserve`] reads it
/// and says [`AuthorityError::Exhausted`].
pub const ADVANCED_ERA: RangeInclusive<i64> = 0..=u32::MAX as i64;

/// Which counter record: the key (an authority number, or [`COUNTER_KEY`] for the one-at-a-time
/// counter), the scope and the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterKey<'a> {
    /// The authority number the record is keyed by.
    pub key: u8,
    /// The scope.
    pub scope: &'a str,
    /// The sequence.
    pub sequence: &'a str,
}

impl<'a> CounterKey<'a> {
    /// The record of (`scope`, `sequence`) keyed `key`.
    pub const fn new(key: u8, scope: &'a str, sequence: &'a str) -> Self {
        CounterKey {
            key,
            scope,
            sequence,
        }
    }
}

/// Where a new counter record starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterStart {
    /// Era 0, next counter 1: an authority's first block of the sequence.
    Fresh,
    /// At the highest era and next counter of the sequence's other records: the one-at-a-time
    /// counter, whose values records of other keys may have handed out before it was keyed 0.
    /// Each of them is checked first ([`counter_values`]): a corrupt one says nothing of how far
    /// it went, so it is [`AuthorityError::Corrupt`] naming it and its field, never skipped
    /// (the highest of the others could be below values it handed out).
    AfterSiblings,
    /// At this era and next counter: a floor raised on a record that did not exist
    /// ([`raise_floor`]).
    At {
        /// The era.
        era: i64,
        /// The next counter.
        next: i64,
    },
}

/// A counter record as [`CounterStore::records`] reads it: its key, its names, its values as
/// stored, and what the last allocations left (see [`Allocations`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCounter {
    /// The key (an authority number, or [`COUNTER_KEY`] for the one-at-a-time counter).
    pub key: StoredInt,
    /// The scope.
    pub scope: String,
    /// The sequence.
    pub sequence: String,
    /// The era and next counter.
    pub values: [StoredInt; 2],
    /// When the last allocation was made, when the one before it was, and how many counters the
    /// last one took ([`Allocations`]); [`StoredInt::Missing`] in a record of before they were
    /// kept, or one never allocated from.
    pub allocations: [StoredInt; 3],
}

/// What the conditional write ([`CounterStore::advance`]) records of the allocation it makes,
/// beside the new era and counter: its time (milliseconds since the Unix epoch, by the clock of
/// the process that allocates), the time of the allocation before it, and its size. Nothing
/// depends on them but the statistics of `gdid sequences` ([`sequences`](crate::sequences)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocations {
    /// The time of this allocation, in milliseconds since the Unix epoch.
    pub at: i64,
}

impl Allocations {
    /// An allocation made now, by this process's clock (0 for a clock before 1970).
    pub fn now() -> Allocations {
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
            });
        Allocations { at }
    }
}

/// How a store names the fields of a counter record, for messages (as they should appear:
/// MongoDB quotes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterFields {
    /// The era.
    pub era: &'static str,
    /// The next counter to hand out.
    pub next: &'static str,
}

/// One integer field of a stored record as a backend read it: an integer, something else (how
/// the store describes it: `text 'abc'`, `"abc" (a String)`), or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredInt {
    /// An integer.
    Integer(i64),
    /// A value of another type, described.
    Other(String),
    /// No value (a missing field, SQL `NULL`).
    Missing,
}

/// A stored integer field that is not what an authority writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldError {
    /// An integer outside the values an authority writes.
    #[error("field {field} is {value}, expected {min} to {max}")]
    OutOfRange {
        /// The field, as the store names it.
        field: String,
        /// What it holds.
        value: i64,
        /// The smallest value expected.
        min: i64,
        /// The largest value expected.
        max: i64,
    },
    /// A value of another type.
    #[error("field {field} holds {what}, expected an integer")]
    NotAnInteger {
        /// The field, as the store names it.
        field: String,
        /// What it holds, as the store describes it.
        what: String,
    },
    /// No value.
    #[error("field {field} is missing")]
    Missing {
        /// The field, as the store names it.
        field: String,
    },
}

impl From<i64> for StoredInt {
    /// An integer a driver already read as one.
    fn from(value: i64) -> Self {
        StoredInt::Integer(value)
    }
}

impl StoredInt {
    /// The one decoder of a stored integer: field `field` of `record` (both as messages name
    /// them) as a `T`, checked to be in `range`, what an authority writes there. Every backend
    /// reads stored integers with it, so that a corrupt value is the same error, in the same
    /// words, on every store.
    ///
    /// ```
    /// use gdid_engine::backend::{STORED_AUTHORITY, StoredInt};
    ///
    /// let number: u8 = StoredInt::Integer(3).decode("the row", "authority", STORED_AUTHORITY)?;
    /// assert_eq!(number, 3);
    /// let err = StoredInt::from(16).decode::<u8>("the row", "authority", STORED_AUTHORITY);
    /// assert_eq!(
    ///     err.unwrap_err().to_string(),
    ///     "corrupt counter state: the row: field authority is 16, expected 0 to 15"
    /// );
    /// # Ok::<(), gdid_engine::AuthorityError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`AuthorityError::Corrupt`] naming `record` and `field` ([`FieldError`]'s words): missing,
    /// of another type, outside `range`, or (a `range` wider than `T`) not a `T`.
    pub fn decode<T: TryFrom<i64>>(
        &self,
        record: &str,
        field: &str,
        range: RangeInclusive<i64>,
    ) -> Result<T, AuthorityError> {
        let corrupt = |reason: FieldError| AuthorityError::Corrupt(format!("{record}: {reason}"));
        let value = self.within(field, range.clone()).map_err(corrupt)?;
        T::try_from(value).map_err(|_| {
            corrupt(FieldError::OutOfRange {
                field: field.to_owned(),
                value,
                min: *range.start(),
                max: *range.end(),
            })
        })
    }

    /// The integer, checked to be in `range`.
    ///
    /// # Errors
    ///
    /// [`FieldError`] naming `field`: missing, of another type, or outside `range`.
    pub fn within(&self, field: &str, range: RangeInclusive<i64>) -> Result<i64, FieldError> {
        match self {
            StoredInt::Integer(value) if range.contains(value) => Ok(*value),
            StoredInt::Integer(value) => Err(FieldError::OutOfRange {
                field: field.to_owned(),
                value: *value,
                min: *range.start(),
                max: *range.end(),
            }),
            StoredInt::Other(what) => Err(FieldError::NotAnInteger {
                field: field.to_owned(),
                what: what.clone(),
            }),
            StoredInt::Missing => Err(FieldError::Missing {
                field: field.to_owned(),
            }),
        }
    }
}

/// The era and next counter of a counter record as `record` (its name in messages) holds them,
/// checked: what an authority writes ([`STORED_ERA`], [`STORED_NEXT`]).
///
/// ```
/// use gdid_engine::backend::{CounterFields, StoredInt, counter_values};
///
/// let fields = CounterFields { era: "era", next: "next" };
/// let ok = counter_values("the row", &fields, [StoredInt::Integer(0), StoredInt::Integer(7)]);
/// assert_eq!(ok.unwrap(), (0, 7));
/// let err = counter_values("the row", &fields, [StoredInt::Integer(0), StoredInt::Integer(-1)]);
/// assert!(err.unwrap_err().to_string().contains("the row: field next is -1"));
/// ```
///
/// # Errors
///
/// [`AuthorityError::Corrupt`] naming the record and the field.
pub fn counter_values(
    record: &str,
    fields: &CounterFields,
    values: [StoredInt; 2],
) -> Result<(i64, i64), AuthorityError> {
    counter_fields(fields, values)
        .map_err(|reason| AuthorityError::Corrupt(format!("{record}: {reason}")))
}

/// As [`counter_values`], the error without the record's name.
fn counter_fields(
    fields: &CounterFields,
    [era, next]: [StoredInt; 2],
) -> Result<(i64, i64), FieldError> {
    Ok((
        era.within(fields.era, STORED_ERA)?,
        next.within(fields.next, STORED_NEXT)?,
    ))
}

/// How messages name the record of a key ([`CounterStore::record_name`]), written the first time
/// a message needs it: a reservation that goes through formats nothing.
struct RecordName<'a, S> {
    store: &'a S,
    key: &'a CounterKey<'a>,
    name: OnceLock<String>,
}

impl<'a, S: CounterStore> RecordName<'a, S> {
    fn new(store: &'a S, key: &'a CounterKey<'a>) -> Self {
        RecordName {
            store,
            key,
            name: OnceLock::new(),
        }
    }

    fn get(&self) -> &str {
        self.name.get_or_init(|| self.store.record_name(self.key))
    }

    /// `error` about this record ([`in_record`]).
    fn error(&self, error: AuthorityError) -> AuthorityError {
        in_record(self.get(), error)
    }

    /// The record's stored era and next counter, checked ([`counter_values`]'s words).
    fn values(&self, values: [StoredInt; 2]) -> Result<(i64, i64), AuthorityError> {
        counter_fields(&S::FIELDS, values)
            .map_err(|reason| self.error(AuthorityError::Corrupt(reason.to_string())))
    }
}

impl<S: CounterStore> Display for RecordName<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

/// `error` with the record it is about, when it reports a corrupt record or a block read from
/// one.
pub fn in_record(record: &str, error: AuthorityError) -> AuthorityError {
    match error {
        AuthorityError::Corrupt(reason) | AuthorityError::InvalidBlock(reason)
            if !reason.starts_with(record) =>
        {
            AuthorityError::Corrupt(format!("{record}: {reason}"))
        }
        AuthorityError::InvalidBlock(reason) => AuthorityError::Corrupt(reason),
        other => other,
    }
}

/// A block size as a store adds it: checked ([`Block::check_size`]), as a signed 64-bit integer.
///
/// # Errors
///
/// [`AuthorityError::InvalidSize`] outside 1 to [`BLOCK_SIZE_MAX`](crate::BLOCK_SIZE_MAX).
pub fn stored_size(size: u64) -> Result<i64, AuthorityError> {
    Block::check_size(size)?;
    i64::try_from(size).map_err(|_| AuthorityError::InvalidSize(size))
}

/// What makes a store one numbered authority: where it records its number, the check that the
/// number is its own ([`NumberCheck`]), and its label for errors and logs.
#[derive(Debug, Clone)]
pub struct Numbering<R> {
    record: R,
    check: NumberCheck,
    label: String,
}

impl<R: NumberRecord> Numbering<R> {
    /// The numbering of the store `record` is in, checked by `check`, named `label`.
    pub fn new(record: R, check: NumberCheck, label: &str) -> Self {
        Numbering {
            record,
            check,
            label: label.to_owned(),
        }
    }

    /// Where the store records its authority number.
    pub fn record(&self) -> &R {
        &self.record
    }

    /// The check of the authority number.
    pub fn check(&self) -> &NumberCheck {
        &self.check
    }

    /// The label, for errors and logs (see [`Authority::label`]).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The same store with another check (one made by [`claim`](crate::backend::numbering::claim)).
    #[must_use]
    pub fn with_check(self, check: NumberCheck) -> Self {
        Numbering { check, ..self }
    }
}

/// The store side of an authority: the operations on its counter records, each one statement or
/// one request in the store's dialect, and its authority number. The rules are the engine's:
/// every `CounterStore` is an [`Authority`] and a [`CounterRow`] through [`reserve`].
pub trait CounterStore: Send + Sync + 'static {
    /// How the store names the fields of a counter record, for messages.
    const FIELDS: CounterFields;

    /// Where the store records its authority number.
    type Numbers: NumberRecord;

    /// The store's authority number, its record and its label.
    fn numbering(&self) -> &Numbering<Self::Numbers>;

    /// How messages name the record of `key`: `the gdid_counters row (authority 1, …)`.
    fn record_name(&self, key: &CounterKey<'_>) -> String;

    /// The conditional write: moves the record of `key` forward by `size` in one atomic step,
    /// durably, only when it holds what an authority writes and can still issue ids from
    /// (integers, an era from [`ADVANCED_ERA`], a next counter from [`STORED_NEXT`]): when
    /// `next + size - 1` passes `COUNTER_MAX`, the era goes up by one and next becomes `size`, else
    /// next goes up by `size`. The record as the write left it, or `None` when no record matched
    /// (none yet, or a corrupt or exhausted one, which is left as it is).
    ///
    /// The same write records the allocation ([`Allocations`]): the time of the last allocation
    /// becomes the time of the one before, `at.at` the time of the last, `size` its size.
    ///
    /// A store that keeps lineages ([`lineage`](crate::backend::lineage)) compares, in the same
    /// write, the record's lineage with the server's. A record of another lineage (or of none, on a
    /// server that was promoted) moves to era
    /// [`fence_era`](crate::backend::lineage::fence_era)`(era, S)`, next counter `size`, S being
    /// the server's clock, and takes the server's lineage; unless it is keyed [`COUNTER_KEY`] (a
    /// `u64` counter has no era to move to) or changed lineage less than
    /// [`FENCE_MIN_INTERVAL_SECS`] ago: then nothing matches, and [`lineage`](Self::lineage) says
    /// why.
    fn advance(
        &self,
        key: &CounterKey<'_>,
        size: i64,
        at: Allocations,
    ) -> impl Future<Output = Result<Option<[StoredInt; 2]>, AuthorityError>> + Send;

    /// The conditional write of a floor: sets the record of `key` to `era` and `next` in one
    /// atomic step, durably, only when it holds what an authority writes and can still issue ids
    /// from (as [`advance`](Self::advance)) and is below them (a lower era, or the same era and a
    /// lower next counter). Whether a record matched. The allocation times are left as they are.
    ///
    /// A store that keeps lineages gives a record keyed [`COUNTER_KEY`] the server's lineage
    /// with its floor (the operator's answer to [`AuthorityError::Switched`]); the lineage of a
    /// record of GDIDs is the reserving write's alone.
    fn raise(
        &self,
        key: &CounterKey<'_>,
        era: i64,
        next: i64,
    ) -> impl Future<Output = Result<bool, AuthorityError>> + Send;

    /// The conditional write of a give-back ([`give_back`]): sets the next counter of the record
    /// of `key` from `from` down to `to`, in one atomic step, durably, only while it holds
    /// exactly era `era` and next counter `from` (nothing was reserved since) and, in a store
    /// that keeps lineages, is of the server's lineage (a copy that missed later blocks must not
    /// take back ids after them). Whether a record matched. The allocation times are left as
    /// they are.
    ///
    /// The default matches nothing: a store without it never takes ids back (they are lost,
    /// never repeated).
    fn lower(
        &self,
        key: &CounterKey<'_>,
        era: i64,
        from: i64,
        to: i64,
    ) -> impl Future<Output = Result<bool, AuthorityError>> + Send {
        let _ = (key, era, from, to);
        std::future::ready(Ok(false))
    }

    /// Every counter record of the store (of every key), in the order of key, scope and
    /// sequence, as stored.
    fn records(&self) -> impl Future<Output = Result<Vec<StoredCounter>, AuthorityError>> + Send;

    /// The (scope, sequence) of every record (of any key) whose names equal `key`'s when ASCII
    /// case is ignored: the spellings [`check_spelling`] compares.
    fn spellings(
        &self,
        key: &CounterKey<'_>,
    ) -> impl Future<Output = Result<Vec<(String, String)>, AuthorityError>> + Send;

    /// The most sequences one scope may hold records of: a record of a sequence new to its scope
    /// is created only while the scope holds fewer others
    /// ([`sequences_beside`](Self::sequences_beside)), so that whoever may issue from a scope
    /// cannot fill the store with sequences. `None`, the default: no bound.
    fn max_sequences_per_scope(&self) -> Option<u64> {
        None
    }

    /// How many sequences of `key`'s scope, other than `key`'s own, have a record (of any key):
    /// asked before a record is created, when [`max_sequences_per_scope`](Self::max_sequences_per_scope)
    /// bounds them. The default counts them in [`records`](Self::records); a store overrides it
    /// with a count of its own.
    fn sequences_beside(
        &self,
        key: &CounterKey<'_>,
    ) -> impl Future<Output = Result<u64, AuthorityError>> + Send {
        async move {
            let records = self.records().await?;
            let others: std::collections::BTreeSet<&str> = records
                .iter()
                .filter(|record| record.scope == key.scope && record.sequence != key.sequence)
                .map(|record| record.sequence.as_str())
                .collect();
            Ok(others.len() as u64)
        }
    }

    /// The era and next counter of the record of `key`, as stored, or `None` when there is none.
    fn read(
        &self,
        key: &CounterKey<'_>,
    ) -> impl Future<Output = Result<Option<[StoredInt; 2]>, AuthorityError>> + Send;

    /// Creates the record of `key` as `start` says, unless it exists: one insert-if-absent
    /// (a concurrent insert is not an error). A store that keeps lineages leaves the new
    /// record's lineage unset: the first [`advance`](Self::advance) decides it.
    fn insert_if_absent(
        &self,
        key: &CounterKey<'_>,
        start: CounterStart,
    ) -> impl Future<Output = Result<(), AuthorityError>> + Send;

    /// Whether the record of `key` (which exists) is of the lineage of the server that reads it
    /// now: asked only to explain why [`advance`](Self::advance) matched nothing, never to
    /// decide what to issue. The default: [`Lineage::Untracked`].
    fn lineage(
        &self,
        key: &CounterKey<'_>,
    ) -> impl Future<Output = Result<Lineage, AuthorityError>> + Send {
        let _ = key;
        std::future::ready(Ok(Lineage::Untracked))
    }
}

/// Reserves `size` counters of the record of `key` in `store`: the names and the size checked,
/// the record moved forward ([`CounterStore::advance`]) and its new values checked and turned
/// into the block ([`counter_values`], [`Block::reserved_before`]). When no record matched, it
/// is read: a corrupt one is the error, naming the field; one whose era is past `u32::MAX` is
/// exhausted; a missing one is created as `start` says; and the write is tried again, under the
/// [`retry`] policy.
///
/// # Errors
///
/// [`AuthorityError::InvalidName`], [`AuthorityError::InvalidSize`], [`AuthorityError::Corrupt`]
/// naming the record and field, [`AuthorityError::Exhausted`], the store's errors, and
/// [`AuthorityError::Contention`] when the record kept disappearing or the races kept being lost.
pub async fn reserve<S: CounterStore>(
    store: &S,
    key: CounterKey<'_>,
    size: u64,
    start: CounterStart,
) -> Result<Block, AuthorityError> {
    validate_names(key.scope, key.sequence)?;
    let stored_size = stored_size(size)?;
    let record = RecordName::new(store, &key);
    let in_record = |error| record.error(error);
    retry::run(&record, || async {
        // A record made by this attempt is written at once, not after a back-off: no race was
        // lost (and an authority in memory answers without waiting).
        let mut made = false;
        loop {
            let advanced = store.advance(&key, stored_size, Allocations::now());
            if let Some(values) = advanced.await.map_err(in_record)? {
                let (era, next) = record.values(values)?;
                return Block::reserved_before(key.key, era, next, size)
                    .map(Some)
                    .map_err(in_record);
            }
            // No record matched: none yet, a corrupt one (the error), or a valid one created
            // since.
            match store.read(&key).await.map_err(in_record)? {
                Some(values) => {
                    let (era, _) = record.values(values)?;
                    if era > *ADVANCED_ERA.end() {
                        return Err(AuthorityError::Exhausted);
                    }
                    let lineage = store.lineage(&key).await.map_err(in_record)?;
                    if let Some(remedy) = switched_remedy(&key, lineage) {
                        return Err(AuthorityError::Switched {
                            record: record.to_string(),
                            remedy,
                        });
                    }
                    return Ok(None);
                }
                None if !made => {
                    create(store, &key, start).await?;
                    made = true;
                }
                None => return Ok(None),
            }
        }
    })
    .await
}

/// Why a record of `key` whose lineage is `lineage` cannot be reserved from, and what the
/// operator runs: `None` when it can (the write lost a race; it is tried again).
fn switched_remedy(key: &CounterKey<'_>, lineage: Lineage) -> Option<String> {
    let (scope, sequence) = (key.scope, key.sequence);
    let recent = match lineage {
        Lineage::Untracked | Lineage::Same => return None,
        Lineage::ClocksApart { server, here } => {
            return Some(format!(
                "moving it to a new era takes the server's clock, which reads {server} s since \
                 2025-01-01 where this process reads {here} s: more than {CLOCKS_APART_MAX_SECS} \
                 s apart, and a clock far ahead would spend the eras for good; set the wrong \
                 clock right, then {scope}/{sequence} moves to a new era by itself"
            ));
        }
        Lineage::Changed { recent } => recent,
    };
    Some(if key.key == COUNTER_KEY {
        format!(
            "its values may be behind values it handed out, and a u64 counter has no era to \
             move to: raise its floor past every value it issued (gdid sequences set-floor \
             --counter --scope {scope} --sequence {sequence} --at N), then it issues again"
        )
    } else if recent {
        format!(
            "it moved to a new era less than {FENCE_MIN_INTERVAL_SECS} s ago already: the \
             connection of {scope}/{sequence} alternates between servers; point it at one \
             primary, and the record moves to a new era by itself once {FENCE_MIN_INTERVAL_SECS} \
             s have passed since its last change"
        )
    } else {
        return None;
    })
}

/// Creates the missing record of `key` as `start` says, after [`check_spelling`]: a fresh record
/// of GDIDs at the store's floor era ([`NumberRecord::floor_era`]) once a fence raised it.
async fn create<S: CounterStore>(
    store: &S,
    key: &CounterKey<'_>,
    start: CounterStart,
) -> Result<(), AuthorityError> {
    check_spelling(key, store.spellings(key).await?)?;
    check_room(store, key).await?;
    let start = match start {
        CounterStart::Fresh if key.key != COUNTER_KEY => {
            match store.numbering().record.floor_era().await? {
                era if era > 0 => CounterStart::At { era, next: 1 },
                _ => start,
            }
        }
        _ => start,
    };
    store.insert_if_absent(key, start).await
}

/// Refuses the record of `key` when its sequence is new to its scope and the scope holds the most
/// sequences the store allows ([`CounterStore::max_sequences_per_scope`]). Two writers creating
/// sequences of one scope at once may each pass the count: the bound can be passed by at most the
/// number of such writers, never without end.
///
/// # Errors
///
/// [`AuthorityError::InvalidName`] naming the sequence, its scope and the bound.
async fn check_room<S: CounterStore>(
    store: &S,
    key: &CounterKey<'_>,
) -> Result<(), AuthorityError> {
    let Some(most) = store.max_sequences_per_scope() else {
        return Ok(());
    };
    let others = store.sequences_beside(key).await?;
    if others < most {
        return Ok(());
    }
    Err(AuthorityError::InvalidName(InvalidName {
        kind: NameKind::Sequence,
        name: key.sequence.to_owned(),
        reason: format!(
            "it would be a new sequence of scope {:?}, which holds {others} already, the most this \
             store allows (max_sequences_per_scope): issue from a sequence it holds, or have the \
             store's administrator raise the bound",
            key.scope
        ),
    }))
}

/// The one rule of names and case: a scope and sequence are stored as given, and compared as
/// given (`Orders` and `orders` are two names), but a record whose names differ from a stored
/// record's only by ASCII case is never created: it would be a second counter of what its writer
/// meant as the same sequence, issuing the same ids again. `stored` are the (scope, sequence) of
/// the store's records equal to `key`'s when case is ignored ([`CounterStore::spellings`]).
///
/// ```
/// use gdid_engine::backend::{CounterKey, check_spelling};
///
/// let key = CounterKey { key: 1, scope: "shop", sequence: "Orders" };
/// assert!(check_spelling(&key, vec![("shop".into(), "Orders".into())]).is_ok());
/// let err = check_spelling(&key, vec![("shop".into(), "orders".into())]).unwrap_err();
/// assert!(err.to_string().contains("differs only in case from the stored \"orders\""));
/// ```
///
/// # Errors
///
/// [`AuthorityError::InvalidName`] naming the name and the stored spelling.
pub fn check_spelling(
    key: &CounterKey<'_>,
    stored: Vec<(String, String)>,
) -> Result<(), AuthorityError> {
    let other = stored
        .into_iter()
        .find(|(scope, sequence)| (scope.as_str(), sequence.as_str()) != (key.scope, key.sequence));
    let Some((scope, sequence)) = other else {
        return Ok(());
    };
    let (kind, name, stored) = if scope == key.scope {
        (NameKind::Sequence, key.sequence, sequence)
    } else {
        (NameKind::Scope, key.scope, scope)
    };
    Err(AuthorityError::InvalidName(InvalidName {
        kind,
        name: name.to_owned(),
        reason: format!(
            "differs only in case from the stored {stored:?}: one sequence has one spelling"
        ),
    }))
}

/// Where a floor leaves a counter record, from where it is (`stored`, `None`: no record): moved
/// up to `floor` (`Some`), or left as it is (`None`: it is at the floor already).
///
/// ```
/// use gdid_engine::{CounterState, backend::floor_of};
///
/// let floor = CounterState { era: 0, next: 1_000 };
/// assert_eq!(floor_of(Some(CounterState { era: 0, next: 7 }), floor), Ok(Some(floor)));
/// assert_eq!(floor_of(Some(floor), floor), Ok(None));
/// assert!(floor_of(Some(CounterState { era: 1, next: 7 }), floor).is_err());
/// ```
///
/// # Errors
///
/// The stored state when it is past the floor: a floor is never lowered (the ids below the
/// stored counter may have been issued).
pub fn floor_of(
    stored: Option<CounterState>,
    floor: CounterState,
) -> Result<Option<CounterState>, CounterState> {
    match stored {
        None => Ok(Some(floor)),
        Some(at) if (at.era, at.next) < (floor.era, floor.next) => Ok(Some(floor)),
        Some(at) if at == floor => Ok(None),
        Some(at) => Err(at),
    }
}

/// Raises the floor of the record of `key` in `store` to `floor`: from then on, every block of
/// it starts at or after `floor` (the era and the next counter), which is how a sequence starts
/// after the largest id already in a table. One conditional write ([`CounterStore::raise`]):
/// the record moves only while it is still below the floor, so a generator running meanwhile
/// loses nothing and repeats nothing (a block it took before is below the new floor, a block
/// after starts at it or later). A missing record is created at the floor (the one-at-a-time
/// counter's after its siblings, then raised). `Ok(true)` when the record moved or was made,
/// `Ok(false)` when it was at the floor already.
///
/// # Errors
///
/// [`AuthorityError::FloorBelow`] when the record is past the floor (a floor is never lowered);
/// [`AuthorityError::InvalidName`] for a bad name or a spelling of a stored one
/// ([`check_spelling`]); [`AuthorityError::InvalidBlock`] for a floor outside the counter
/// space (a next counter of 0 or above `COUNTER_MAX + 1`);
/// [`AuthorityError::Corrupt`] naming the record and field; the store's errors;
/// [`AuthorityError::Contention`].
pub async fn raise_floor<S: CounterStore>(
    store: &S,
    key: CounterKey<'_>,
    floor: CounterState,
) -> Result<bool, AuthorityError> {
    validate_names(key.scope, key.sequence)?;
    let (era, next) = stored_floor(floor)?;
    let record = RecordName::new(store, &key);
    let in_record = |error| record.error(error);
    let created = AtomicBool::new(false);
    retry::run(&record, || async {
        // A record made by this attempt is judged at once, not after a back-off (see
        // `reserve`).
        let mut made = false;
        let values = loop {
            if store.raise(&key, era, next).await.map_err(in_record)? {
                return Ok(Some(true));
            }
            // No record below the floor matched: none yet, one at or past it, or a corrupt one.
            match store.read(&key).await.map_err(in_record)? {
                Some(values) => break values,
                None if !made => {
                    let start = if key.key == COUNTER_KEY {
                        CounterStart::AfterSiblings
                    } else {
                        CounterStart::At { era, next }
                    };
                    create(store, &key, start).await?;
                    created.store(true, Ordering::Relaxed);
                    made = true;
                }
                None => return Ok(None),
            }
        };
        let (stored_era, stored_next) = record.values(values)?;
        let at = CounterState {
            era: u32::try_from(stored_era).map_err(|_| AuthorityError::Exhausted)?,
            next: stored_next.unsigned_abs(),
        };
        match floor_of(Some(at), floor) {
            // Below the floor, yet the write matched nothing: it raced with another; again.
            Ok(Some(_)) => Ok(None),
            Ok(None) => Ok(Some(created.load(Ordering::Relaxed))),
            Err(_) => Err(AuthorityError::FloorBelow {
                record: record.to_string(),
                era: stored_era,
                next: stored_next,
                floor_era: era,
                floor_next: next,
            }),
        }
    })
    .await
}

/// Gives `tail`, the unused end of the latest block of the record of `key`, back to `store`: the
/// engine's rule ([`CounterState::give_back`]) as one conditional write ([`CounterStore::lower`]),
/// which moves the record back only while nothing was reserved after the tail; a write the store
/// rolled back on a lost race is tried again under the [`retry`] policy. Whether the ids went
/// back.
///
/// # Errors
///
/// [`AuthorityError::InvalidName`]; [`AuthorityError::InvalidBlock`] for a tail of another
/// authority than `key`'s; the store's errors and [`AuthorityError::Contention`] (the ids are
/// then lost, never repeated).
pub async fn give_back<S: CounterStore>(
    store: &S,
    key: CounterKey<'_>,
    tail: Block,
) -> Result<bool, AuthorityError> {
    check_tail(&key, &tail)?;
    let after = CounterState {
        era: tail.era(),
        next: tail.end(),
    };
    let Some(back) = after.give_back(&tail) else {
        return Ok(false);
    };
    let stored =
        |n: u64| i64::try_from(n).map_err(|_| AuthorityError::InvalidBlock(tail.to_string()));
    let (era, from, to) = (
        i64::from(tail.era()),
        stored(after.next)?,
        stored(back.next)?,
    );
    let record = RecordName::new(store, &key);
    // A lost race (a deadlock, a certification conflict on Galera) rolled the write back: tried
    // again under the one policy. A write that matched nothing is final: a block was reserved
    // since, and the tail is lost, never repeated.
    retry::run(&record, || async {
        store
            .lower(&key, era, from, to)
            .await
            .map(Some)
            .map_err(|error| record.error(error))
    })
    .await
}

/// Checks that `tail` may go back to the record of `key`: the names of `key`
/// ([`validate_names`](crate::authority::validate_names)), and a tail of `key`'s authority.
fn check_tail(key: &CounterKey<'_>, tail: &Block) -> Result<(), AuthorityError> {
    validate_names(key.scope, key.sequence)?;
    if tail.authority() != key.key {
        return Err(AuthorityError::InvalidBlock(format!(
            "{tail} is not a block of authority {}",
            key.key
        )));
    }
    Ok(())
}

/// A floor as a store holds it: an era of [`ADVANCED_ERA`], a next counter of [`STORED_NEXT`].
fn stored_floor(floor: CounterState) -> Result<(i64, i64), AuthorityError> {
    let next = i64::try_from(floor.next)
        .ok()
        .filter(|next| STORED_NEXT.contains(next));
    match next {
        Some(next) => Ok((i64::from(floor.era), next)),
        None => Err(AuthorityError::InvalidBlock(format!(
            "a floor of era {}, next counter {}: expected a next counter from 1 to 2^60",
            floor.era, floor.next
        ))),
    }
}

impl<S: CounterStore> Authority for S {
    fn number(&self) -> u8 {
        self.numbering().check.number()
    }

    fn label(&self) -> String {
        self.numbering().label.clone()
    }

    async fn allocate(&self, scope: &str, sequence: &str, n: u64) -> Result<Block, AuthorityError> {
        let Numbering { record, check, .. } = self.numbering();
        let key = check.before_block(record, scope, sequence).await?;
        let key = CounterKey::new(key, scope, sequence);
        reserve(self, key, n, CounterStart::Fresh).await
    }

    async fn give_back(
        &self,
        scope: &str,
        sequence: &str,
        tail: Block,
    ) -> Result<bool, AuthorityError> {
        let key = CounterKey::new(self.numbering().check.number(), scope, sequence);
        give_back(self, key, tail).await
    }
}

impl<S: CounterStore> CounterRow for S {
    async fn reserve_counter(
        &self,
        scope: &str,
        sequence: &str,
        n: u64,
    ) -> Result<Block, AuthorityError> {
        let key = CounterKey::new(COUNTER_KEY, scope, sequence);
        reserve(self, key, n, CounterStart::AfterSiblings).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_counter_max_is_counter_max() {
        assert_eq!(
            u64::try_from(STORED_COUNTER_MAX),
            Ok(gdid_core::COUNTER_MAX)
        );
    }

    #[test]
    fn stored_values_are_checked_naming_the_field() {
        let fields = CounterFields {
            era: "era",
            next: "next_counter",
        };
        let check = |era, next| counter_values("the row", &fields, [era, next]);
        assert_eq!(
            check(StoredInt::Integer(3), StoredInt::Integer(1)).unwrap(),
            (3, 1)
        );
        for (era, next, message) in [
            (
                StoredInt::Integer(-1),
                StoredInt::Integer(1),
                "the row: field era is -1, expected 0 to 9223372036854775807",
            ),
            (
                StoredInt::Integer(0),
                StoredInt::Integer(0),
                "the row: field next_counter is 0, expected 1 to 1152921504606846976",
            ),
            (
                StoredInt::Integer(0),
                StoredInt::Other("text 'abc'".into()),
                "the row: field next_counter holds text 'abc', expected an integer",
            ),
            (
                StoredInt::Missing,
                StoredInt::Integer(1),
                "the row: field era is missing",
            ),
        ] {
            let err = check(era, next).unwrap_err();
            assert!(
                matches!(&err, AuthorityError::Corrupt(m) if m == message),
                "{err}"
            );
        }
    }

    #[test]
    fn stored_integers_decode_into_their_type_or_name_record_and_field() {
        let number =
            |value: StoredInt| value.decode::<u8>("the row", "authority", STORED_AUTHORITY);
        assert_eq!(number(StoredInt::Integer(15)).unwrap(), 15);
        for (value, message) in [
            (
                StoredInt::Integer(-1),
                "the row: field authority is -1, expected 0 to 15",
            ),
            (
                StoredInt::Integer(300),
                "the row: field authority is 300, expected 0 to 15",
            ),
            (
                StoredInt::Other("text 'x'".into()),
                "the row: field authority holds text 'x', expected an integer",
            ),
            (StoredInt::Missing, "the row: field authority is missing"),
        ] {
            let err = number(value).unwrap_err();
            assert!(
                matches!(&err, AuthorityError::Corrupt(m) if m == message),
                "{err}"
            );
        }
        // A range wider than the type is refused, not cut.
        let wide = StoredInt::Integer(256).decode::<u8>("the row", "authority", 0..=1_000);
        assert!(matches!(wide, Err(AuthorityError::Corrupt(m)) if m.contains("is 256")));
    }

    #[test]
    fn sizes_outside_the_counter_space_are_refused() {
        assert!(matches!(
            stored_size(0),
            Err(AuthorityError::InvalidSize(0))
        ));
        assert!(stored_size(crate::BLOCK_SIZE_MAX + 1).is_err());
        assert_eq!(stored_size(7).unwrap(), 7);
        // A whole era: its next counter, 2^60, is what a store holds at most.
        let whole = stored_size(crate::BLOCK_SIZE_MAX).unwrap();
        assert_eq!(whole, *STORED_NEXT.end());
    }
}
