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
//! 3. **A record with no lineage** (written before lineages were kept, or created and not moved
//!    since) is judged by the **store record** (the record of the store's authority number),
//!    which carries a lineage and a floor era: a GDID record is the server's when the store
//!    record is, and starts at its floor era; a `u64` record only while the store record has never
//!    changed server. The first write that finds the store record of another lineage moves it to
//!    this server's and a new floor era ([`fence_era`] of the floor), so every sequence new after
//!    a switch starts above every era the old server used, whichever kind of switch it was (a
//!    promotion, a logical-replication subscriber, a restore onto another server), and a server
//!    that never switched (every node of a Galera cluster) fences nothing. The server's own
//!    history (a timeline above 1, another server's id in its GTID state) decides only for a
//!    store record without a lineage. A missing authority record on a server whose history shows
//!    a switch is refused unless its number is given
//!    ([`NumberConflict::RecordLost`](crate::backend::numbering::NumberConflict::RecordLost)).
//!    A move to a new era is refused while the server's clock and the client's are more than
//!    [`CLOCKS_APART_MAX_SECS`] apart ([`Lineage::ClocksApart`]).
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
    /// or has none on a store that changed server.
    Changed {
        /// Whether it changed lineage less than [`FENCE_MIN_INTERVAL_SECS`] ago.
        recent: bool,
    },
    /// The record must move to a new era, which the server's clock gives, but that clock and
    /// this process's are more than [`CLOCKS_APART_MAX_SECS`] apart: a clock far ahead would
    /// move the record past the last era for good, so it is not moved.
    ClocksApart {
        /// The server's clock, in seconds since [`FENCE_EPOCH_UNIX`].
        server: i64,
        /// This process's clock, in seconds since [`FENCE_EPOCH_UNIX`].
        here: i64,
    },
}

/// A store refuses to move a record to a new era when the server's clock and this process's
/// are further apart than this, in seconds ([`Lineage::ClocksApart`]).
pub const CLOCKS_APART_MAX_SECS: i64 = 3_600;
