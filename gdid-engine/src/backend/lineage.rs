//! Failovers and restores: the rule that keeps a counter record from handing out again what a
//! lost copy of it handed out.
//!
//! A counter record reserves a block with one durable write, but "durable" is one server's word.
//! A replica promoted before it received the last allocations, or a backup restored from before
//! them, holds the record as it was: reserving from it again would issue the same ids. So:
//!
//! 1. **Each record keeps the lineage of the server that last moved it** (PostgreSQL: its system
//!    identifier and current timeline; MariaDB: `@@server_id`, or the Galera cluster's state
//!    UUID; MySQL: `@@server_uuid`), written by the statement that reserves the block, and
//!    compared **in that same statement** with the lineage of the server running it: never by a
//!    separate query, which a proxy could send elsewhere.
//! 2. **On a mismatch the record moves to a new era** ([`fence_era`]): `max(era + 1, S)`, where S
//!    is the server's clock in seconds since [`FENCE_EPOCH_UNIX`]. Every id after the switch sorts
//!    after every id before it, and two copies promoted from one stale record (a chain, or two
//!    promotions at once) land in different eras unless promoted in the same second. A record
//!    that changed lineage less than [`FENCE_MIN_INTERVAL_SECS`] ago is refused instead
//!    ([`Lineage::Changed`] with `recent`): a connection that alternates between servers must not
//!    burn the era space.
//! 3. **A record with no lineage** (written before lineages were kept, or created on this server)
//!    belongs to the server's lineage while the server's own history shows no switch; on a
//!    server that was promoted (a timeline above 1, another server's id in its GTID state) it is
//!    a record the copy may have received late or never, and moves to a new era too. A missing
//!    authority record there is refused unless its number is given
//!    ([`NumberConflict::RecordLost`](crate::backend::numbering::NumberConflict::RecordLost)).
//! 4. **The `u64` counters** (the one-at-a-time counter, keyed
//!    [`COUNTER_KEY`](crate::backend::numbering::COUNTER_KEY)) have no era to move to: after a
//!    switch they refuse to issue ([`AuthorityError::Switched`](crate::AuthorityError::Switched))
//!    until an operator raises their floor, which adopts the new lineage.
//! 5. **A restore keeps the server's identity** (a dump reloaded into the same server, a file
//!    system snapshot, a copied SQLite file), so nothing can see it: the operator moves the
//!    records to a new era by the same rule ([`fence_era`], `gdid sequences fence`), which is safe
//!    while generators run.
//!
//! Stores whose acknowledged writes survive a failover by themselves keep no lineage: MongoDB's
//! blocks are written with `w: "majority", j: true`, which an election never rolls back. SQLite
//! has no replicas: restores only (item 5).

/// The epoch of the eras a fence moves to: 2025-01-01T00:00:00Z, in seconds since the Unix
/// epoch. Eras are 32-bit, so seconds since it last until 2161.
pub const FENCE_EPOCH_UNIX: i64 = 1_735_689_600;

/// A record whose lineage changed less than this many seconds ago is refused, not moved to yet
/// another era.
pub const FENCE_MIN_INTERVAL_SECS: i64 = 60;

/// The era a fenced record moves to: one past its era, and at least `now` (seconds since
/// [`FENCE_EPOCH_UNIX`], by the clock of the server that moves it).
///
/// ```
/// use gdid_engine::backend::lineage::fence_era;
///
/// assert_eq!(fence_era(0, 59_000_000), 59_000_000); // a fresh record: the clock
/// assert_eq!(fence_era(59_000_000, 59_000_000), 59_000_001); // twice in one second: still above
/// assert_eq!(fence_era(7, -5), 8); // a clock before the epoch cannot lower it
/// ```
pub fn fence_era(era: i64, now: i64) -> i64 {
    era.saturating_add(1).max(now)
}

/// This process's clock in seconds since [`FENCE_EPOCH_UNIX`] (for the stores whose server clock
/// is the process's, and for `gdid sequences fence`): 0 for a clock before 1970.
pub fn seconds_now() -> i64 {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        });
    unix - FENCE_EPOCH_UNIX
}

/// Whether a counter record was last moved by the server that reads it now, as a store tells
/// ([`CounterStore::lineage`](crate::backend::CounterStore::lineage)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lineage {
    /// The store keeps no lineage (its writes survive a failover, or it has no replicas).
    Untracked,
    /// The record is of this server's lineage.
    Same,
    /// The record was last moved by another server (a failover, a restore onto another server),
    /// or has none on a server that was promoted.
    Changed {
        /// Whether it changed lineage less than [`FENCE_MIN_INTERVAL_SECS`] ago.
        recent: bool,
    },
}
