//! Distributed hi-lo windows on SQL shards: the claim protocol and the client's walk over the
//! shards are gdid-core's ([`gdid_core::generator::windows`]); this module holds the two tables
//! of a shard and the statements on them ([`shard`]).
//!
//! ```sql
//! CREATE TABLE gdid_windows (sequence_name VARCHAR(80), window_start BIGINT, window_end BIGINT,
//!     next_hi BIGINT, PRIMARY KEY (sequence_name, window_start));
//! CREATE TABLE gdid_window_claims (sequence_name VARCHAR(80), window_start BIGINT,
//!     window_end BIGINT, PRIMARY KEY (sequence_name, window_start));
//! ```

pub(crate) mod shard;

use gdid_core::generator::windows;

use crate::store::SqlStore;

/// Keeps every SQL shard supplied with open windows that never overlap, even two agents at once
/// (see [`gdid_core::generator::windows`] for the protocol).
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
