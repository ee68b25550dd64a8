//! PostgreSQL's settings: `fsync`, `full_page_writes`, `synchronous_commit`,
//! `synchronous_standby_names`, the streaming standbys, and whether it is a standby itself.

use gdid_engine::durability::{Durability, Setting, Verdict};
use sqlx::{PgPool, Row};

use super::FAILOVER_COST;
use super::standby_names::{self, BadStandbyNames, Method, SyncStandbys};

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
                let there = match commit {
                    "remote_write" => "written (not yet flushed)",
                    "remote_apply" => "applied",
                    _ => "flushed",
                };
                format!(
                    "a commit is acknowledged once flushed here and {there} on the synchronous \
                     standbys"
                )
            } else {
                "a commit is acknowledged once flushed here".to_owned()
            };
            let meaning = if raised {
                format!(
                    "{acknowledged}: gdid's connections raise {configured} to {commit} for their \
                     own commits (other sessions keep {configured})"
                )
            } else {
                acknowledged
            };
            Setting::new("synchronous_commit", shown, Verdict::Safe, meaning)
        }
    });

    let parsed = standby_names::parse(&s.synchronous_standby_names);
    settings.push(judge_standby_names(
        &s.synchronous_standby_names,
        &parsed,
        s.standbys.len(),
    ));
    let named = match &parsed {
        Ok(Some(sync)) => Named::Parsed(sync),
        Ok(None) => Named::None,
        Err(_) => Named::Unread,
    };
    settings.push(judge_standbys(&s.standbys, &named, waits_remote));
    Durability::new(
        format!(
            "PostgreSQL {}, {}",
            s.version,
            if s.in_recovery { "standby" } else { "primary" }
        ),
        settings,
    )
}

/// `synchronous_standby_names` (`value`, read as `parsed`) with `streaming` standbys: safe when
/// it names some (each commit then waits for them), or when none streams.
fn judge_standby_names(
    value: &str,
    parsed: &Result<Option<SyncStandbys>, BadStandbyNames>,
    streaming: usize,
) -> Setting {
    const NAME: &str = "synchronous_standby_names";
    let quoted = format!("'{value}'");
    match parsed {
        Ok(None) if streaming == 0 => Setting::new(
            NAME,
            "'' (none)",
            Verdict::Safe,
            "no commit waits for a standby, and none streams from this server now",
        ),
        Ok(None) => Setting::new(
            NAME,
            "'' (none)",
            Verdict::LostOnFailover,
            format!(
                "no commit waits for a standby: replication is asynchronous, a commit is \
                 acknowledged before the {streaming} streaming standby(s) have it, and a failover \
                 to one loses the blocks it had not received ({FAILOVER_COST}); name them here \
                 by their application_name (ANY 1 (s1, s2), FIRST 1 (s1), or *) with \
                 synchronous_commit = on to lose nothing"
            ),
        ),
        Err(bad) => Setting::new(
            NAME,
            quoted,
            Verdict::Unknown,
            format!(
                "not read here ({bad}): which standbys a commit waits for is not known; the \
                 server's own reading shows in pg_stat_replication.sync_state"
            ),
        ),
        Ok(Some(sync)) if sync.waits_for_more_than_named() => Setting::new(
            NAME,
            quoted,
            Verdict::Unknown,
            format!(
                "{sync} waits for more standbys than it names: no commit is ever acknowledged \
                 (writes hang); name at least {} or wait for fewer",
                sync.count
            ),
        ),
        Ok(Some(sync)) => Setting::new(NAME, quoted, Verdict::Safe, waited_for(sync)),
    }
}

