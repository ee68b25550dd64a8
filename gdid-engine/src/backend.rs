//! Writing a backend: what a store's dialect implements, and the rules it gets from the engine.
//!
//! A backend (gdid-sql, gdid-mongo, or one of your own) speaks a store's language; the engine keeps
//! every rule that keeps ids unique, once. A backend implements a handful of store operations, each
//! a single statement of its dialect, and is handed the rest:
//!
//! | strategy | the backend implements | the engine gives it |
//! |---|---|---|
//! | blocks of GDIDs | [`CounterStore`] (a conditional write, a read, an insert-if-absent) | [`Authority`](crate::Authority) for any counter store: names checked, the authority number claimed ([`numbering`]), sizes checked, lost races retried ([`retry`]), stored values decoded and validated ([`StoredInt::decode`], [`counter_values`]), failovers fenced ([`lineage`]) |
//! | one-at-a-time counters | [`CounterRow`] | [`OneAtATime`](crate::OneAtATime) |
//! | sharded counter ranges | [`RangeStore`] | [`ShardedCounter`](crate::ShardedCounter) |
//! | hi-lo windows | [`WindowShard`](crate::windows::WindowShard) | [`WindowGenerator`](crate::windows::WindowGenerator) and [`WindowAgent`](crate::windows::WindowAgent) |
//!
//! Which store a URL names is read once, from the one list of schemes
//! ([`plumbing::scheme`](crate::plumbing::scheme)).
//!
//! The workspace's conformance suite (gdid-testkit, not published) runs every one of these rules
//! against each backend's real store.

mod counter_row;
pub(crate) mod counter_store;
pub mod lineage;
pub mod numbering;
pub mod retry;

pub use crate::authority::{BoxFuture, validate_name};
pub use crate::error::DriverError;
pub use crate::ranges::{LAYOUT_FIELDS, RangeFields, RangeState, RangeStore};
pub use counter_row::CounterRow;
pub use counter_store::{
    ADVANCED_ERA, Allocations, CounterFields, CounterKey, CounterStart, CounterStore, FieldError,
    Numbering, STORED_AUTHORITY, STORED_COUNTER_MAX, STORED_ERA, STORED_NEXT, StoredCounter,
    StoredInt, check_spelling, counter_values, floor_of, give_back, in_record, raise_floor,
    reserve, stored_size,
};
