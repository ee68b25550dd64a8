//! The lineage of the server a statement runs on, as SQL the statement itself evaluates (never a
//! separate query, which a proxy could send to another server): the engine's rule of failovers
//! and restores ([`gdid_engine::backend::lineage`]) in each server's words.
//!
//! | server | lineage | its history shows a promotion or a restore (`switched`) |
//! |---|---|---|
//! | PostgreSQL | system identifier / current timeline (`pg_walfile_name(pg_current_wal_lsn())`: the checkpoint's timeline lags after a promotion) | a timeline above 1 |
//! | MariaDB | `@@server_id`; on Galera the cluster's `wsrep_cluster_state_uuid` | a replica's position (`@@gtid_slave_pos`), or another server's id in `@@gtid_binlog_state`; never on Galera, whose nodes hold each other's ids in normal operation |
//! | MySQL | `@@server_uuid` | another server's UUID in `@@gtid_executed` |
//! | SQLite | none: no replicas (restores: `gdid sequences fence`) | never |
//!
//! A row with a lineage of its own is judged by it. A row without one (made here, or not moved
//! since) is judged by the **store record**, `gdid_authority`'s row, read in a subquery of the
//! same statement (never written by it: one row written by every reservation would be a hot
//! spot, and on Galera a certification conflict): its lineage is the server that last settled
//! the store, its floor era the era new GDID rows start at there ([`settle`] moves both, once
//! per switch). A GDID row without a lineage is the server's when the store record is; a `u64`
//! row (no era to start it at) only when the store record has never changed server. The server's
//! own history (`switched`) decides only where the store record has no lineage: written before
//! lineages were kept (its first [`settle`] gives it one), or a store without one (`u64`
//! strategies alone).

use gdid_engine::backend::lineage::{
    CLOCKS_APART_MAX_SECS, FENCE_EPOCH_UNIX, FENCE_MIN_INTERVAL_SECS, seconds_now,
};
use gdid_engine::backend::retry;
use sqlx::AssertSqlSafe;

use crate::error::is_lost_race;
use crate::statement::{sql, with_live_pool};
use crate::store::{Dialect, SqlStore};

/// The SQL of one server kind's lineage: expressions a statement embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineageSql {
    /// The server's lineage, as text.
    pub(crate) identity: &'static str,
    /// Whether its own history shows a promotion or a restore onto another server.
    pub(crate) switched: &'static str,
    /// Its clock in seconds since the fence epoch.
    pub(crate) clock: &'static str,
}

const POSTGRES: LineageSql = LineageSql {
    identity: "((SELECT CAST(system_identifier AS TEXT) FROM pg_control_system()) || '/' || \
               substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))",
    switched: "(substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) <> '00000001')",
    clock: "(CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS BIGINT) - 1735689600)",
};

const MARIADB: LineageSql = LineageSql {
    identity: "IF(@@wsrep_on, CONCAT('galera ', (SELECT VARIABLE_VALUE FROM \
               information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = \
               'WSREP_CLUSTER_STATE_UUID')), CONCAT('server_id ', @@server_id))",
    switched: "(NOT @@wsrep_on AND (@@gtid_slave_pos <> '' OR CONCAT(',', \
               REPLACE(REPLACE(@@gtid_binlog_state, ' ', ''), '\\n', ''), ',') \
               REGEXP CONCAT(',[0-9]+-(?!', @@server_id, '-)[0-9]+-')))",
    clock: "(CAST(UNIX_TIMESTAMP() AS SIGNED) - 1735689600)",
};

const MYSQL: LineageSql = LineageSql {
    identity: "CONCAT('server_uuid ', @@server_uuid)",
    switched: "(REPLACE(@@global.gtid_executed, @@server_uuid, '') REGEXP '[0-9a-fA-F]{8}-')",
    clock: "(CAST(UNIX_TIMESTAMP() AS SIGNED) - 1735689600)",
};

// The epoch above is the engine's, written out so that the statements stay `&'static str`.
const _: () = assert!(FENCE_EPOCH_UNIX == 1_735_689_600);

impl LineageSql {
    /// The lineage SQL of `store`'s server: `None` for SQLite. MariaDB and MySQL share a dialect
    /// but not these variables, so their kind is asked once (`VERSION()`).
    ///
    /// # Errors
    ///
    /// The driver's, when the server cannot be asked.
    pub(crate) async fn of(store: &SqlStore) -> Result<Option<LineageSql>, sqlx::Error> {
        Ok(match store.dialect() {
            Dialect::Sqlite => None,
            Dialect::Postgres => Some(POSTGRES),
            Dialect::MySql => {
                let version: String = with_live_pool!(store, pool => {
                    sqlx::query_scalar(AssertSqlSafe("SELECT CAST(VERSION() AS CHAR)"))
                        .fetch_one(pool)
                        .await
                })?;
                Some(if version.contains("MariaDB") {
                    MARIADB
                } else {
                    MYSQL
                })
            }
        })
    }

    /// Whether a row of `u64`s (a range, a window, a one-at-a-time counter) is the server's: its
    /// `lineage` is, or it has none and the store record is the server's and has never changed
    /// server (a row it lacks may have been issued from elsewhere, and a `u64` has no era to
    /// start it in). Never `NULL`.
    pub(crate) fn same(&self) -> String {
        self.same_when_unset(&self.store_settled_here())
    }

