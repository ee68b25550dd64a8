//! # gdid-sql
//!
//! GDID authorities and id strategies on MySQL/MariaDB, PostgreSQL and SQLite, on sqlx. Each
//! driver comes with its feature, `mysql`, `postgres` and `sqlite` (all three by default): a URL
//! of a driver left out is [`Error::DriverDisabled`].
//!
//! - [`SqlAuthority`]: blocks of GDID counters for the `BlockGenerator` engine of gdid-engine, one
//!   atomic statement per block (`UPDATE … RETURNING` on PostgreSQL and SQLite, `LAST_INSERT_ID`
//!   on MySQL), committed before the block is handed out;
//! - [`SqlCounter`]: a `u64` incremented in the database for every id, the naive baseline;
//! - [`SqlShardedCounter`]: N counter rows, each owning a fixed range (fixed-digit ids), picked at
//!   random or in turn, an exhausted range skipped;
//! - [`SqlWindowGenerator`] and [`WindowAgent`]: distributed hi-lo windows over several shards,
//!   with an agent that never creates overlapping windows, even two agents at once.
//!
//! ```no_run
//! use gdid_engine::BlockGenerator;
//! use gdid_sql::{SqlAuthority, SqlCounter};
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Each store is one authority: its number is recorded in it on first use, and checked here.
//! let primary = SqlAuthority::connect("mysql://root@127.0.0.1:3306/test", 1).await?;
//! let fallback = SqlAuthority::connect("postgres://postgres@127.0.0.1:5432/test", 2).await?;
//! let ids = BlockGenerator::builder("shop", "order")
//!     .authority(primary.clone())
//!     .authority(fallback)
//!     .build()?;
//! let order_id = ids.next_id().await?;
//!
//! // The naive baseline: one round trip per id, continuous 1, 2, 3, ...
//! let invoice_numbers = SqlCounter::new(primary, "shop", "invoice");
//! # let _ = (order_id, invoice_numbers);
//! # Ok(())
//! # }
//! ```
//!
//! The table (created by [`SqlAuthority::ensure_schema`], or by hand):
//!
//! ```sql
//! CREATE TABLE gdid_counters (
//!     authority     SMALLINT    NOT NULL,
//!     scope_name    VARCHAR(80) NOT NULL,
//!     sequence_name VARCHAR(80) NOT NULL,
//!     era           BIGINT      NOT NULL,
//!     next_counter  BIGINT      NOT NULL,
//!     PRIMARY KEY (authority, scope_name, sequence_name)
//! );
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs, missing_debug_implementations)]

#[cfg(not(any(feature = "mysql", feature = "postgres", feature = "sqlite")))]
compile_error!("gdid-sql needs one of its features at least: mysql, postgres, sqlite");

mod authority;
mod counter;
mod counters;
mod dialect;
mod durability;
mod error;
mod lineage;
#[cfg(feature = "mysql")]
mod mysql_session;
mod numbering;
#[cfg(feature = "postgres")]
mod pg_session;
mod schema;
mod sharded;
mod sharded_rows;
mod statement;
mod store;
mod stored;
mod tables;
mod windows;

pub use authority::SqlAuthority;
pub use counter::SqlCounter;
pub use dialect::Dialect;
pub use error::{Error, driver_kind, is_duplicate_key};
pub use gdid_engine::plumbing::redact;
pub use gdid_engine::windows::{AgentReport, Window};
pub use gdid_engine::{LayoutError, Pick, RangeLayout};
#[cfg(feature = "mysql")]
pub use mysql_session::SQL_MODE;
pub use numbering::SqlNumberRecord;
#[cfg(feature = "postgres")]
pub use pg_session::{AmbiguousSchema, PgSchema, SEARCH_PATH, UnreachedSchema, UntrustedTable};
pub use schema::SchemaRefused;
pub use sharded::{SqlRanges, SqlShardedCounter};
pub use store::{SqlStore, reachable};
pub use tables::Schema;
pub use windows::{AgentError, SqlWindowGenerator, WindowAgent};
