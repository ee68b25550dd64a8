//! # gdid-mongo
//!
//! GDID authorities and id strategies on MongoDB, with the official driver (bson 3):
//!
//! - [`MongoAuthority`]: blocks of GDID counters for the `BlockGenerator` engine of gdid-engine,
//!   one `findOneAndUpdate` with a pipeline update per block (era rollover included), write
//!   concern `majority` + journal by default;
//! - [`MongoCounter`]: one round trip per id, the naive baseline;
//! - [`MongoShardedCounter`]: N counter documents each owning a fixed range (fixed-digit ids);
//! - [`MongoWindowGenerator`] and [`MongoWindowAgent`]: distributed hi-lo windows over several
//!   shard databases, with an agent that never creates overlapping windows, even two at once;
//! - [`ObjectIdGenerator`]: driver-side `ObjectId`s;
//! - [`is_duplicate_key`], [`ensure_unique_index`] and [`ProxyCollection`] (an id claimed in a
//!   small collection keyed by it, where a unique index cannot be used): uniqueness helpers.
//!
//! ```no_run
//! use gdid_engine::BlockGenerator;
//! use gdid_mongo::MongoAuthority;
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let client = mongodb::Client::with_uri_str("mongodb://127.0.0.1:27017").await?;
//! let authority = MongoAuthority::new(&client.database("app"), "gdid_counters", 1)?;
//! let ids = BlockGenerator::builder("shop", "order").authority(authority).build()?;
//! println!("{}", ids.next_id().await?);
//! # Ok(())
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs, missing_debug_implementations)]

mod authority;
mod counter;
mod cursor;
mod durability;
mod error;
mod numbering;
mod proxy;
mod sharded;
mod unique;
mod windows;

pub use authority::MongoAuthority;
pub use counter::{MongoCounter, ObjectIdGenerator};
pub use durability::durability;
pub use error::Error;
pub use gdid_engine::windows::{AgentError, AgentReport, Window};
pub use gdid_engine::{LayoutError, Pick, RangeLayout};
pub use numbering::MongoNumberRecord;
pub use proxy::{ClaimError, ProxyCollection};
pub use sharded::{MongoRanges, MongoShardedCounter};
pub use unique::{DUPLICATE_KEY, ensure_unique_index, is_duplicate_key};
pub use windows::{MongoWindowAgent, MongoWindowGenerator, MongoWindowShard, WindowShardError};
