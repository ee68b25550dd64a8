//! [`SqlCounter`]: the one-at-a-time counter on a SQL store. The rule (continuous values, never
//! past 2^60) is gdid-engine's [`OneAtATime`]; `SqlAuthority` gives it the store's row
//! (every `CounterStore` is a `CounterRow`, keyed `COUNTER_KEY`).

use gdid_engine::OneAtATime;

use crate::authority::SqlAuthority;

/// A `u64` counter incremented in the database for every id: continuous (1, 2, 3, …) and
/// monotonic, correct under any concurrency, and one database round trip per id. The baseline
/// the block strategies are measured against. `SqlCounter::new(authority, scope, sequence)`.
///
/// It shares the `gdid_counters` table with [`SqlAuthority`]: its row per (scope, sequence) is
/// keyed by authority 0 whatever the store's authority number, so renumbering a store never
/// starts a counter again. Its row starts after the sequence's other rows (a counter made, before
/// it was keyed 0, from an authority numbered otherwise goes on from where it was). A store that
/// is authority 0 draws its blocks of a sequence from the same row: both stay unique.
pub type SqlCounter = OneAtATime<SqlAuthority>;
