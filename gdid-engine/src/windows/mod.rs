//! Distributed hi-lo windows: every shard (a database) holds windows of values
//! (`start..end`, handed out up to `next_hi`); a client takes values from the first open window
//! of a shard in one atomic step that never passes the window's end; an agent keeps every shard
//! supplied with open windows that never overlap. The store-independent part: the agent's claim
//! protocol and the client's walk over the shards; a backend supplies the operations of
//! [`WindowShard`] (gdid-sql on SQL tables, gdid-mongo on collections).
//!
//! The design is the classic distributed hi-lo (an agent opens windows of values on every shard
//! ahead of the clients), made safe where the classic design is not:
//!
//! - **Two agents at once never create overlapping windows.** A window is first *claimed* on
//!   every shard, in one order common to every agent, starting at the highest window end any
//!   shard knows. A claim is keyed by (sequence, window start) and a second claim of the same key
//!   fails: an agent that read a stale high-water mark collides with the claim that raised it,
//!   and tries again from the new one. Claims are never deleted, so they form one chain. A claim
//!   whose window was never opened (the agent died in between) is a gap, never an overlap.
//! - **The order of the claims is the order of the stores' identities**, never of their names.
//!   Every agent claims first on the same shard, so two agents that read the same high-water
//!   mark collide there and only one goes on. With two orders, agent P (order X, Y) and agent Q
//!   (order Y, X) both win their first shard and lose their second, leaving X and Y with
//!   different high-water marks; a third agent reading X after P's claim but Y before Q's, and a
//!   fourth reading both after, then claim windows that overlap, on every shard, and both open
//!   them. Two agents in lockstep can also lose to each other forever. A name cannot give the
//!   common order: one store has many (`sqlite:/a/./x.sqlite` and `sqlite:/a/x.sqlite`,
//!   `127.0.0.1` and `localhost`). So each store records a random identity the first time an
//!   agent prepares it ([`WindowShard::identity`]), the same under every name; the agent claims
//!   in identity order and refuses one store given twice ([`AgentError::Config`]). Labels only
//!   name shards in messages.
//! - **Window ends are compared as numbers**: a shard answers [`WindowShard::high_water`] with
//!   an error naming the row when a stored window end is not an integer, never with that value.
//! - **No window holds 0**: the first window of a sequence starts at [`FIRST_VALUE`], and the
//!   [`WindowGenerator`] never serves a value below it (a window written before that rule may
//!   start at 0).
//! - **The agent refuses to run when a shard is unreachable**: the highest window end may be on
//!   it.
//! - **Adding a shard is one call** ([`WindowAgent::add_shard`]); the next run supplies it.
//!
//! The state lives in the shards alone: agents keep nothing between runs.

mod agent;
mod generator;

use std::future::Future;

pub use agent::{AgentError, AgentReport, WindowAgent};
pub use generator::WindowGenerator;

#[cfg(test)]
mod tests;

/// The largest window end: windows are stored as signed 64-bit integers (SQL `BIGINT`, BSON
/// `Int64`).
pub const VALUE_MAX: u64 = i64::MAX as u64;

/// The smallest value a window serves: 0 is never an id.
pub const FIRST_VALUE: u64 = 1;

/// An open or used window: `start..end`, handed out up to `next_hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First value of the window.
    pub start: u64,
    /// One past the last value.
    pub end: u64,
    /// The next value to hand out (`end` when the window is used up).
    pub next_hi: u64,
}

/// The operations one shard runs for the [`WindowAgent`] and the [`WindowGenerator`]. Every
/// value passed in is at most [`VALUE_MAX`].
pub trait WindowShard: Send + Sync {
    /// The store's error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Whether `error` says that stored windows cannot be right, rather than that the store
    /// failed: the [`WindowGenerator`] then reports
    /// [`ErrorDetail::Corrupt`](crate::ErrorDetail::Corrupt). `false` unless the shard says so.
    fn is_corrupt(error: &Self::Error) -> bool {
        let _ = error;
        false
    }

