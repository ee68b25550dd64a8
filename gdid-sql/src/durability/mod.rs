//! Whether a SQL store's acknowledged blocks survive a crash and a failover
//! ([`SqlStore::durability`]): each server's settings read through the store's own pool (so a
//! session setting such as PostgreSQL's `synchronous_commit` is the one its writes use) and
//! judged by the rules of [`gdid_engine::durability`].
//!
//! The judging is pure (`judge_*`), so that every verdict is tested on its values as well as on
//! private servers started with them.

#[cfg(feature = "mysql")]
mod galera;
#[cfg(feature = "mysql")]
mod mysql;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "postgres")]
mod standby_names;

use gdid_engine::durability::Durability;

use crate::store::SqlStore;

/// What a failover that loses blocks costs, for the meanings of
/// [`Verdict::LostOnFailover`](gdid_engine::durability::Verdict::LostOnFailover).
#[cfg_attr(not(any(feature = "mysql", feature = "postgres")), allow(dead_code))]
const FAILOVER_COST: &str = "GDIDs stay unique, moved to a new era as the promoted server is \
                             another lineage; one-at-a-time counters, ranges and windows refuse \
                             until skipped forward";

impl SqlStore {
    /// Reads the settings the store's uniqueness relies on from its server, and judges each:
    /// whether an acknowledged block can be lost or come back after a crash or a failover.
    ///
    /// | server | settings |
    /// |---|---|
    /// | PostgreSQL | `fsync`, `full_page_writes`, `synchronous_commit`, `synchronous_standby_names`, the streaming standbys (`pg_stat_replication`), whether it is itself a standby |
    /// | MariaDB, MySQL | `innodb_flush_log_at_trx_commit`, `sync_binlog` (with a binary log), `read_only`, whether it replicates from another server, its replicas and semi-synchronous replication (enabled, wait point, timeout) |
    /// | a Galera node (MariaDB, `wsrep_on`) | its cluster (`wsrep_cluster_status`, `wsrep_cluster_size`, `wsrep_cluster_state_uuid`), its state (`wsrep_local_state_comment`, `wsrep_ready`), then the settings above as Galera makes them matter: `innodb_flush_log_at_trx_commit` against a crash of every node at once, `sync_binlog` and `read_only` not (the cluster recovers a node, and certifies every write) |
    /// | SQLite | the file (in memory, or on a RAM file system), `journal_mode`, `synchronous` |
    ///
    /// # Errors
    ///
    /// The driver's, when the server cannot be asked.
    pub async fn durability(&self) -> Result<Durability, sqlx::Error> {
        match self {
            #[cfg(feature = "postgres")]
            SqlStore::Postgres(pool, _) => postgres::read(pool).await,
            #[cfg(feature = "mysql")]
            SqlStore::MySql(pool) => mysql::read(pool).await,
            #[cfg(feature = "sqlite")]
            SqlStore::Sqlite(pool) => sqlite::read(pool).await,
        }
    }
}

/// A MySQL/MariaDB boolean variable cast to text, as both a server's and a Galera node's
/// settings are read: `ON` (MariaDB) or `1` (MySQL).
#[cfg(feature = "mysql")]
fn is_on(value: &str) -> bool {
    value == "1" || value.eq_ignore_ascii_case("ON")
}

/// The verdict of setting `name` in `report`, for the tests of each server's module.
#[cfg(test)]
fn verdict_of(report: &Durability, name: &str) -> gdid_engine::durability::Verdict {
    report
        .settings
        .iter()
        .find(|setting| setting.name == name)
        .unwrap_or_else(|| panic!("no setting {name} in {report}"))
        .verdict
}
