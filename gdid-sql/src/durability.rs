//! Whether a SQL store's acknowledged blocks survive a crash and a failover
//! ([`SqlStore::durability`]): each server's settings read through the store's own pool (so a
//! session setting such as PostgreSQL's `synchronous_commit` is the one its writes use) and
//! judged by the rules of [`gdid_core::generator::durability`].
//!
//! The judging is pure (`judge_*`), so that every verdict is tested on its values as well as on
//! private servers started with them.

use std::path::{Path, PathBuf};

use gdid_core::generator::durability::{Durability, Setting, Verdict};
use sqlx::{MySqlPool, PgPool, Row, SqlitePool};

use crate::store::SqlStore;

/// What a failover that loses blocks costs, for the meanings of [`Verdict::LostOnFailover`].
const FAILOVER_COST: &str = "GDIDs stay unique, moved to a new era as the promoted server is \
                             another lineage; one-at-a-time counters, ranges and windows refuse \
                             until skipped forward";

/// A semi-synchronous timeout this long (a day, in ms) is taken as "never falls back".
const SEMI_SYNC_PATIENT_MS: u64 = 86_400_000;

impl SqlStore {
    /// Reads the settings the store's uniqueness relies on from its server, and judges each:
    /// whether an acknowledged block can be lost or come back after a crash or a failover.
    ///
    /// | server | settings |
    /// |---|---|
    /// | PostgreSQL | `fsync`, `full_page_writes`, `synchronous_commit`, `synchronous_standby_names`, the streaming standbys (`pg_stat_replication`), whether it is itself a standby |
    /// | MariaDB, MySQL | `innodb_flush_log_at_trx_commit`, `sync_binlog` (with a binary log), `read_only`, whether it replicates from another server, its replicas and semi-synchronous replication (enabled, wait point, timeout) |
    /// | SQLite | the file (in memory, or on a RAM file system), `journal_mode`, `synchronous` |
    ///
    /// # Errors
    ///
    /// The driver's, when the server cannot be asked.
    pub async fn durability(&self) -> Result<Durability, sqlx::Error> {
        match self {
            SqlStore::Postgres(pool) => postgres(pool).await,
            SqlStore::MySql(pool) => mysql(pool).await,
            SqlStore::Sqlite(pool) => sqlite(pool).await,
        }
    }
}

// ----------------------------------------------------------------------------------------------
// PostgreSQL
// ----------------------------------------------------------------------------------------------

/// What PostgreSQL said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PostgresSettings {
    version: String,
    in_recovery: bool,
    fsync: String,
    full_page_writes: String,
    synchronous_commit: String,
    synchronous_standby_names: String,
    /// Each streaming standby: its name and `sync_state` (`None`: not shown to this role).
    standbys: Vec<(String, Option<String>)>,
}

async fn postgres(pool: &PgPool) -> Result<Durability, sqlx::Error> {
    let mut connection = pool.acquire().await?;
    let row = sqlx::query(
        "SELECT current_setting('server_version'), pg_is_in_recovery(), \
         current_setting('fsync'), current_setting('full_page_writes'), \
         current_setting('synchronous_commit'), current_setting('synchronous_standby_names')",
    )
    .fetch_one(&mut *connection)
    .await?;
    let standbys = sqlx::query(
        "SELECT coalesce(application_name, ''), sync_state FROM pg_stat_replication \
         ORDER BY application_name",
    )
    .fetch_all(&mut *connection)
    .await?;
    Ok(judge_postgres(&PostgresSettings {
        version: row.try_get(0)?,
        in_recovery: row.try_get(1)?,
        fsync: row.try_get(2)?,
        full_page_writes: row.try_get(3)?,
        synchronous_commit: row.try_get(4)?,
        synchronous_standby_names: row.try_get(5)?,
        standbys: standbys
            .iter()
            .map(|standby| Ok((standby.try_get(0)?, standby.try_get(1)?)))
            .collect::<Result<_, sqlx::Error>>()?,
    }))
}

