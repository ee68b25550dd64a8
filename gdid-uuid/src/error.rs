//! The errors of the UUID generators.

use gdid_engine::Error;

/// The time field of the UUID version is used up: the clock, or the sequence running ahead of
/// it, passed the last time the version can hold (v7: 2^48 ms after 1970, in the year 10889; v1
/// and v6: 2^60 × 100 ns after 1582-10-15, in the year 5236). A clock that reads so far ahead is
/// broken; no UUID is made rather than a wrong one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the UUID v{version} timestamp field is used up: the clock reads past the last time it can hold"
)]
pub struct TimestampOverflow {
    pub(crate) version: u8,
}

impl TimestampOverflow {
    /// The UUID version: 1, 6 or 7.
    pub fn version(&self) -> u8 {
        self.version
    }
}

impl From<TimestampOverflow> for Error {
    fn from(e: TimestampOverflow) -> Self {
        Error::exhausted(e.to_string())
    }
}

/// The most UUIDs one `next_ids` call returns: they are materialized (24 bytes each in the
/// batch, 24 MiB at most).
pub const MAX_BATCH: u64 = 1 << 20;

/// Checks the count of a `next_ids` call.
pub(crate) fn check_count(n: u64) -> Result<(), Error> {
    if n == 0 || n > MAX_BATCH {
        return Err(Error::invalid_count(n, "ask for 1 to 1,048,576 UUIDs"));
    }
    Ok(())
}