/// What a commit waits for under `sync`, in a sentence.
fn waited_for(sync: &SyncStandbys) -> String {
    let acknowledged = format!("{sync}: a commit is acknowledged once");
    if sync.names.iter().any(|name| name == "*") {
        return match sync.count {
            1 => format!("{acknowledged} one of the streaming standbys has it"),
            count => format!("{acknowledged} {count} of the streaming standbys have it"),
        };
    }
    let names = sync.names.join(", ");
    match (sync.names.len(), sync.method, sync.count) {
        (1, _, _) => format!("{acknowledged} {names} has it"),
        (_, Method::First, 1) => {
            format!("{acknowledged} the first of {names} (in that order) that streams has it")
        }
        (_, Method::First, count) => format!(
            "{acknowledged} the first {count} of {names} (in that order) that stream have it"
        ),
        (_, Method::Any, 1) => format!("{acknowledged} any one of {names} has it (a quorum)"),
        (_, Method::Any, count) => {
            format!("{acknowledged} any {count} of {names} have it (a quorum)")
        }
    }
}

/// What `synchronous_standby_names` says, for judging the standbys.
#[derive(Debug, Clone, Copy)]
enum Named<'a> {
    /// Nothing: replication is asynchronous.
    None,
    /// These standbys.
    Parsed(&'a SyncStandbys),
    /// Something not read here: the server's `sync_state` of each standby says what it made of
    /// it.
    Unread,
}

/// The streaming standbys (name, `sync_state`): safe when none streams, or when every
/// acknowledged commit reaches standbys a failover can promote (`sync`, or a quorum of
/// `quorum`), which the meaning names.
fn judge_standbys(
    standbys: &[(String, Option<String>)],
    named: &Named,
    waits_remote: bool,
) -> Setting {
    if standbys.is_empty() {
        return no_standby(named);
    }
    let value = standbys
        .iter()
        .map(|(name, state)| format!("{name} {}", state.as_deref().unwrap_or("?")))
        .collect::<Vec<_>>()
        .join(", ");
    if standbys.iter().any(|(_, state)| state.is_none()) {
        return Setting::new(
            "standbys",
            value,
            Verdict::Unknown,
            "their sync_state is hidden from this role: grant it pg_read_all_stats",
        );
    }
    let in_state = |wanted: &str| -> Vec<&str> {
        standbys
            .iter()
            .filter(|(_, state)| state.as_deref() == Some(wanted))
            .map(|(name, _)| name.as_str())
            .collect()
    };
    let (sync, quorum) = (in_state("sync"), in_state("quorum"));
    let others: Vec<&str> = standbys
        .iter()
        .filter(|(_, state)| !matches!(state.as_deref(), Some("sync" | "quorum")))
        .map(|(name, _)| name.as_str())
        .collect();
    if !waits_remote {
        let all: Vec<&str> = standbys.iter().map(|(name, _)| name.as_str()).collect();
        return Setting::new(
            "standbys",
            value,
            Verdict::LostOnFailover,
            format!(
                "no commit of gdid's connections waits for them (synchronous_commit): a failover \
                 to {} loses the blocks it had not received ({FAILOVER_COST})",
                all.join(", ")
            ),
        );
    }
    match (named, sync.is_empty() && quorum.is_empty()) {
        (Named::None, _) => Setting::new(
            "standbys",
            value,
            Verdict::LostOnFailover,
            format!(
                "asynchronous: {} may lack acknowledged blocks, and a failover to one loses \
                 them ({FAILOVER_COST})",
                others.join(", ")
            ),
        ),
        (_, true) => Setting::new(
            "standbys",
            value,
            Verdict::Safe,
            "none of them is one synchronous_standby_names names: each commit waits (writes \
             hang) until one it names streams, so none is acknowledged without it",
        ),
        (_, false) => Setting::new(
            "standbys",
            value,
            Verdict::Safe,
            promote(named, &sync, &quorum, &others),
        ),
    }
}

/// No standby streams: safe, and commits hang when `synchronous_standby_names` names some.
fn no_standby(named: &Named) -> Setting {
    let meaning = match named {
        Named::None => {
            "no standby streams from this server now, so none can be behind it (a standby fed \
             from a WAL archive is not seen here: it lags by whole segments)"
        }
        Named::Parsed(_) | Named::Unread => {
            "no standby streams from this server now: each commit waits (writes hang) until one \
             synchronous_standby_names names streams, so none is acknowledged without it"
        }
    };
    Setting::new("standbys", "none streaming", Verdict::Safe, meaning)
}