fn judge_postgres(s: &PostgresSettings) -> Durability {
    let mut settings = Vec::new();
    if s.in_recovery {
        settings.push(Setting::new(
            "pg_is_in_recovery()",
            "true",
            Verdict::Unknown,
            "this server is a standby: it takes no writes, blocks are reserved on its primary; \
             check the primary",
        ));
    }
    settings.push(on_or(
        "fsync",
        &s.fsync,
        "each commit is flushed to disk before it is acknowledged",
        "commits are never flushed: a crash of the machine loses acknowledged blocks, whose ids \
         are then issued again; set fsync = on",
    ));
    settings.push(on_or(
        "full_page_writes",
        &s.full_page_writes,
        "a page torn by a crash is restored from the write-ahead log",
        "a crash in the middle of a page write can leave the counters' table torn; set \
         full_page_writes = on",
    ));

    let waits_for_standbys = !s.synchronous_standby_names.trim().is_empty();
    let commit = s.synchronous_commit.as_str();
    let waits_remote = matches!(commit, "on" | "remote_write" | "remote_apply");
    settings.push(match commit {
        "off" => Setting::new(
            "synchronous_commit",
            commit,
            Verdict::IssuedAgain,
            "a commit is acknowledged before its write-ahead log is flushed: a crash loses the \
             last ones (up to three times wal_writer_delay), whose ids are issued again; set \
             synchronous_commit = on",
        ),
        "local" if waits_for_standbys && !s.standbys.is_empty() => Setting::new(
            "synchronous_commit",
            commit,
            Verdict::LostOnFailover,
            format!(
                "a commit is flushed here but waits for no standby, although \
                 synchronous_standby_names lists some: a failover loses what they had not \
                 received ({FAILOVER_COST}); set synchronous_commit = on or remote_apply"
            ),
        ),
        _ => Setting::new(
            "synchronous_commit",
            commit,
            Verdict::Safe,
            if waits_for_standbys && waits_remote {
                "a commit is acknowledged once flushed here and received by the synchronous \
                 standbys (remote_write: written, not yet flushed, on them)"
            } else {
                "a commit is acknowledged once flushed here"
            },
        ),
    });

    let names = if waits_for_standbys {
        format!("'{}'", s.synchronous_standby_names)
    } else {
        "'' (none)".to_owned()
    };
    settings.push(if waits_for_standbys || s.standbys.is_empty() {
        Setting::new(
            "synchronous_standby_names",
            names,
            Verdict::Safe,
            if waits_for_standbys {
                "commits wait for the standbys it names"
            } else {
                "no commit waits for a standby, and none streams from this server now"
            },
        )
    } else {
        Setting::new(
            "synchronous_standby_names",
            names,
            Verdict::LostOnFailover,
            format!(
                "no commit waits for a standby, and {} stream(s) from this server: a failover \
                 to one loses the blocks it had not received ({FAILOVER_COST}); name them here \
                 (with synchronous_commit = on) to lose nothing",
                s.standbys.len()
            ),
        )
    });
    settings.push(judge_standbys(&s.standbys, waits_remote));
    Durability::new(
        format!(
            "PostgreSQL {}, {}",
            s.version,
            if s.in_recovery { "standby" } else { "primary" }
        ),
        settings,
    )
}

/// The streaming standbys: safe when each is synchronous (`sync`) and commits wait for it.
fn judge_standbys(standbys: &[(String, Option<String>)], waits_remote: bool) -> Setting {
    if standbys.is_empty() {
        return Setting::new(
            "standbys",
            "none streaming",
            Verdict::Safe,
            "no standby streams from this server now, so none can be behind it (a standby fed \
             from a WAL archive is not seen here: it lags by whole segments)",
        );
    }
    let listed: Vec<String> = standbys
        .iter()
        .map(|(name, state)| format!("{name} {}", state.as_deref().unwrap_or("?")))
        .collect();
    let value = listed.join(", ");
    if standbys.iter().any(|(_, state)| state.is_none()) {
        return Setting::new(
            "standbys",
            value,
            Verdict::Unknown,
            "their sync_state is hidden from this role: grant it pg_read_all_stats",
        );
    }
    let behind: Vec<&str> = standbys
        .iter()
        .filter(|(_, state)| !(waits_remote && state.as_deref() == Some("sync")))
        .map(|(name, _)| name.as_str())
        .collect();
    if behind.is_empty() {
        Setting::new(
            "standbys",
            value,
            Verdict::Safe,
            "every standby is synchronous: a commit is acknowledged once they have it",
        )
    } else {
        Setting::new(
            "standbys",
            value,
            Verdict::LostOnFailover,
            format!(
                "not waited for by every commit: {} (async, potential or quorum); a failover to \
                 one loses the blocks it had not received ({FAILOVER_COST})",
                behind.join(", ")
            ),
        )
    }
}

