//! MariaDB's and MySQL's settings: `innodb_flush_log_at_trx_commit`, `sync_binlog`,
//! `read_only`, replication threads, replicas and semi-synchronous replication; on a Galera
//! node, its cluster's and its own state too, and the crash settings as Galera makes them matter
//! ([`galera`]).

use gdid_engine::durability::{Durability, Setting, Verdict};
use sqlx::{MySqlPool, Row};

use super::galera::{self, GaleraNode};
use super::{FAILOVER_COST, is_on};

/// A semi-synchronous timeout this long (a day, in ms) is taken as "never falls back".
const SEMI_SYNC_PATIENT_MS: u64 = 86_400_000;

/// What MariaDB or MySQL said. Semi-synchronous replication's variables are named `…_master_…`
/// on MariaDB and older MySQL, `…_source_…` on MySQL 8.0.26 and later.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct MySqlSettings {
    version: String,
    flush_log_at_trx_commit: String,
    log_bin: bool,
    sync_binlog: String,
    read_only: bool,
    /// Replication threads applying another server's log here (`None`: could not be read).
    replicating: Option<u64>,
    /// Replicas reading this server's binary log now (`Binlog Dump` threads).
    replicas: u64,
    /// `master` or `source`, as the server names its semi-synchronous variables.
    semi_sync_word: String,
    semi_sync_enabled: bool,
    semi_sync_wait_point: String,
    semi_sync_timeout_ms: u64,
    /// Replicas acknowledging semi-synchronously now.
    semi_sync_clients: u64,
    /// `Some` on a node of a Galera cluster.
    galera: Option<GaleraNode>,
}

pub(super) async fn read(pool: &MySqlPool) -> Result<Durability, sqlx::Error> {
    let mut connection = pool.acquire().await?;
    let row = sqlx::query(
        "SELECT CAST(VERSION() AS CHAR), CAST(@@innodb_flush_log_at_trx_commit AS CHAR), \
         CAST(@@log_bin AS CHAR), CAST(@@sync_binlog AS CHAR), CAST(@@read_only AS CHAR), \
         (SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%')",
    )
    .fetch_one(&mut *connection)
    .await?;
    let variables = name_values(
        sqlx::query(
            "SHOW GLOBAL VARIABLES WHERE Variable_name LIKE 'rpl\\_semi\\_sync\\_%\\_enabled' \
             OR Variable_name LIKE 'rpl\\_semi\\_sync\\_%\\_wait\\_point' \
             OR Variable_name LIKE 'rpl\\_semi\\_sync\\_%\\_timeout' \
             OR Variable_name IN ('wsrep_on', 'wsrep_provider')",
        )
        .fetch_all(&mut *connection)
        .await?,
    )?;
    let status = name_values(
        sqlx::query(
            "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Rpl\\_semi\\_sync\\_%\\_clients' \
             OR Variable_name IN ('Slaves_running', 'wsrep_cluster_status', \
             'wsrep_cluster_size', 'wsrep_local_state_comment', 'wsrep_ready', \
             'wsrep_cluster_state_uuid')",
        )
        .fetch_all(&mut *connection)
        .await?,
    )?;
    let version: String = row.try_get(0)?;
    let replicating = if version.contains("MariaDB") {
        status("Slaves_running").and_then(|n| n.parse().ok())
    } else {
        sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM performance_schema.replication_applier_status \
             WHERE SERVICE_STATE = 'ON'",
        )
        .fetch_one(&mut *connection)
        .await
        .ok()
        .and_then(|n| u64::try_from(n).ok())
    };
    let word = if variables("rpl_semi_sync_source_enabled").is_some() {
        "source"
    } else {
        "master"
    };
    let variable = |part: &str| variables(&format!("rpl_semi_sync_{word}_{part}"));
    Ok(judge_mysql(&MySqlSettings {
        version,
        flush_log_at_trx_commit: row.try_get(1)?,
        log_bin: is_on(&row.try_get::<String, _>(2)?),
        sync_binlog: row.try_get(3)?,
        read_only: is_on(&row.try_get::<String, _>(4)?),
        replicas: u64::try_from(row.try_get::<i64, _>(5)?).unwrap_or(0),
        replicating,
        semi_sync_word: word.to_owned(),
        semi_sync_enabled: variable("enabled").is_some_and(|v| v.eq_ignore_ascii_case("ON")),
        semi_sync_wait_point: variable("wait_point").unwrap_or_default(),
        semi_sync_timeout_ms: variable("timeout")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        semi_sync_clients: status(&format!("Rpl_semi_sync_{word}_clients"))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0),
        galera: GaleraNode::read(&variables, &status),
    }))
}

