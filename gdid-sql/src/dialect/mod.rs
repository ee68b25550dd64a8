//! The SQL that differs between dialects, one file each, and what they share.
//!
//! The counter table, `gdid_counters`, holds one row per (authority, scope, sequence): the era
//! and the next counter to hand out, as `CounterState` in gdid-core. A reservation moves the row
//! forward in one atomic statement, committed before the block is returned:
//!
//! ```text
//! if next + size - 1 > COUNTER_MAX:  era = era + 1, next = size      (the block is era+1, 0..size)
//! else:                              next = next + size              (the block is next..next+size)
//! ```
//!
//! A missing row is created first (era 0, next 1: counter 0 of era 0 is never issued) with an
//! insert that ignores a concurrent one, then the reservation is retried.

pub(crate) mod mysql;
pub(crate) mod postgres;
pub(crate) mod sqlite;

use gdid_core::COUNTER_MAX;
use gdid_core::generator::{AuthorityError, Block};

/// The counter table's name.
pub(crate) const COUNTERS: &str = "gdid_counters";

/// `COUNTER_MAX` as SQL binds it (it fits in a BIGINT).
pub(crate) const COUNTER_MAX_SQL: i64 = (1 << 60) - 1;

/// The block a reservation of `size` made, from the row it left: `(era, next)`.
pub(crate) fn block_after(
    authority: u8,
    era: i64,
    next: i64,
    size: u64,
) -> Result<Block, AuthorityError> {
    let era = u32::try_from(era).map_err(|_| {
        if era > i64::from(u32::MAX) {
            AuthorityError::Exhausted
        } else {
            AuthorityError::Corrupt(format!("era {era} is negative"))
        }
    })?;
    let next = u64::try_from(next)
        .map_err(|_| AuthorityError::Corrupt(format!("next counter {next} is negative")))?;
    let start = next.checked_sub(size).ok_or_else(|| {
        AuthorityError::Corrupt(format!(
            "next counter {next} is below the block size {size} just reserved"
        ))
    })?;
    Block::new(era, authority, start, size)
}

/// A size as SQL binds it.
pub(crate) fn size_sql(size: u64) -> Result<i64, AuthorityError> {
    if size == 0 || size > COUNTER_MAX {
        return Err(AuthorityError::InvalidSize(size));
    }
    i64::try_from(size).map_err(|_| AuthorityError::InvalidSize(size))
}

/// Sorts a driver error: a value of the wrong type in the table is a corrupt row, the rest is the
/// store failing.
pub(crate) fn driver_error(error: sqlx::Error) -> AuthorityError {
    match error {
        sqlx::Error::ColumnDecode { .. }
        | sqlx::Error::Decode(_)
        | sqlx::Error::ColumnNotFound(_) => AuthorityError::Corrupt(error.to_string()),
        other => AuthorityError::store(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sql_counter_max_is_counter_max() {
        assert_eq!(u64::try_from(COUNTER_MAX_SQL), Ok(COUNTER_MAX));
    }

    #[test]
    fn rows_turn_into_blocks_or_typed_errors() {
        assert_eq!(block_after(2, 0, 11, 10).unwrap().start, 1);
        assert!(matches!(
            block_after(2, 0, 10, 10),
            Err(AuthorityError::InvalidBlock(_))
        ));
        assert!(matches!(
            block_after(2, 1 << 32, 10, 10),
            Err(AuthorityError::Exhausted)
        ));
        assert!(matches!(
            block_after(2, -1, 10, 10),
            Err(AuthorityError::Corrupt(_))
        ));
        assert!(matches!(
            block_after(2, 0, -1, 10),
            Err(AuthorityError::Corrupt(_))
        ));
        assert!(matches!(
            block_after(2, 0, 5, 10),
            Err(AuthorityError::Corrupt(_))
        ));
        assert!(matches!(size_sql(0), Err(AuthorityError::InvalidSize(0))));
    }
}