/// A setting that is safe `on`, and `unsafe_meaning` otherwise (a crash issues ids again).
fn on_or(name: &str, value: &str, safe_meaning: &str, unsafe_meaning: &str) -> Setting {
    if value == "on" {
        Setting::new(name, value, Verdict::Safe, safe_meaning)
    } else {
        Setting::new(name, value, Verdict::IssuedAgain, unsafe_meaning)
    }
}

// ----------------------------------------------------------------------------------------------
// MariaDB and MySQL
// ----------------------------------------------------------------------------------------------

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
}

async fn mysql(pool: &MySqlPool) -> Result<Durability, sqlx::Error> {
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
             OR Variable_name LIKE 'rpl\\_semi\\_sync\\_%\\_timeout'",
        )
        .fetch_all(&mut *connection)
        .await?,
    )?;
    let status = name_values(
        sqlx::query(
            "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Rpl\\_semi\\_sync\\_%\\_clients' \
             OR Variable_name = 'Slaves_running'",
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
    }))
}

/// A boolean variable cast to text: `ON` (MariaDB) or `1` (MySQL).
fn is_on(value: &str) -> bool {
    value == "1" || value.eq_ignore_ascii_case("ON")
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
    settings.push(if s.read_only {
        Setting::new(
            "read_only",
            "ON",
            Verdict::IssuedAgain,
            "this server is read-only, as a replica is: users with the privilege to write \
             anyway (root) reserve blocks that its primary does not know of; point the URL at \
             the primary",
        )
    } else {
        Setting::new(
            "read_only",
            "OFF",
            Verdict::Safe,
            "this server takes writes",
        )
    });
    settings.push(match s.replicating {
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
    });
    settings.extend(judge_replicas(s));
    Durability::new(
        format!(
            "{} {}",
            if s.version.contains("MariaDB") {
                "MariaDB"
            } else {
                "MySQL"
            },
            s.version
        ),
        settings,
    )
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

// ----------------------------------------------------------------------------------------------
// SQLite
// ----------------------------------------------------------------------------------------------

/// What SQLite said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct SqliteSettings {
    version: String,
    /// The main database's file; empty for a database in memory.
    file: String,
    /// The file system the file is on (`ext4`, `tmpfs`), where it could be found.
    file_system: Option<String>,
    journal_mode: String,
    /// `PRAGMA synchronous`: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA.
    synchronous: i64,
}

async fn sqlite(pool: &SqlitePool) -> Result<Durability, sqlx::Error> {
    let mut connection = pool.acquire().await?;
    let version: String = sqlx::query_scalar("SELECT sqlite_version()")
        .fetch_one(&mut *connection)
        .await?;
    let file: String = sqlx::query("PRAGMA database_list")
        .fetch_all(&mut *connection)
        .await?
        .iter()
        .find(|row| row.try_get::<String, _>(1).is_ok_and(|name| name == "main"))
        .map(|row| row.try_get(2))
        .transpose()?
        .unwrap_or_default();
    let journal_mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut *connection)
        .await?;
    let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
        .fetch_one(&mut *connection)
        .await?;
    Ok(judge_sqlite(&SqliteSettings {
        version,
        file_system: file_system_of(Path::new(&file)),
        file,
        journal_mode,
        synchronous,
    }))
}

