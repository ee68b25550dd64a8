//! # gdid-engine
//!
//! Issuing GDIDs: the [`IdGenerator`] trait every strategy implements, the [`Authority`] trait of
//! block allocators, and the [`BlockGenerator`] engine that serves ids from memory, refills in the
//! background, sizes blocks from the consumption rate and fails over between authorities.
//!
//! ```
//! use gdid_engine::{BlockGenerator, MemoryAuthority};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), gdid_engine::Error> {
//! // An authority that lives in this process: for tests and examples. A store's authority
//! // (`gdid::Store`, `gdid_sql::SqlAuthority`, `gdid_mongo::MongoAuthority`) is durable.
//! let ids = BlockGenerator::builder("shop", "orders")
//!     .authority(MemoryAuthority::new(1))
//!     .build()?;
//! let first = ids.next_id().await?;
//! assert!(ids.next_id().await? > first);
//! # Ok(())
//! # }
//! ```
//!
//! Most programs reach it through the `gdid` crate, which opens a store from its URL and builds
//! its generators. Three audiences, three places:
//!
//! - **Using generators**: the names at this crate's root, and [`durability`], [`sizing`],
//!   [`windows`] and [`sequences`].
//! - **Writing a backend** (a store's dialect): [`backend`], which holds the rules a store's
//!   operations must keep and the traits they implement.
//! - **Plumbing the workspace's crates share**: [`plumbing`] (URL redaction, the random source
//!   of the random strategies).
//! - **Testing code built on the engine**: [`testing`] (feature `testing`), authorities that fail
//!   on command.
//!
//! # What it guarantees
//!
//! - **No id is issued twice**, as long as each authority keeps its rule: a block is handed out
//!   only after its high-water mark is durable. The generator also refuses a block that starts
//!   before the end of the previous block the same authority gave it (a counter restored from an
//!   old backup), and never issues [`Gdid::ZERO`](gdid_core::Gdid::ZERO). An authority number
//!   belongs to its store: recorded there on first use and checked before an authority's first
//!   block ([`backend::numbering`]).
//! - **Callers do not wait on the store in the steady state**: the next block is fetched in the
//!   background when the current one passes its low-water mark.
//! - **An outage shorter than the cover time is invisible** (default 60 s; see [`sizing`] for the
//!   rule), provided the consumption rate does not jump above what was measured.
//! - **No stall on a hung authority**: a refill whose authority has not answered within twice its
//!   usual latency plus [`hedge_margin`](GeneratorConfig::hedge_margin) (20 ms) also asks the
//!   next authority, and the first block that comes is served.
//! - **A bounded wait**: when no id can be served, the error comes within the request timeout and
//!   names every authority's cause, also when an authority hangs; at once when every authority
//!   refuses in a way no wait changes ([`Recourse`]).
//!
//! # What it does not
//!
//! - **Gaps**: ids reserved but not served when a process stops are never used (blocks are large
//!   at high rates: up to `rate × cover / low_water_mark` ids).
//! - **Global order**: ids increase per block and, in the default per-thread order, per thread;
//!   two threads interleave, two processes interleave, and ids from authority 2 sort after ids
//!   from authority 1 of the same era whatever their counters. [`IdOrder::Strict`] gives one
//!   increasing order per process while one authority serves.
#![deny(missing_docs, missing_debug_implementations)]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod authority;
pub mod backend;
mod block_generator;
mod coalesce;
mod config;
mod counter;
#[cfg(not(gdid_loom))]
mod dense_index;
pub mod durability;
mod error;
#[cfg(any(test, feature = "testing"))]
mod faults;
mod generator_error;
mod id_generator;
mod memory;
mod per_thread;
pub mod plumbing;
mod provider;
mod ranges;
#[cfg(any(test, feature = "testing"))]
mod refusing;
mod segment;
pub mod sequences;
pub mod sizing;
mod sync;
#[cfg(any(test, feature = "testing"))]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod windows;

pub use authority::{Authority, BLOCK_SIZE_MAX, Block, CounterState, DynAuthority, validate_name};
pub use block_generator::{AuthorityStats, BlockGenerator, BlockGeneratorBuilder, Stats};
pub use coalesce::Coalescing;
pub use config::{GeneratorConfig, HEDGE_EVERY, IdOrder, PROBE_EVERY, Preference};
pub use counter::OneAtATime;
pub use error::{AuthorityError, ErrorKind, InvalidName, NameKind, NumberConflict, Recourse};
pub use generator_error::{AuthorityFailure, Error, ErrorDetail, FailureCause};
pub use id_generator::{DynIdGenerator, IdBatch, IdGenerator, IdRun, SharedIdGenerator};
pub use memory::{MemoryAuthority, MemoryStore};
pub use provider::{GdidProvider, GdidProviderBuilder, Sequenced};
pub use ranges::{LayoutError, Pick, RangeLayout, ShardedCounter};

/// The examples of docs/strategies.md, run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/strategies.md")]
pub struct StrategiesDoctests;
