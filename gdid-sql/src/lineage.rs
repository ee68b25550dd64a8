//! The lineage of the server a statement runs on, as SQL the statement itself evaluates (never a
//! separate query, which a proxy could send to another server): the engine's rule of failovers
//! and restores ([`gdid_engine::backend::lineage`]) in each server's words.
//!
//! | server | lineage | promoted or restored (`switched`) |
//! |---|---|---|
//! | PostgreSQL | system identifier / current timeline (`pg_walfile_name(pg_current_wal_lsn())`: the checkpoint's timeline lags after a promotion) | a timeline above 1 |
//! | MariaDB | `@@server_id`; on Galera the cluster's `wsrep_cluster_state_uuid` | a replica's position (`@@gtid_slave_pos`), or another server's id in `@@gtid_binlog_state` |
//! | MySQL | `@@server_uuid` | another server's UUID in `@@gtid_executed` |
//! | SQLite | none: no replicas (restores: `gdid sequences fence`) | never |

use gdid_engine::backend::lineage::{FENCE_EPOCH_UNIX, FENCE_MIN_INTERVAL_SECS};
use sqlx::AssertSqlSafe;

use crate::statement::with_live_pool;
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
    switched: "(@@gtid_slave_pos <> '' OR CONCAT(',', REPLACE(REPLACE(@@gtid_binlog_state, ' ', \
               ''), '\\n', ''), ',') REGEXP CONCAT(',[0-9]+-(?!', @@server_id, '-)[0-9]+-'))",
    clock: "(UNIX_TIMESTAMP() - 1735689600)",
};

const MYSQL: LineageSql = LineageSql {
    identity: "CONCAT('server_uuid ', @@server_uuid)",
    switched: "(REPLACE(@@global.gtid_executed, @@server_uuid, '') REGEXP '[0-9a-fA-F]{8}-')",
    clock: "(UNIX_TIMESTAMP() - 1735689600)",
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

    /// Whether the row's `lineage` is the server's: equal, or unset on a server that was never
    /// promoted (a row written before lineages were kept, or created here). Never `NULL`.
    pub(crate) fn same(&self) -> String {
        format!(
            "COALESCE(lineage = {identity} OR (lineage IS NULL AND NOT {switched}), FALSE)",
            identity = self.identity,
            switched = self.switched,
        )
    }

    /// Whether the row may move to a new era now: not a `u64` counter's row (keyed 0), and no
    /// lineage change in the last minute.
    pub(crate) fn may_fence(&self) -> String {
        format!(
            "(authority <> 0 AND COALESCE(fenced_at <= {clock} - {FENCE_MIN_INTERVAL_SECS}, TRUE))",
            clock = self.clock,
        )
    }

    /// Whether the row changed lineage in the last minute. Never `NULL`.
    pub(crate) fn recent_fence(&self) -> String {
        format!(
            "COALESCE(fenced_at > {clock} - {FENCE_MIN_INTERVAL_SECS}, FALSE)",
            clock = self.clock,
        )
    }
}