    /// Whether `error` says that the shard's open windows were last moved on another database
    /// server (a failover to a replica, a restore: see [`lineage`](crate::backend::lineage)),
    /// so that none is taken from until an operator runs [`skip`](Self::skip): the
    /// [`WindowGenerator`] then reports [`ErrorDetail::Switched`](crate::ErrorDetail::Switched)
    /// when no other shard serves. `false` unless the shard says so.
    fn is_switched(error: &Self::Error) -> bool {
        let _ = error;
        false
    }

    /// The operator's answer to a switch under this shard (a failover to a replica, a restore):
    /// closes the open windows of `sequence` (their values may have been handed out by the lost
    /// copy, or after the backup) and claims the `by` values above the shard's high-water mark
    /// (windows and claims the lost copy made after what this copy holds), so the agent opens
    /// the next windows past them. Closing loses values, never repeats one. Safe while
    /// generators and agents run. How many windows were closed, or `None` (the default) when
    /// the shard's writes survive a failover and it does not do this.
    fn skip(
        &self,
        sequence: &str,
        by: u64,
    ) -> impl Future<Output = Result<Option<u64>, Self::Error>> + Send {
        let _ = (sequence, by);
        std::future::ready(Ok(None))
    }

    /// Creates the tables or collections and indexes the shard needs, if missing.
    fn prepare(&self) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// The store's identity: records `candidate` in the store unless an identity is recorded
    /// already (one insert-if-absent), and returns the one recorded (read back). It is the same
    /// whatever name or URL the store is reached by, so it orders the claims of every agent
    /// alike. Called after [`prepare`](Self::prepare); `candidate` is random.
    fn identity(&self, candidate: &str)
    -> impl Future<Output = Result<String, Self::Error>> + Send;

    /// Answers a trivial request: the shard is reachable.
    fn ping(&self) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Every sequence with a window or a claim on this shard.
    fn sequences(&self) -> impl Future<Output = Result<Vec<String>, Self::Error>> + Send;

    /// The highest window end this shard knows of for `sequence`, windows and claims alike (0
    /// when none), compared as numbers: a stored end that is not an integer is an error naming
    /// its row, never the answer.
    fn high_water(&self, sequence: &str) -> impl Future<Output = Result<u64, Self::Error>> + Send;

    /// How many windows of `sequence` still have values to hand out.
    fn open_windows(&self, sequence: &str)
    -> impl Future<Output = Result<u64, Self::Error>> + Send;

    /// Every window of `sequence` on this shard, by start.
    fn windows(
        &self,
        sequence: &str,
    ) -> impl Future<Output = Result<Vec<Window>, Self::Error>> + Send;

    /// Records the claim of `start..end`, durably; `false` when a claim of `start` exists already.
    fn claim(
        &self,
        sequence: &str,
        start: u64,
        end: u64,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send;

    /// Opens the window `start..end` (after its claim succeeded on every shard).
    fn open(
        &self,
        sequence: &str,
        start: u64,
        end: u64,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Deletes the used-up windows of `sequence` (`next_hi == end`) but the `keep` with the
    /// highest starts, so that a long-running shard does not slow down: how many were deleted.
    /// Never an open window, never a claim: the claims are the chain that keeps two agents from
    /// overlapping and hold the high-water mark, which pruning leaves as it is.
    fn prune(
        &self,
        sequence: &str,
        keep: u64,
    ) -> impl Future<Output = Result<u64, Self::Error>> + Send;

    /// Takes up to `n` values from the first open window of `sequence` in one atomic step that
    /// never passes the window's end: `(first, count)` with `count ≥ 1`, or `None` when no window
    /// is open.
    fn take(
        &self,
        sequence: &str,
        n: u64,
    ) -> impl Future<Output = Result<Option<(u64, u64)>, Self::Error>> + Send;
}
