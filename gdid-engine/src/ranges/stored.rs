//! Decoding what a store holds: range records and the layout record, from the integers a backend
//! read (a backend only turns its own types into `i64`, or reports a value of the wrong type).
//! Every rule is here, once, so that it is the same on every store and can be fuzzed without one.

use std::ops::RangeInclusive;

use super::{RangeLayout, RangeState};
use crate::backend::counter_store::StoredInt;
use crate::generator_error::Error;

/// How a store names the fields of a range record, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeFields {
    /// The range number (`shard` in SQL, `range` in MongoDB).
    pub range: &'static str,
    /// The next value to hand out.
    pub next: &'static str,
    /// The last value of the range.
    pub max: &'static str,
}

impl RangeFields {
    /// The names of [`RangeState`]'s fields, for messages about no store in particular.
    pub const GENERIC: RangeFields = RangeFields {
        range: "range",
        next: "next",
        max: "max",
    };
}

/// The fields of a layout record, as every store names them: `base`, `size`, `ranges`.
pub const LAYOUT_FIELDS: [&str; 3] = ["base", "size", "ranges"];

impl RangeState {
    /// A range record as `record` (its name in messages) holds it: a range number from 0 to
    /// `u32::MAX`, `next` and `max` from 0 to `i64::MAX`, and `next` at most one past `max`.
    ///
    /// ```
    /// use gdid_engine::backend::{RangeFields, RangeState};
    ///
    /// let fields = RangeFields::GENERIC;
    /// let state = RangeState::from_stored("range 2", &fields, [2, 11, 15]).unwrap();
    /// assert_eq!(state, RangeState { range: 2, next: 11, max: 15 });
    /// let err = RangeState::from_stored("range 2", &fields, [2, -1, 15]).unwrap_err();
    /// assert!(err.to_string().contains("range 2: field next is -1"), "{err}");
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorDetail::Corrupt`](crate::ErrorDetail::Corrupt) naming the record and the field.
    pub fn from_stored(
        record: &str,
        fields: &RangeFields,
        [range, next, max]: [i64; 3],
    ) -> Result<RangeState, Error> {
        let corrupt = |reason: String| Error::corrupt(format!("{record}: {reason}"));
        let range = decode(record, fields.range, range, RANGE_NUMBERS)?;
        let next = decode(record, fields.next, next, VALUES)?;
        let max = decode(record, fields.max, max, VALUES)?;
        if next > max + 1 {
            return Err(corrupt(format!(
                "field {} is {next}, beyond the end of its range ({} {max})",
                fields.next, fields.max
            )));
        }
        Ok(RangeState { range, next, max })
    }
}

impl RangeLayout {
    /// A layout record as `record` (its name in messages) holds it: `base`, `size` and `ranges`
    /// ([`LAYOUT_FIELDS`]) that make a valid layout.
    ///
    /// ```
    /// use gdid_engine::RangeLayout;
    ///
    /// let layout = RangeLayout::from_stored("the layout", [1, 5, 3]).unwrap();
    /// assert_eq!(layout, RangeLayout::new(1, 5, 3).unwrap());
    /// assert!(RangeLayout::from_stored("the layout", [1, 0, 3]).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorDetail::Corrupt`](crate::ErrorDetail::Corrupt) naming the record and what is wrong.
    pub fn from_stored(record: &str, [base, size, ranges]: [i64; 3]) -> Result<RangeLayout, Error> {
        let corrupt = |reason: String| Error::corrupt(format!("{record}: {reason}"));
        let [base_field, size_field, ranges_field] = LAYOUT_FIELDS;
        let base = decode(record, base_field, base, VALUES)?;
        let size = decode(record, size_field, size, VALUES)?;
        let ranges = decode(record, ranges_field, ranges, RANGE_NUMBERS)?;
        RangeLayout::new(base, size, ranges)
            .map_err(|reason| corrupt(format!("not a layout: {reason}")))
    }
}

/// The values of a range record or layout: 0 or more, in a signed 64-bit integer.
const VALUES: RangeInclusive<i64> = 0..=i64::MAX;

/// The range numbers, and how many ranges a layout has: 0 to `u32::MAX`.
const RANGE_NUMBERS: RangeInclusive<i64> = 0..=u32::MAX as i64;

/// Field `field` of `record`, read as `value`, as a `T` within `range`: the backends' one
/// decoder ([`StoredInt::decode`]), its error as the generators' corrupt error.
fn decode<T: TryFrom<i64>>(
    record: &str,
    field: &str,
    value: i64,
    range: RangeInclusive<i64>,
) -> Result<T, Error> {
    Ok(StoredInt::from(value).decode(record, field, range)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorDetail;

    const SQL: RangeFields = RangeFields {
        range: "shard",
        next: "next_value",
        max: "max_value",
    };

    fn message(result: Result<impl std::fmt::Debug, Error>) -> String {
        match result.map_err(Error::into_detail) {
            Err(ErrorDetail::Corrupt(reason)) => reason,
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    #[test]
    fn a_range_record_out_of_bounds_is_corrupt_naming_the_field() {
        let row = "the row";
        assert_eq!(
            RangeState::from_stored(row, &SQL, [3, 5, 9]).unwrap(),
            RangeState {
                range: 3,
                next: 5,
                max: 9
            }
        );
        assert_eq!(
            RangeState::from_stored(row, &SQL, [0, 10, 9]).unwrap().next,
            10,
            "one past the end: used up"
        );
        assert_eq!(
            message(RangeState::from_stored(row, &SQL, [-1, 5, 9])),
            "the row: field shard is -1, expected 0 to 4294967295"
        );
        assert_eq!(
            message(RangeState::from_stored(row, &SQL, [1 << 32, 5, 9])),
            "the row: field shard is 4294967296, expected 0 to 4294967295"
        );
        assert_eq!(
            message(RangeState::from_stored(row, &SQL, [0, -5, 9])),
            "the row: field next_value is -5, expected 0 to 9223372036854775807"
        );
        assert_eq!(
            message(RangeState::from_stored(row, &SQL, [0, 5, i64::MIN])),
            "the row: field max_value is -9223372036854775808, expected 0 to 9223372036854775807"
        );
        assert_eq!(
            message(RangeState::from_stored(row, &SQL, [0, 11, 9])),
            "the row: field next_value is 11, beyond the end of its range (max_value 9)"
        );
        let top = RangeState::from_stored(row, &SQL, [0, i64::MAX, i64::MAX]).unwrap();
        assert_eq!(top.max, i64::MAX.unsigned_abs());
    }

    #[test]
    fn a_layout_record_must_be_a_layout() {
        assert_eq!(
            RangeLayout::from_stored("the layout", [0, 10, 2]).unwrap(),
            RangeLayout::new(0, 10, 2).unwrap()
        );
        for (stored, expected) in [
            ([-1, 10, 2], "field base is -1, expected 0 to"),
            ([0, -10, 2], "field size is -10, expected 0 to"),
            ([0, 10, -2], "field ranges is -2, expected 0 to 4294967295"),
            ([0, 10, 1 << 40], "field ranges is 1099511627776, expected"),
            ([0, 0, 2], "not a layout: at least one range"),
            ([i64::MAX, 2, 1], "not a layout: 1 ranges of 2"),
        ] {
            let reason = message(RangeLayout::from_stored("the layout", stored));
            assert!(reason.starts_with("the layout: "), "{reason}");
            assert!(reason.contains(expected), "{stored:?}: {reason}");
        }
    }
}
