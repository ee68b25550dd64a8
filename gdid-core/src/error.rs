//! Typed errors for every form a [`Gdid`](crate::Gdid) can be read from.
//!
//! Each error says what was wrong and where: the field, the byte index, the expected form. The
//! `Display` text is part of the API and is tested.

use core::fmt;

/// A field of a GDID, named in errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field {
    /// The 32-bit era.
    Era,
    /// The 4-bit authority.
    Authority,
    /// The 60-bit counter.
    Counter,
    /// The 64-bit `authority << 60 | counter` of the `leb` form.
    Id64,
    /// The 64-bit `counter << 4 | authority` of the `compact` form.
    CounterAndAuthority,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::Era => "era",
            Field::Authority => "authority",
            Field::Counter => "counter",
            Field::Id64 => "id64",
            Field::CounterAndAuthority => "counter<<4|authority",
        })
    }
}

/// [`Gdid::from_parts`](crate::Gdid::from_parts) was given a field out of range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidParts {
    /// The authority is above 15.
    #[error("authority {0} is out of range: the maximum is 15")]
    Authority(u8),
    /// The counter is above `COUNTER_MAX` (2^60 - 1).
    #[error("counter {0} is out of range: the maximum is 1152921504606846975 (2^60 - 1)")]
    Counter(u64),
}

/// A byte slice of the wrong length was given for the 12-byte form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected} bytes, found {found}")]
pub struct InvalidLength {
    /// The length required (12).
    pub expected: usize,
    /// The length given.
    pub found: usize,
}

/// Text that is neither a valid colon form (`era:authority:counter`) nor a valid hex form.
///
/// Byte indexes count from the start of the input as given, whitespace included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The input is empty or only whitespace.
    #[error("empty input: expected era:authority:counter or 24 hex digits")]
    Empty,
    /// The colon form does not have exactly three segments.
    #[error("expected 3 colon-separated segments (era:authority:counter), found {found}")]
    SegmentCount {
        /// How many segments the input has.
        found: usize,
    },
    /// A segment of the colon form is empty or only whitespace.
    #[error("the {field} segment at byte {index} is empty: expected decimal digits")]
    EmptySegment {
        /// Which segment.
        field: Field,
        /// Byte index where the segment starts.
        index: usize,
    },
    /// A segment of the colon form holds something other than decimal digits.
    #[error(
        "invalid character {character:?} at byte {index} in the {field} segment: expected a decimal digit"
    )]
    InvalidDigit {
        /// Which segment.
        field: Field,
        /// The offending character.
        character: char,
        /// Its byte index.
        index: usize,
    },
    /// A segment of the colon form is larger than its field allows.
    #[error("the {field} segment at byte {index} is out of range: the maximum is {max}")]
    OutOfRange {
        /// Which segment.
        field: Field,
        /// Byte index where the segment's digits start.
        index: usize,
        /// The largest value the field takes.
        max: u64,
    },
    /// The hex form does not have exactly 24 digits.
    #[error("expected 24 hex digits (optionally after 0x), found {found}")]
    HexLength {
        /// How many characters stand where the digits should be.
        found: usize,
    },
    /// The hex form holds something other than hex digits.
    #[error("invalid character {character:?} at byte {index}: expected a hex digit")]
    InvalidHexDigit {
        /// The offending character.
        character: char,
        /// Its byte index.
        index: usize,
    },
}

/// A `leb` or `compact` encoding that cannot be decoded.
///
/// Only canonical encodings are accepted: the shortest LEB128 for each value, nothing after a
/// value's last byte that belongs to it. Byte indexes count from the start of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ends before the field's last byte.
    #[error("input ends inside the {field} at byte {index}: the encoding is truncated")]
    Truncated {
        /// The field being read.
        field: Field,
        /// The index one past the last byte available.
        index: usize,
    },
    /// The field is encoded with more bytes than its value needs.
    #[error("the {field} at byte {index} is not in canonical (shortest) LEB128 form")]
    NonCanonical {
        /// The field being read.
        field: Field,
        /// Byte index where the field starts.
        index: usize,
    },
    /// The field's value does not fit in its type (u32 for the era, u64 otherwise).
    #[error("the {field} at byte {index} overflows: the maximum is {max}")]
    Overflow {
        /// The field being read.
        field: Field,
        /// Byte index where the field starts.
        index: usize,
        /// The largest value the field takes.
        max: u64,
    },
}

/// An output slice too short for an encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("buffer too small: the encoding needs {needed} bytes, the buffer has {available}")]
pub struct BufferTooSmall {
    /// Bytes the encoding needs.
    pub needed: usize,
    /// Bytes the buffer has.
    pub available: usize,
}
