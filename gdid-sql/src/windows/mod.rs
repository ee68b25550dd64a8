//! Distributed hi-lo windows: every shard (a database) holds windows of values
//! (`window_start..window_end`, handed out up to `next_hi`); a client takes values from the first
//! open window of a shard, in one transaction that locks the window row and never passes its end;
//! an agent keeps every shard supplied with open windows that never overlap.
//!
//! The design is the one of "Designing a Distributed Hi-Lo Strategy" (2008), made safe where that
//! write-up admits it is not:
//!
//! - **Two agents at once never create overlapping windows.** A window is first *claimed* in the
//!   `gdid_window_claims` table of every shard, in one fixed order (by shard label), starting at
//!   the highest window end any shard knows. The claim's primary key is (sequence, window start):
//!   an agent that read a stale high-water mark collides with the claim that raised it, and tries
//!   again from the new one. Claims are never deleted, so they form one chain. A claim whose window
//!   was never created (the agent died in between) is a gap, never an overlap.
//! - **The agent refuses to run when a shard is unreachable**: the highest window end may be on
//!   it.
//! - **Adding a shard is one call** ([`WindowAgent::add_shard`]); the next run supplies it.
//!
//! The state lives in the shards alone: agents keep nothing between runs.

mod agent;
mod generator;
pub(crate) mod shard;

pub use agent::{AgentError, AgentReport, WindowAgent};
pub use generator::SqlWindowGenerator;
pub use shard::Window;