/// `SHOW … VARIABLES` / `STATUS` rows (`Variable_name`, `Value`) as a lookup by name (any
/// case).
fn name_values(
    rows: Vec<sqlx::mysql::MySqlRow>,
) -> Result<impl Fn(&str) -> Option<String>, sqlx::Error> {
    let pairs: Vec<(String, String)> = rows
        .iter()
        .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .collect::<Result<_, sqlx::Error>>()?;
    Ok(move |name: &str| {
        pairs
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
    })
}

fn judge_mysql(s: &MySqlSettings) -> Durability {
    let mut settings = match &s.galera {
        Some(node) => galera::judge(
            node,
            &s.flush_log_at_trx_commit,
            s.log_bin.then_some(s.sync_binlog.as_str()),
        ),
        None => crash_settings(s),
    };
    settings.push(read_only(s));
    settings.push(replication(s));
    settings.extend(judge_replicas(s));
    let product = if s.version.contains("MariaDB") {
        "MariaDB"
    } else {
        "MySQL"
    };
    let server = match &s.galera {
        Some(node) => format!("{product} {}, {}", s.version, node.described()),
        None => format!("{product} {}", s.version),
    };
    Durability::new(server, settings)
}

/// A lone server's crash settings: `innodb_flush_log_at_trx_commit`, and `sync_binlog` with a
/// binary log.
fn crash_settings(s: &MySqlSettings) -> Vec<Setting> {
    let mut settings = vec![match s.flush_log_at_trx_commit.as_str() {
        // 3 is MariaDB's "1 with three syncs per group commit": as durable.
        "1" | "3" => Setting::new(
            "innodb_flush_log_at_trx_commit",
            &s.flush_log_at_trx_commit,
            Verdict::Safe,
            "the redo log is flushed at each commit before it is acknowledged",
        ),
        other => Setting::new(
            "innodb_flush_log_at_trx_commit",
            other,
            Verdict::IssuedAgain,
            "the redo log is flushed about once a second: a crash (of the server with 0, of \
             the machine with 2) loses up to a second of acknowledged blocks, whose ids are \
             issued again; set it to 1",
        ),
    }];
    settings.push(if !s.log_bin {
        Setting::new(
            "log_bin",
            "OFF",
            Verdict::Safe,
            "no binary log: no replica can be behind this server",
        )
    } else if s.sync_binlog == "1" {
        Setting::new(
            "sync_binlog",
            "1",
            Verdict::Safe,
            "the binary log is flushed at each commit: after a crash it and InnoDB agree",
        )
    } else {
        Setting::new(
            "sync_binlog",
            &s.sync_binlog,
            Verdict::IssuedAgain,
            "the binary log is not flushed at each commit: after a crash of the machine, \
             commits missing from it are rolled back although acknowledged, and their ids are \
             issued again; set sync_binlog = 1",
        )
    });
    settings
}

/// `read_only`: a lone server that is read-only is a replica, whose blocks its primary does not
/// know of; a Galera node's writes are certified by the cluster whoever makes them.
fn read_only(s: &MySqlSettings) -> Setting {
    if s.galera.is_some() && s.read_only {
        Setting::new(
            "read_only",
            "ON",
            Verdict::Safe,
            "users without the privilege cannot write on this node; what others (root) write \
             here is certified by the cluster like any other write",
        )
    } else if s.read_only {
        Setting::new(
            "read_only",
            "ON",
            Verdict::IssuedAgain,
            "this server is read-only, as a replica is: users with the privilege to write \
             anyway (root) reserve blocks that its primary does not know of; point the URL at \
             the primary",
        )
    } else {
        let meaning = match s.galera {
            Some(_) => "this node is not read-only",
            None => "this server takes writes",
        };
        Setting::new("read_only", "OFF", Verdict::Safe, meaning)
    }
}

