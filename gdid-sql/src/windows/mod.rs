//! Distributed hi-lo windows on SQL shards: the claim protocol and the client's walk over the
//! shards are gdid-engine's ([`gdid_engine::windows`]); this module holds the three tables
//! of a shard and the statements on them ([`shard`]).
//!
//! ```sql
//! CREATE TABLE gdid_windows (sequence_name VARCHAR(80), window_start BIGINT, window_end BIGINT,
//!     next_hi BIGINT, PRIMARY KEY (sequence_name, window_start));
//! CREATE TABLE gdid_window_claims (sequence_name VARCHAR(80), window_start BIGINT,
//!     window_end BIGINT, PRIMARY KEY (sequence_name, window_start));
//! CREATE TABLE gdid_window_store (id SMALLINT PRIMARY KEY, identity VARCHAR(40));
//! ```
//!
//! `gdid_window_store` holds one row (id 1): the store's random identity, written by the first
//! agent that prepares the store; it orders every agent's claims alike, whatever URL names the
//! store. A window end is compared only when every window and claim row of the sequence holds
//! non-negative integers: SQLite stores text in a `BIGINT` column and orders it above every
//! integer, so such a row is an error naming it, never the high-water mark.

pub(crate) mod shard;

use gdid_engine::windows;

use crate::store::SqlStore;

/// Keeps every SQL shard supplied with open windows that never overlap, even two agents at once
/// (see [`gdid_engine::windows`] for the protocol).
///
/// ```no_run
/// use gdid_sql::{SqlStore, WindowAgent};
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut agent = WindowAgent::new(1_000_000, 2)?;
/// agent.add_shard("eu", SqlStore::connect("mysql://root@127.0.0.1:3306/test").await?).await?;
/// agent.add_shard("us", SqlStore::connect("postgres://postgres@127.0.0.1:5432/test").await?).await?;
/// let report = agent.run_once(&["order"]).await?;
/// println!("opened {} windows", report.created.len());
/// # Ok(())
/// # }
/// ```
pub type WindowAgent = windows::WindowAgent<SqlStore>;

/// Why the [`WindowAgent`] did not run, or stopped.
pub type AgentError = windows::AgentError<sqlx::Error>;

/// `u64` ids from the open windows of SQL shards, `batch` values per transaction; a window
/// another client holds is passed over for the next open one.
pub type SqlWindowGenerator = windows::WindowGenerator<SqlStore>;
