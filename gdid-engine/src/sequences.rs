//! What a store's counter records say about its sequences, for `gdid sequences`: each record's
//! key, names, era and next counter checked as the engine checks them, the counter space used,
//! the last allocation's time, the recent rate and the runway.
//!
//! **The recent rate** is measured from what the conditional write records
//! ([`Allocations`](crate::backend::Allocations)): the size of the last allocation over the time
//! since the allocation before it. A generator asks for its next block when its current one runs
//! low, so that interval is how long the counters before it lasted, and one block per interval is
//! the rate at which the sequence takes counters (all its processes together, since they share the
//! record). It is `None` ("unknown") until a record has two allocations with their times (a
//! record of before they were kept, a new one, one only raised), or when the two times are not
//! in order (clocks of two processes that disagree). It is a recent rate, not an average: a
//! sequence idle since its last block shows the rate of that block.
//!
//! **The runway** is the counter space left in the current era over that rate. When it is used
//! up the era goes up by one and counting starts again, for as many eras as are left
//! ([`Sequence::eras_left`]).

use std::time::Duration;

use super::error::AuthorityError;
use crate::backend::counter_store::{
    CounterFields, CounterKey, CounterStore, STORED_AUTHORITY, StoredCounter, StoredInt,
    counter_values,
};
use crate::backend::numbering::COUNTER_KEY;
use gdid_core::Gdid;

/// One counter record, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    /// The key: the authority number, or [`COUNTER_KEY`] (0) for a one-at-a-time counter.
    pub key: u8,
    /// Whether it is a one-at-a-time counter (keyed [`COUNTER_KEY`]) rather than an authority's
    /// GDID counter. Blocks issued as authority 0 before numbers were recorded are keyed 0 too.
    pub one_at_a_time: bool,
    /// The scope.
    pub scope: String,
    /// The sequence.
    pub sequence: String,
    /// The era (past `u32::MAX`: the sequence is exhausted).
    pub era: u64,
    /// The next counter to hand out in `era`.
    pub next: u64,
    /// How many counters were handed out in blocks: ids issued, and ids reserved but never served
    /// (a process that stopped), skipped by a raised floor or at an era's end. An upper bound of
    /// the ids issued: `era × 2^60 + next − 1`.
    pub used: u128,
    /// The time of the last allocation, in milliseconds since the Unix epoch (the allocating
    /// process's clock); `None` when the record keeps none.
    pub last_allocation_ms: Option<i64>,
    /// The size of the last allocation.
    pub last_size: Option<i64>,
    /// The recent rate in counters per second (see the module's docs), or `None`: unknown.
    pub rate: Option<f64>,
    /// How long the counters left in the era last at [`rate`](Self::rate); `None`: unknown.
    pub runway: Option<Duration>,
}

impl Sequence {
    /// The record `stored` (named `record` in errors), checked, with its rate and runway.
    ///
    /// ```
    /// use gdid_engine::backend::{CounterFields, StoredCounter, StoredInt};
    /// use gdid_engine::sequences::Sequence;
    ///
    /// let fields = CounterFields { era: "era", next: "next" };
    /// let stored = StoredCounter {
    ///     key: StoredInt::Integer(1),
    ///     scope: "shop".into(),
    ///     sequence: "orders".into(),
    ///     values: [StoredInt::Integer(0), StoredInt::Integer(2_001)],
    ///     // the last block of 1,000 at t = 10 s, the one before at t = 8 s: 500 a second
    ///     allocations: [10_000, 8_000, 1_000].map(StoredInt::Integer),
    /// };
    /// let sequence = Sequence::of("the row", &fields, stored).unwrap();
    /// assert_eq!((sequence.used, sequence.rate), (2_000, Some(500.0)));
    /// ```
    ///
    /// # Errors
    ///
    /// [`AuthorityError::Corrupt`] naming the record and the field: a key, era or next counter
    /// no authority writes.
    pub fn of(
        record: &str,
        fields: &CounterFields,
        stored: StoredCounter,
    ) -> Result<Sequence, AuthorityError> {
        let StoredCounter {
            key,
            scope,
            sequence,
            values,
            allocations: [at, before, size],
        } = stored;
        let key: u8 = key.decode(record, "authority", STORED_AUTHORITY)?;
        let (era, next) = counter_values(record, fields, values)?;
        let (era, next) = (era.unsigned_abs(), next.unsigned_abs());
        let used = (u128::from(era) << Gdid::COUNTER_BITS) + u128::from(next) - 1;
        let integer = |value: StoredInt| match value {
            StoredInt::Integer(value) => Some(value),
            _ => None,
        };
        let (at, before, size) = (integer(at), integer(before), integer(size));
        let rate = match (at, before, size) {
            (Some(at), Some(before), Some(size)) if at > before && size > 0 => {
                #[allow(clippy::cast_precision_loss)] // a rate, not a count
                Some(size as f64 * 1_000.0 / (at - before) as f64)
            }
            _ => None,
        };
        let left = (gdid_core::COUNTER_MAX + 1).saturating_sub(next);
        #[allow(clippy::cast_precision_loss)] // a duration, to the second
        let runway = rate.and_then(|rate| Duration::try_from_secs_f64(left as f64 / rate).ok());
        Ok(Sequence {
            key,
            one_at_a_time: key == COUNTER_KEY,
            scope,
            sequence,
            era,
            next,
            used,
            last_allocation_ms: at,
            last_size: size,
            rate,
            runway,
        })
    }

