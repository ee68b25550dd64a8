//! # gdid-uuid
//!
//! UUID generators behind gdid's [`IdGenerator`](gdid_engine::IdGenerator) trait, so a
//! service can swap UUIDs for GDIDs, counters or random ids without touching its code.
//!
//! | generator | version | order | per id |
//! |---|---|---|---|
//! | [`UuidV7Generator`] | 7: Unix ms, counter, random | strictly increasing per generator, by time across processes | one atomic read-modify-write, a clock read, 64 random bits |
//! | [`UuidV4Generator`] | 4: random | none | 128 random bits |
//! | [`UuidV6Generator`] | 6: 100 ns ticks, clock sequence, node | increasing per generator, by time across nodes | one atomic read-modify-write, a clock read |
//! | [`UuidV1Generator`] | 1: as 6, time fields in the old order | none (the low time bits come first) | as 6 |
//!
//! The time-based generators take no lock: the time and counter of the last id live in one
//! atomic, advanced with one read-modify-write per id (the `uuid` crate's `Uuid::now_v7()` goes
//! through one process-wide mutex instead). They read the time from a [`Clock`] ([`SystemClock`],
//! or a [`ManualClock`] in tests) and stay strictly increasing when it stands still or steps back.
//! Random bits come from each thread's own generator, or from one you give (`with_rng`, e.g. a
//! seeded `StdRng` in tests).
//!
//! ```
//! use gdid_engine::IdGenerator;
//! use gdid_uuid::UuidV7Generator;
//!
//! async fn new_order_id<G: IdGenerator>(ids: &G) -> Result<G::Id, gdid_engine::Error> {
//!     ids.next_id().await
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), gdid_engine::Error> {
//! let ids = UuidV7Generator::new();
//! let id = new_order_id(&ids).await?;
//! let batch = ids.next_ids(100).await?;              // taken from the sequence in one step
//! assert!(batch.iter().all(|later| later > id));
//! # Ok(())
//! # }
//! ```
//!
//! **Storage.** BSON: a `Binary` of subtype 4 with the [`bson`] helpers (feature `bson`). SQL:
//! sqlx's own `uuid` feature encodes `Uuid` as MySQL/MariaDB `BINARY(16)`, PostgreSQL `uuid` and
//! SQLite `BLOB`, and in all three `ORDER BY` sorts v7 and v6 ids by time (tested against the
//! real servers).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs, missing_debug_implementations)]
#![doc(test(attr(deny(warnings))))]

#[cfg(feature = "bson")]
#[path = "bson_support.rs"]
pub mod bson;
mod clock;
mod error;
mod node;
mod sequence;
mod v4;
mod v7;

pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{MAX_BATCH, TimestampOverflow};
pub use node::{Layout, NodeId, NodeUuidGenerator, UuidV1Generator, UuidV6Generator, V1, V6};
pub use uuid::Uuid;
pub use v4::UuidV4Generator;
pub use v7::UuidV7Generator;
