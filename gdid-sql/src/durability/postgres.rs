//! PostgreSQL's settings: `fsync`, `full_page_writes`, `synchronous_commit`,
//! `synchronous_standby_names`, the streaming standbys, and whether it is a standby itself.

use gdid_engine::durability::{Durability, Setting, Verdict};
use sqlx::{PgPool, Row};

use super::FAILOVER_COST;

/// What PostgreSQL said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PostgresSettings {
    version: String,
    in_recovery: bool,
    fsync: String,
    full_page_writes: String,
    /// On the store's own connections, which raise `off` and `local` to `on`.
    synchronous_commit: String,
    /// What the server, database and role give every other session (`pg_settings.reset_val`);
    /// empty when not read.
    configured_commit: String,
    synchronous_standby_names: String,
    /// Each streaming standby: its name and `sync_state` (`None`: not shown to this role).
    standbys: Vec<(String, Option<String>)>,
}

pub(super) async fn read(pool: &PgPool) -> Result<Durability, sqlx::Error> {
    let mut connection = pool.acquire().await?;
    let row = sqlx::query(
        "SELECT current_setting('server_version'), pg_is_in_recovery(), \
         current_setting('fsync'), current_setting('full_page_writes'), \
         current_setting('synchronous_commit'), current_setting('synchronous_standby_names'), \
         (SELECT reset_val FROM pg_catalog.pg_settings WHERE name = 'synchronous_commit')",
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
        configured_commit: row.try_get::<Option<String>, _>(6)?.unwrap_or_default(),
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
    // The store's connections raise `off` and `local` (pg_session): the value judged is theirs,
    // the one shown says both.
    let configured = s.configured_commit.as_str();
    let raised = !configured.is_empty() && configured != commit;
    let shown = if raised {
        format!("{configured}, raised to {commit} by gdid's connections")
    } else {
        commit.to_owned()
    };
    settings.push(match commit {
        "off" => Setting::new(
            "synchronous_commit",
            shown,
            Verdict::IssuedAgain,
            "a commit is acknowledged before its write-ahead log is flushed: a crash loses the \
             last ones (up to three times wal_writer_delay), whose ids are issued again; set \
             synchronous_commit = on",
        ),
        "local" if waits_for_standbys && !s.standbys.is_empty() => Setting::new(
            "synchronous_commit",
            shown,
            Verdict::LostOnFailover,
            format!(
                "a commit is flushed here but waits for no standby, although \
                 synchronous_standby_names lists some: a failover loses what they had not \
                 received ({FAILOVER_COST}); set synchronous_commit = on or remote_apply"
            ),
        ),
        _ => {
            let acknowledged = if waits_for_standbys && waits_remote {
                "a commit is acknowledged once flushed here and received by the synchronous \
                 standbys (remote_write: written, not yet flushed, on them)"
            } else {
                "a commit is acknowledged once flushed here"
            };
            let meaning = if raised {
                format!(
                    "{acknowledged}: gdid's connections raise {configured} to {commit} for their \
                     own commits (other sessions keep {configured})"
                )
            } else {
                acknowledged.to_owned()
            };
            Setting::new("synchronous_commit", shown, Verdict::Safe, meaning)
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::durability::verdict_of;

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
    fn a_commit_setting_the_stores_connections_raise_is_safe_and_shown_as_configured() {
        for configured in ["off", "local"] {
            let mut s = safe_postgres();
            s.configured_commit = configured.into();
            s.synchronous_standby_names = "*".into();
            s.standbys = vec![("s0".into(), Some("sync".into()))];
            let report = judge_postgres(&s);
            assert!(report.is_safe(), "{report}");
            let shown = &report
                .settings
                .iter()
                .find(|setting| setting.name == "synchronous_commit")
                .unwrap()
                .value;
            assert_eq!(
                *shown,
                format!("{configured}, raised to on by gdid's connections")
            );
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
        for name in ["standbys", "synchronous_standby_names"] {
            assert_eq!(
                verdict_of(&asynchronous, name),
                Verdict::LostOnFailover,
                "{name}"
            );
        }
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
}