fn judge_sqlite(s: &SqliteSettings) -> Durability {
    let mut settings = Vec::new();
    let ram = s
        .file_system
        .as_deref()
        .filter(|fs| matches!(*fs, "tmpfs" | "ramfs"));
    settings.push(if s.file.is_empty() {
        Setting::new(
            "file",
            "(in memory)",
            Verdict::IssuedAgain,
            "the database lives in this process's memory: the next process issues every id \
             again; give a file",
        )
    } else if let Some(fs) = ram {
        Setting::new(
            "file",
            format!("{} ({fs})", s.file),
            Verdict::IssuedAgain,
            "the file is on a file system in memory: a reboot loses it, and every id is issued \
             again; keep it on a disk",
        )
    } else {
        Setting::new(
            "file",
            match &s.file_system {
                Some(fs) => format!("{} ({fs})", s.file),
                None => s.file.clone(),
            },
            Verdict::Safe,
            "a file on disk (copying it back from a backup brings old counters back: fence \
             after a restore)",
        )
    });
    let journal = s.journal_mode.to_ascii_lowercase();
    settings.push(match journal.as_str() {
        "wal" | "delete" | "truncate" | "persist" => Setting::new(
            "journal_mode",
            &journal,
            Verdict::Safe,
            "a crash rolls an unfinished write back, never a committed one",
        ),
        _ => Setting::new(
            "journal_mode",
            &journal,
            Verdict::IssuedAgain,
            "no journal on disk: a crash in the middle of a write can corrupt the counters; use \
             WAL",
        ),
    });
    let name = ["OFF", "NORMAL", "FULL", "EXTRA"]
        .get(usize::try_from(s.synchronous).unwrap_or(usize::MAX))
        .copied()
        .unwrap_or("?");
    settings.push(match s.synchronous {
        2 | 3 => Setting::new(
            "synchronous",
            name,
            Verdict::Safe,
            "each commit is flushed to disk before it is acknowledged",
        ),
        _ => Setting::new(
            "synchronous",
            name,
            Verdict::IssuedAgain,
            "commits are not flushed to disk each time: a power loss rolls the last ones back, \
             and their ids are issued again; use FULL",
        ),
    });
    Durability::new(format!("SQLite {}", s.version), settings)
}

/// The type of the file system `file` is on (`/proc/self/mounts`: the longest mount point
/// above it), `None` where that cannot be read (not Linux, or no such file).
fn file_system_of(file: &Path) -> Option<String> {
    let file = std::fs::canonicalize(file).ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let (_device, point, kind) = (fields.next()?, fields.next()?, fields.next()?);
            let point = PathBuf::from(unescape_mount_point(point));
            file.starts_with(&point)
                .then(|| (point.components().count(), kind.to_owned()))
        })
        .max_by_key(|(depth, _)| *depth)
        .map(|(_, kind)| kind)
}

