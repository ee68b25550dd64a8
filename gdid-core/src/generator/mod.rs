//! Issuing GDIDs (feature `generator`): the [`IdGenerator`] trait every strategy implements, the
//! [`Authority`] trait of block allocators, and the [`BlockGenerator`] engine that serves ids from
//! memory, refills in the background, sizes blocks from the consumption rate and fails over
//! between authorities.
//!
//! # What it guarantees
//!
//! - **No id is issued twice**, as long as each authority keeps its rule: a block is handed out
//!   only after its high-water mark is durable. The generator also refuses a block that starts
//!   before the end of the previous block the same authority gave it (a counter restored from an
//!   old backup), and never issues [`Gdid::ZERO`](crate::Gdid::ZERO). An authority number
//!   belongs to its store: recorded there on first use and checked before an authority's first
//!   block ([`numbering`]).
//! - **Callers do not wait on the store in the steady state**: the next block is fetched in the
//!   background when the current one passes its low-water mark.
//! - **An outage shorter than the cover time is invisible** (default 60 s; see [`sizing`] for the
//!   rule), provided the consumption rate does not jump above what was measured.
//! - **A bounded wait**: when no id can be served, the error comes within the request timeout and
//!   names every authority's cause, also when an authority hangs.
//!
//! # What it does not
//!
//! - **Gaps**: ids reserved but not served when a process stops are never used (blocks are large
//!   at high rates: up to `rate × cover / low_water_mark` ids).
//! - **Global order**: ids increase per block and, in the default per-thread order, per thread;
//!   two threads interleave, two processes interleave, and ids from authority 2 sort after ids
//!   from authority 1 of the same era whatever their counters. [`IdOrder::Strict`] gives one
//!   increasing order per process while one authority serves.
mod authority;
mod block_generator;
mod config;
mod counter;
mod counter_store;
pub mod durability;
mod error;
mod faults;
mod id_generator;
pub mod lineage;
mod memory;
pub mod numbering;
mod provider;
mod random;
pub mod ranges;
mod redact;
pub mod retry;
mod segment;
pub mod sequences;
pub mod sizing;
mod sync;
pub mod windows;

pub use authority::{Authority, Block, BoxFuture, CounterState, DynAuthority, validate_name};
pub use block_generator::{AuthorityStats, BlockGenerator, Stats};
pub use config::{BlockGeneratorBuilder, GeneratorConfig, IdOrder, PROBE_EVERY, Preference};
pub use counter::{CounterRow, OneAtATime};
pub use counter_store::{
    ADVANCED_ERA, Allocations, CounterFields, CounterKey, CounterStart, CounterStore, FieldError,
    Numbering, STORED_COUNTER_MAX, STORED_ERA, STORED_NEXT, StoredCounter, StoredInt,
    check_spelling, counter_values, floor_of, give_back, in_record, raise_floor, reserve,
    stored_size,
};
pub use error::{
    AuthorityError, AuthorityFailure, Error, ErrorKind, FailureCause, InvalidName, NameKind,
    StoreError,
};
pub use faults::{Faults, FaultyAuthority, InjectedFault, Latency};
pub use id_generator::{DynIdGenerator, IdBatch, IdGenerator, IdRun, SharedIdGenerator};
pub use memory::MemoryAuthority;
pub use provider::{GdidProvider, GdidProviderBuilder, Sequenced};
pub use random::RandomSource;
pub use ranges::{
    LAYOUT_FIELDS, LayoutError, Pick, RangeFields, RangeLayout, RangeState, RangeStore,
    ShardedCounter,
};
pub use redact::redact;