/// Which standbys a failover must promote so that it loses nothing: any `sync` one (each has
/// every acknowledged commit), or the most advanced of the `quorum` ones; never the `others`.
fn promote(named: &Named, sync: &[&str], quorum: &[&str], others: &[&str]) -> String {
    let mut meaning = if quorum.is_empty() {
        let wanted = match named {
            Named::Parsed(names) => names.count,
            Named::None | Named::Unread => sync.len(),
        };
        let mut said = format!(
            "every acknowledged commit is on {} (sync): a failover that promotes {} loses nothing",
            sync.join(", "),
            if sync.len() == 1 { "it" } else { "any of them" }
        );
        if sync.len() < wanted {
            said +=
                &format!("; commits wait (writes hang) until {wanted} synchronous standbys stream");
        }
        said
    } else {
        let count = match named {
            Named::Parsed(names) => Some(names.count),
            Named::None | Named::Unread => None,
        };
        quorum_promotion(quorum, count)
    };
    if !others.is_empty() {
        meaning += &format!(
            "; not {} (potential or async), which may lack acknowledged blocks",
            others.join(", ")
        );
    }
    meaning
}

/// A quorum of `count` (when read) among the `quorum` standbys: promote the most advanced.
fn quorum_promotion(quorum: &[&str], count: Option<usize>) -> String {
    let names = quorum.join(", ");
    let (mut said, lost) = match count {
        _ if quorum.len() == 1 => (
            format!(
                "every acknowledged commit is on {names} (quorum): a failover that promotes it \
                 loses nothing"
            ),
            0,
        ),
        Some(n) if n >= quorum.len() => (
            format!(
                "every acknowledged commit is on each of {names} (quorum): a failover that \
                 promotes any of them loses nothing"
            ),
            0,
        ),
        _ => (
            format!(
                "every acknowledged commit is on {} of {names} (quorum): a failover that \
                 promotes the most advanced of them (the highest pg_last_wal_receive_lsn()) \
                 loses nothing",
                count.map_or("enough".to_owned(), |n| n.to_string())
            ),
            count.map_or(0, |n| quorum.len() - n),
        ),
    };
    if lost > 0 {
        said += &format!(", even with up to {lost} of them lost along with the primary");
    }
    if let Some(n) = count.filter(|&n| n > quorum.len()) {
        said += &format!("; commits wait (writes hang) until {n} of them stream");
    }
    said
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

    /// The report of a primary with `names`, `commit`, and a standby `s0`, `s1`, … in each of
    /// `states`.
    fn with(names: &str, commit: &str, states: &[&str]) -> Durability {
        let mut s = safe_postgres();
        s.synchronous_standby_names = names.into();
        s.synchronous_commit = commit.into();
        s.standbys = states
            .iter()
            .enumerate()
            .map(|(i, state)| (format!("s{i}"), Some((*state).to_owned())))
            .collect();
        judge_postgres(&s)
    }

    /// The meaning of setting `name` in `report`.
    fn meaning_of<'a>(report: &'a Durability, name: &str) -> &'a str {
        let setting = report.settings.iter().find(|setting| setting.name == name);
        &setting.unwrap_or_else(|| panic!("no {name}")).meaning
    }

    #[test]
    fn asynchronous_standbys_are_lost_on_failover() {
        let asynchronous = with("", "on", &["async"]);
        for name in ["standbys", "synchronous_standby_names"] {
            assert_eq!(
                verdict_of(&asynchronous, name),
                Verdict::LostOnFailover,
                "{name}"
            );
        }
        assert!(meaning_of(&asynchronous, "standbys").starts_with("asynchronous: s0 may lack"));
        let local = with("*", "local", &["sync"]);
        assert_eq!(
            verdict_of(&local, "synchronous_commit"),
            Verdict::LostOnFailover
        );
        let hidden = judge_standbys(&[("s0".into(), None)], &Named::None, true);
        assert_eq!(hidden.verdict, Verdict::Unknown);
    }

    #[test]
    fn a_commit_on_a_standby_that_can_be_promoted_is_safe_and_names_it() {
        for (names, commit, states) in [
            ("*", "on", &["sync"][..]),
            ("*", "remote_apply", &["sync"]),
            ("s0, s1", "remote_write", &["sync", "potential"]),
            ("FIRST 1 (s0, s1)", "on", &["sync", "potential"]),
            ("ANY 1 (s0, s1)", "on", &["quorum", "quorum"]),
            ("ANY 1 (s0)", "on", &["quorum", "async"]),
        ] {
            let report = with(names, commit, states);
            assert!(report.is_safe(), "{names}: {report}");
        }
        let first = with("FIRST 1 (s0, s1)", "on", &["sync", "potential"]);
        assert_eq!(
            meaning_of(&first, "standbys"),
            "every acknowledged commit is on s0 (sync): a failover that promotes it loses \
             nothing; not s1 (potential or async), which may lack acknowledged blocks"
        );
        let quorum = with("ANY 1 (s0, s1, s2)", "on", &["quorum", "quorum", "quorum"]);
        assert_eq!(
            meaning_of(&quorum, "standbys"),
            "every acknowledged commit is on 1 of s0, s1, s2 (quorum): a failover that \
             promotes the most advanced of them (the highest pg_last_wal_receive_lsn()) loses \
             nothing, even with up to 2 of them lost along with the primary"
        );
        assert_eq!(
            meaning_of(&quorum, "synchronous_standby_names"),
            "ANY 1 (s0, s1, s2): a commit is acknowledged once any one of s0, s1, s2 has it (a \
             quorum)"
        );
    }

    #[test]
    fn what_a_commit_waits_for_is_said_in_words() {
        for (names, said) in [
            ("*", "once one of the streaming standbys has it"),
            ("ANY 2 (*)", "once 2 of the streaming standbys have it"),
            ("\"S 1\"", "once S 1 has it"),
            (
                "s0, s1",
                "once the first of s0, s1 (in that order) that streams has it",
            ),
            (
                "FIRST 2 (s0, s1, s2)",
                "once the first 2 of s0, s1, s2 (in that order) that stream have it",
            ),
            (
                "ANY 2 (s0, s1, s2)",
                "once any 2 of s0, s1, s2 have it (a quorum)",
            ),
        ] {
            let report = with(names, "on", &[]);
            let meaning = meaning_of(&report, "synchronous_standby_names");
            assert!(meaning.ends_with(said), "{names}: {meaning}");
        }
    }

    #[test]
    fn commits_that_wait_for_standbys_not_there_hang_and_lose_nothing() {
        for (names, states) in [
            ("ANY 1 (s9)", &["async"][..]),
            ("FIRST 2 (s0, s1)", &["sync", "async"]),
            ("ANY 2 (s0, s1)", &["quorum"]),
            ("s1", &[]),
        ] {
            let report = with(names, "on", states);
            assert!(report.is_safe(), "{names}: {report}");
            assert!(
                meaning_of(&report, "standbys").contains("(writes hang)"),
                "{names}: {report}"
            );
        }
    }

    #[test]
    fn bad_standby_names_are_unknown_and_say_why() {
        let report = with("ANY 1 (s0", "on", &["quorum"]);
        assert_eq!(
            verdict_of(&report, "synchronous_standby_names"),
            Verdict::Unknown
        );
        assert!(
            meaning_of(&report, "synchronous_standby_names")
                .starts_with("not read here (expected ',' or ')', found the end)"),
            "{report}"
        );
        // The server's own reading still names the standby to promote.
        assert_eq!(verdict_of(&report, "standbys"), Verdict::Safe, "{report}");
        let impossible = with("FIRST 3 (s0, s1)", "on", &["sync", "sync"]);
        assert_eq!(
            verdict_of(&impossible, "synchronous_standby_names"),
            Verdict::Unknown
        );
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