/// A mount point as `/proc/self/mounts` writes it: space, tab, newline and backslash as octal
/// escapes (`\040`).
fn unescape_mount_point(point: &str) -> String {
    let mut out = String::with_capacity(point.len());
    let mut rest = point;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 4);
        match code.and_then(|digits| u8::from_str_radix(digits, 8).ok()) {
            Some(byte) => {
                out.push(char::from(byte));
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict_of(report: &Durability, name: &str) -> Verdict {
        report
            .settings
            .iter()
            .find(|setting| setting.name == name)
            .unwrap_or_else(|| panic!("no setting {name} in {report}"))
            .verdict
    }

    fn safe_postgres() -> PostgresSettings {
        PostgresSettings {
            version: "15.19".into(),
            fsync: "on".into(),
            full_page_writes: "on".into(),
            synchronous_commit: "on".into(),
            ..PostgresSettings::default()
        }
    }

    #[test]
    fn postgres_alone_with_the_defaults_is_safe() {
        let report = judge_postgres(&safe_postgres());
        assert!(report.is_safe(), "{report}");
        assert_eq!(report.server, "PostgreSQL 15.19, primary");
    }

    #[test]
    fn postgres_crash_settings_issue_ids_again() {
        for (name, value) in [
            ("fsync", "off"),
            ("full_page_writes", "off"),
            ("synchronous_commit", "off"),
        ] {
            let mut s = safe_postgres();
            *match name {
                "fsync" => &mut s.fsync,
                "full_page_writes" => &mut s.full_page_writes,
                _ => &mut s.synchronous_commit,
            } = value.into();
            let report = judge_postgres(&s);
            assert_eq!(verdict_of(&report, name), Verdict::IssuedAgain, "{report}");
            assert_eq!(report.at_risk().count(), 1, "{report}");
        }
    }

    #[test]
    fn postgres_standbys_are_safe_only_when_synchronous_and_waited_for() {
        let with = |names: &str, commit: &str, states: &[&str]| {
            let mut s = safe_postgres();
            s.synchronous_standby_names = names.into();
            s.synchronous_commit = commit.into();
            s.standbys = states
                .iter()
                .enumerate()
                .map(|(i, state)| (format!("s{i}"), Some((*state).to_owned())))
                .collect();
            judge_postgres(&s)
        };
        let asynchronous = with("", "on", &["async"]);
        assert_eq!(
            verdict_of(&asynchronous, "standbys"),
            Verdict::LostOnFailover
        );
        assert_eq!(
            verdict_of(&asynchronous, "synchronous_standby_names"),
            Verdict::LostOnFailover
        );
        assert!(with("*", "on", &["sync"]).is_safe());
        assert!(with("*", "remote_apply", &["sync"]).is_safe());
        assert_eq!(
            with("FIRST 1 (s0)", "on", &["sync", "potential"]).worst(),
            Verdict::LostOnFailover
        );
        assert_eq!(
            with("ANY 1 (s0, s1)", "on", &["quorum", "quorum"]).worst(),
            Verdict::LostOnFailover
        );
        let local = with("*", "local", &["sync"]);
        assert_eq!(
            verdict_of(&local, "synchronous_commit"),
            Verdict::LostOnFailover
        );
        let hidden = judge_standbys(&[("s0".into(), None)], true);
        assert_eq!(hidden.verdict, Verdict::Unknown);
    }

    #[test]
    fn a_postgres_standby_cannot_be_judged_here() {
        let mut s = safe_postgres();
        s.in_recovery = true;
        let report = judge_postgres(&s);
        assert_eq!(report.worst(), Verdict::Unknown);
        assert_eq!(report.server, "PostgreSQL 15.19, standby");
    }

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
        assert_eq!(verdict_of(&report, "replicas"), Verdict::LostOnFailover);
        assert_eq!(
            verdict_of(&report, "rpl_semi_sync_master_wait_point"),
            Verdict::LostOnFailover
        );
        assert_eq!(
            verdict_of(&report, "rpl_semi_sync_master_timeout"),
            Verdict::LostOnFailover
        );
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

    fn safe_sqlite() -> SqliteSettings {
        SqliteSettings {
            version: "3.46.0".into(),
            file: "/var/lib/ids.sqlite".into(),
            file_system: Some("ext4".into()),
            journal_mode: "wal".into(),
            synchronous: 2,
        }
    }

    #[test]
    fn sqlite_verdicts() {
        assert!(judge_sqlite(&safe_sqlite()).is_safe());
        let judged = |change: Change| {
            let mut s = safe_sqlite();
            change(&mut s);
            judge_sqlite(&s)
        };
        type Change = fn(&mut SqliteSettings);
        let unsafe_changes: [(&str, Change); 6] = [
            ("file", |s| s.file.clear()),
            ("file", |s| s.file_system = Some("tmpfs".into())),
            ("journal_mode", |s| s.journal_mode = "memory".into()),
            ("journal_mode", |s| s.journal_mode = "off".into()),
            ("synchronous", |s| s.synchronous = 1),
            ("synchronous", |s| s.synchronous = 0),
        ];
        for (name, change) in unsafe_changes {
            let report = judged(change);
            assert_eq!(verdict_of(&report, name), Verdict::IssuedAgain, "{report}");
        }
        assert!(judged(|s| s.journal_mode = "delete".into()).is_safe());
    }

    #[test]
    fn mount_points_are_unescaped() {
        assert_eq!(unescape_mount_point("/mnt/my\\040disk"), "/mnt/my disk");
        assert_eq!(unescape_mount_point("/a\\\\b"), "/a\\\\b");
        assert_eq!(unescape_mount_point("/a\\134b"), "/a\\b");
    }
}
