//! [`IdRange`]: the half-open range `[lo, hi)` random ids are drawn from.

use std::ops::Range;

/// A range that cannot hold ids.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid id range: {0}")]
pub struct RangeError(pub(crate) String);

/// The half-open range `[lo, hi)` ids are drawn from (at least one value).
///
/// ```
/// use gdid_random::IdRange;
///
/// assert_eq!(IdRange::decimal_digits(12)?.bounds(), 100_000_000_000..1_000_000_000_000);
/// assert_eq!(IdRange::bits(16)?.size(), 65_535); // 0 excluded
/// assert!(IdRange::new(5..5).is_err());
/// # Ok::<(), gdid_random::RangeError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdRange {
    lo: u64,
    hi: u64,
}

impl IdRange {
    /// `[bounds.start, bounds.end)`.
    ///
    /// # Errors
    ///
    /// [`RangeError`] when the range is empty.
    pub fn new(bounds: Range<u64>) -> Result<IdRange, RangeError> {
        if bounds.start >= bounds.end {
            return Err(RangeError(format!(
                "{}..{} holds no value",
                bounds.start, bounds.end
            )));
        }
        Ok(IdRange {
            lo: bounds.start,
            hi: bounds.end,
        })
    }

    /// Numbers of exactly `digits` decimal digits (1 to 19): `10^(digits-1) .. 10^digits`
    /// (`0..10` for one digit).
    ///
    /// # Errors
    ///
    /// [`RangeError`] for 0 or more than 19 digits.
    pub fn decimal_digits(digits: u32) -> Result<IdRange, RangeError> {
        if !(1..=19).contains(&digits) {
            return Err(RangeError(format!("{digits} digits: expected 1 to 19")));
        }
        let lo = if digits == 1 {
            0
        } else {
            10u64.pow(digits - 1)
        };
        IdRange::new(lo..10u64.pow(digits))
    }

    /// Every value of `bits` bits (1 to 63), 0 excluded: `1 .. 2^bits`.
    ///
    /// # Errors
    ///
    /// [`RangeError`] for 0 or more than 63 bits.
    pub fn bits(bits: u32) -> Result<IdRange, RangeError> {
        if !(1..=63).contains(&bits) {
            return Err(RangeError(format!("{bits} bits: expected 1 to 63")));
        }
        IdRange::new(1..1u64 << bits)
    }

    /// The bounds.
    pub fn bounds(&self) -> Range<u64> {
        self.lo..self.hi
    }

    /// How many values.
    pub fn size(&self) -> u64 {
        self.hi - self.lo
    }

    /// Whether `value` is in the range.
    pub fn contains(&self, value: u64) -> bool {
        (self.lo..self.hi).contains(&value)
    }
}