    /// Whether a `gdid_counters` row is the server's: its `lineage` is, or it has none and the
    /// store record is the server's (a GDID row then starts at the store's floor era,
    /// [`floor`](Self::floor)); a one-at-a-time counter's row (keyed 0) as [`same`](Self::same).
    /// Never `NULL`.
    pub(crate) fn same_counter(&self) -> String {
        let unset = format!(
            "CASE WHEN authority = 0 THEN {settled} ELSE {ours} END",
            settled = self.store_settled_here(),
            ours = self.store_is_ours(),
        );
        self.same_when_unset(&unset)
    }

    /// Whether the row's `lineage` is the server's, or unset and `unset` holds.
    fn same_when_unset(&self, unset: &str) -> String {
        format!(
            "COALESCE(lineage = {identity} OR (lineage IS NULL AND {unset}), FALSE)",
            identity = self.identity,
        )
    }

    /// Whether the store record's lineage is the server's; without a store record with a
    /// lineage, whether the server's history shows no switch.
    fn store_is_ours(&self) -> String {
        format!(
            "COALESCE((SELECT ga.lineage = {identity} FROM gdid_authority ga WHERE ga.id = 1), \
             NOT {switched})",
            identity = self.identity,
            switched = self.switched,
        )
    }

    /// As [`store_is_ours`](Self::store_is_ours), and the store record never changed server.
    fn store_settled_here(&self) -> String {
        format!(
            "COALESCE((SELECT ga.lineage = {identity} AND ga.fenced_at IS NULL \
             FROM gdid_authority ga WHERE ga.id = 1), NOT {switched})",
            identity = self.identity,
            switched = self.switched,
        )
    }

    /// The era a GDID row without a lineage starts at: the store record's floor era while the
    /// record is the server's, else 0.
    pub(crate) fn floor(&self) -> String {
        format!(
            "COALESCE((SELECT ga.floor_era FROM gdid_authority ga \
             WHERE ga.id = 1 AND ga.lineage = {identity}), 0)",
            identity = self.identity,
        )
    }

    /// Whether the row may move to a new era now: not a `u64` counter's row (keyed 0), no
    /// lineage change in the last minute, and the server's clock within
    /// [`CLOCKS_APART_MAX_SECS`] of the client's, bound to the one placeholder (seconds since
    /// the fence epoch).
    pub(crate) fn may_fence(&self) -> String {
        format!(
            "(authority <> 0 AND COALESCE(fenced_at <= {clock} - {FENCE_MIN_INTERVAL_SECS}, TRUE) \
             AND {clocks_agree})",
            clock = self.clock,
            clocks_agree = self.clocks_agree(),
        )
    }

    /// Whether the server's clock is within [`CLOCKS_APART_MAX_SECS`] of the client's, bound to
    /// the one placeholder.
    fn clocks_agree(&self) -> String {
        format!(
            "ABS({clock} - ?) <= {CLOCKS_APART_MAX_SECS}",
            clock = self.clock
        )
    }

    /// Whether the row changed lineage in the last minute. Never `NULL`.
    pub(crate) fn recent_fence(&self) -> String {
        format!(
            "COALESCE(fenced_at > {clock} - {FENCE_MIN_INTERVAL_SECS}, FALSE)",
            clock = self.clock,
        )
    }

    /// The statement that settles the store record on this server (see [`settle`]), its one
    /// placeholder the client's clock.
    fn settle_statement(&self) -> String {
        let adopt = format!("(lineage IS NULL AND NOT {})", self.switched);
        format!(
            "UPDATE gdid_authority SET \
             floor_era = CASE WHEN {adopt} THEN COALESCE(floor_era, 0) \
             ELSE GREATEST(COALESCE(floor_era, 0) + 1, {clock}) END, \
             fenced_at = CASE WHEN {adopt} THEN fenced_at ELSE {clock} END, \
             lineage = {identity} \
             WHERE id = 1 AND (lineage IS NULL OR lineage <> {identity}) \
             AND (COALESCE(fenced_at <= {clock} - {FENCE_MIN_INTERVAL_SECS}, TRUE) \
             OR COALESCE(floor_era, 0) < {clock}) AND {clocks_agree}",
            clock = self.clock,
            identity = self.identity,
            clocks_agree = self.clocks_agree(),
        )
    }
}

/// Settles the store record on the server `store` reaches, in one statement the server
/// evaluates: a record of another server's lineage (a failover, a restore onto another server,
/// a logical-replication switch) takes this server's lineage and a new floor era,
/// `max(floor + 1, S)` with S the server's clock, which every GDID row new here starts at; a
/// record without a lineage on a server whose history shows no switch (written before lineages
/// were kept) takes its lineage and keeps its floor. Run when an authority
/// first reaches the server and before a row is created: rows with a lineage of their own are
/// judged by it, and a reservation that finds the record foreign fences its row by itself, so
/// a race with this statement lands at or above the switch's era.
///
/// A record that changed lineage less than a minute ago is left as it is while its floor era is
/// at or above the server's clock (a connection alternating between servers must not push the
/// floor ahead of the clock: a second promotion in a later second moves it to the clock); so is
/// one on a server whose clock is more than [`CLOCKS_APART_MAX_SECS`] from this process's.
///
/// # Errors
///
/// The driver's.
pub(crate) async fn settle(store: &SqlStore, lineage: &LineageSql) -> Result<(), sqlx::Error> {
    let update = sql(store.dialect(), &lineage.settle_statement());
    let settle = || async {
        with_live_pool!(store, pool => {
            sqlx::query(store.statement(&update.0))
                .bind(seconds_now())
                .execute(pool)
                .await
                .map(drop)
        })
    };
    retry::run_driver(retry::ATTEMPTS, settle, is_lost_race).await
}