/// Whether this server applies another's binary log (a replica's counters are overwritten).
fn replication(s: &MySqlSettings) -> Setting {
    match s.replicating {
        None => Setting::new(
            "replication",
            "?",
            Verdict::Unknown,
            "whether this server applies another's binary log could not be read",
        ),
        Some(0) => Setting::new(
            "replication",
            "none",
            Verdict::Safe,
            "this server applies no other server's binary log",
        ),
        Some(n) => Setting::new(
            "replication",
            format!("{n} running"),
            Verdict::IssuedAgain,
            "this server is a replica: it applies another server's binary log, whose changes \
             to the counters overwrite the blocks reserved here (or stop replication); point \
             the URL at the primary",
        ),
    }
}

/// This server's replicas: safe with none, or when each acknowledges every commit before it is
/// acknowledged (semi-synchronous, `AFTER_SYNC`, waiting rather than falling back).
fn judge_replicas(s: &MySqlSettings) -> Vec<Setting> {
    let word = &s.semi_sync_word;
    if s.replicas == 0 {
        return vec![Setting::new(
            "replicas",
            "none connected",
            Verdict::Safe,
            "no replica reads this server's binary log now, so none can be behind it",
        )];
    }
    let mut settings = vec![if !s.semi_sync_enabled {
        Setting::new(
            format!("rpl_semi_sync_{word}_enabled"),
            format!("OFF ({} replica(s) connected)", s.replicas),
            Verdict::LostOnFailover,
            format!(
                "replication is asynchronous: a failover to a replica loses the blocks it had \
                 not received ({FAILOVER_COST}); enable semi-synchronous replication"
            ),
        )
    } else if s.semi_sync_clients < s.replicas {
        Setting::new(
            "replicas",
            format!(
                "{} connected, {} acknowledging",
                s.replicas, s.semi_sync_clients
            ),
            Verdict::LostOnFailover,
            format!(
                "some replicas do not acknowledge commits (semi-sync off on them): a failover to \
                 one loses the blocks it had not received ({FAILOVER_COST})"
            ),
        )
    } else {
        Setting::new(
            "replicas",
            format!("{} connected, all acknowledging", s.replicas),
            Verdict::Safe,
            "each replica acknowledges a commit before it is acknowledged",
        )
    }];
    if s.semi_sync_enabled {
        settings.push(
            if s.semi_sync_wait_point.eq_ignore_ascii_case("AFTER_SYNC") {
                Setting::new(
                    format!("rpl_semi_sync_{word}_wait_point"),
                    &s.semi_sync_wait_point,
                    Verdict::Safe,
                    "a commit is seen by others only once a replica has it",
                )
            } else {
                Setting::new(
                    format!("rpl_semi_sync_{word}_wait_point"),
                    &s.semi_sync_wait_point,
                    Verdict::LostOnFailover,
                    format!(
                        "a commit is seen by others before a replica has it, so blocks reserved \
                     after it can be lost by a failover ({FAILOVER_COST}); set it to AFTER_SYNC"
                    ),
                )
            },
        );
        settings.push(if s.semi_sync_timeout_ms >= SEMI_SYNC_PATIENT_MS {
            Setting::new(
                format!("rpl_semi_sync_{word}_timeout"),
                s.semi_sync_timeout_ms.to_string(),
                Verdict::Safe,
                "a commit waits a day or more for a replica rather than going on alone",
            )
        } else {
            Setting::new(
                format!("rpl_semi_sync_{word}_timeout"),
                s.semi_sync_timeout_ms.to_string(),
                Verdict::LostOnFailover,
                format!(
                    "after this many ms without a replica's acknowledgement, replication falls \
                     back to asynchronous, and a failover then loses blocks ({FAILOVER_COST}); \
                     raise it to {SEMI_SYNC_PATIENT_MS} (a day) or more to wait instead"
                ),
            )
        });
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::durability::verdict_of;

    fn safe_mariadb() -> MySqlSettings {
        MySqlSettings {
            version: "10.11.19-MariaDB".into(),
            flush_log_at_trx_commit: "1".into(),
            sync_binlog: "0".into(),
            replicating: Some(0),
            semi_sync_word: "master".into(),
            semi_sync_wait_point: "AFTER_COMMIT".into(),
            semi_sync_timeout_ms: 10_000,
            ..MySqlSettings::default()
        }
    }

    #[test]
    fn mariadb_alone_without_a_binary_log_is_safe() {
        let report = judge_mysql(&safe_mariadb());
        assert!(report.is_safe(), "{report}");
        assert!(report.server.starts_with("MariaDB 10.11"));
    }

    #[test]
    fn mariadb_crash_settings_issue_ids_again() {
        let mut s = safe_mariadb();
        s.flush_log_at_trx_commit = "2".into();
        let report = judge_mysql(&s);
        assert_eq!(
            verdict_of(&report, "innodb_flush_log_at_trx_commit"),
            Verdict::IssuedAgain
        );
        let mut s = safe_mariadb();
        s.log_bin = true;
        assert_eq!(
            verdict_of(&judge_mysql(&s), "sync_binlog"),
            Verdict::IssuedAgain
        );
        s.sync_binlog = "1".into();
        assert!(judge_mysql(&s).is_safe());
        s.read_only = true;
        assert_eq!(
            verdict_of(&judge_mysql(&s), "read_only"),
            Verdict::IssuedAgain
        );
        s.read_only = false;
        s.replicating = Some(1);
        assert_eq!(
            verdict_of(&judge_mysql(&s), "replication"),
            Verdict::IssuedAgain
        );
    }

    /// A synced node of a primary component of three, with a binary log not flushed at each
    /// commit (as Galera nodes often run).
    fn galera_node() -> MySqlSettings {
        MySqlSettings {
            log_bin: true,
            galera: Some(GaleraNode {
                cluster_status: Some("Primary".into()),
                cluster_size: Some("3".into()),
                local_state: Some("Synced".into()),
                ready: Some("ON".into()),
                state_uuid: Some("f4c62a25-ea93-11f1-9cc3-03485e81fdac".into()),
            }),
            ..safe_mariadb()
        }
    }

    #[test]
    fn a_galera_node_is_judged_as_the_cluster_decides() {
        let report = judge_mysql(&galera_node());
        assert!(report.is_safe(), "{report}");
        assert!(
            report
                .server
                .ends_with(", Galera node of cluster f4c62a25-ea93-11f1-9cc3-03485e81fdac")
        );
        let mut s = galera_node();
        s.read_only = true;
        assert!(judge_mysql(&s).is_safe(), "root's writes are certified too");
        s.flush_log_at_trx_commit = "2".into();
        let report = judge_mysql(&s);
        assert_eq!(
            verdict_of(&report, "innodb_flush_log_at_trx_commit"),
            Verdict::IssuedAgain
        );
        assert_eq!(report.at_risk().count(), 1, "{report}");
        s.replicating = Some(1);
        assert_eq!(
            verdict_of(&judge_mysql(&s), "replication"),
            Verdict::IssuedAgain
        );
    }

    #[test]
    fn mariadb_replicas_are_safe_only_semi_synchronous_after_sync_and_patient() {
        let mut s = safe_mariadb();
        s.log_bin = true;
        s.sync_binlog = "1".into();
        s.replicas = 2;
        let report = judge_mysql(&s);
        assert_eq!(
            verdict_of(&report, "rpl_semi_sync_master_enabled"),
            Verdict::LostOnFailover
        );
        s.semi_sync_enabled = true;
        s.semi_sync_clients = 1;
        let report = judge_mysql(&s);
        for name in [
            "replicas",
            "rpl_semi_sync_master_wait_point",
            "rpl_semi_sync_master_timeout",
        ] {
            assert_eq!(verdict_of(&report, name), Verdict::LostOnFailover, "{name}");
        }
        s.semi_sync_clients = 2;
        s.semi_sync_wait_point = "AFTER_SYNC".into();
        s.semi_sync_timeout_ms = SEMI_SYNC_PATIENT_MS;
        assert!(judge_mysql(&s).is_safe(), "{}", judge_mysql(&s));
        s.semi_sync_word = "source".into();
        assert!(
            judge_mysql(&s)
                .settings
                .iter()
                .any(|setting| setting.name == "rpl_semi_sync_source_timeout")
        );
    }
}