    /// How many eras are left after this one (0 in era `u32::MAX`).
    pub fn eras_left(&self) -> u64 {
        u64::from(u32::MAX).saturating_sub(self.era)
    }
}

/// Every counter record of `store`, checked ([`Sequence::of`]), in the order of key, scope and
/// sequence.
///
/// # Errors
///
/// [`AuthorityError::Corrupt`] naming the first corrupt record and its field; the store's
/// errors.
pub async fn list<S: CounterStore>(store: &S) -> Result<Vec<Sequence>, AuthorityError> {
    let mut sequences = Vec::new();
    for stored in store.records().await? {
        let key = match stored.key {
            StoredInt::Integer(key) => u8::try_from(key).unwrap_or(u8::MAX),
            _ => u8::MAX,
        };
        let record = store.record_name(&CounterKey::new(key, &stored.scope, &stored.sequence));
        sequences.push(Sequence::of(&record, &S::FIELDS, stored)?);
    }
    Ok(sequences)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: CounterFields = CounterFields {
        era: "era",
        next: "next",
    };

    fn stored(values: [i64; 2], allocations: [StoredInt; 3]) -> StoredCounter {
        StoredCounter {
            key: StoredInt::Integer(2),
            scope: "s".into(),
            sequence: "q".into(),
            values: values.map(StoredInt::Integer),
            allocations,
        }
    }

    #[test]
    fn the_rate_is_unknown_without_two_timed_allocations() {
        for allocations in [
            [StoredInt::Missing, StoredInt::Missing, StoredInt::Missing],
            [
                StoredInt::Integer(5_000),
                StoredInt::Missing,
                StoredInt::Integer(10),
            ],
            // clocks out of order
            [
                StoredInt::Integer(5_000),
                StoredInt::Integer(6_000),
                StoredInt::Integer(10),
            ],
        ] {
            let sequence = Sequence::of("r", &FIELDS, stored([0, 11], allocations)).unwrap();
            assert_eq!((sequence.rate, sequence.runway), (None, None));
            assert_eq!(sequence.used, 10);
        }
    }

    #[test]
    fn the_runway_is_what_is_left_of_the_era_at_the_rate() {
        let next = i64::try_from(gdid_core::COUNTER_MAX + 1 - 1_000).unwrap();
        let allocations = [1_000, 0, 100].map(StoredInt::Integer);
        let sequence = Sequence::of("r", &FIELDS, stored([3, next], allocations)).unwrap();
        assert_eq!(sequence.rate, Some(100.0));
        assert_eq!(sequence.runway, Some(Duration::from_secs(10)));
        assert_eq!(sequence.eras_left(), u64::from(u32::MAX) - 3);
    }

    #[test]
    fn a_corrupt_record_is_named() {
        let missing = [StoredInt::Missing, StoredInt::Missing, StoredInt::Missing];
        let err = Sequence::of("the row", &FIELDS, stored([0, 0], missing));
        assert!(
            err.unwrap_err()
                .to_string()
                .contains("the row: field next is 0")
        );
    }
}
