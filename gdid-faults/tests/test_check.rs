//! `gdid check` on private servers started with each setting it judges: exit 1 naming the
//! setting where an acknowledged block can be lost or come back after a crash or a failover
//! (the failover issue's reproduction, an asynchronous standby, among them), 0 once the setup
//! is safe, saying why.
//!
//! Each test builds replicated servers of its own ([`PostgresReplicas`], [`MariaDbReplicas`]),
//! changes one setting at a time on them (never on the machine's servers) and asks both the
//! library (`OpenOptions::check`) and the command (`gdid check --store URL`).
//!
//! Galera nodes ([`GaleraCluster`]) are judged as the cluster decides: safe while fewer than all
//! nodes are lost, issued again by a crash of every node when they do not flush each commit, and
//! not judged on a node cut from the primary component (it refuses writes).
//!
//! Build the command first (`cargo build -p gdid-cli`), then
//! `cargo test -p gdid-faults --test test_check`. Without PostgreSQL, MariaDB or Galera a test
//! is skipped, and fails under `CI=true`.

use std::process::Command;
use std::time::{Duration, Instant};

use gdid::{Durability, Setting, Store, Verdict};
use gdid_faults::gdid_binary;
use gdid_faults::server::{GaleraCluster, MariaDbReplicas, PostgresReplicas};

/// How long a reloaded setting may take to show.
const PATIENCE: Duration = Duration::from_secs(30);

/// The report of `url`, as the library reads it.
fn checked(url: &str) -> Durability {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(Store::options().check(url))
        .unwrap_or_else(|e| panic!("checking {url}: {e}"))
}

/// The setting `name` of `report`, if it has one.
fn setting<'a>(report: &'a Durability, name: &str) -> Option<&'a Setting> {
    report.settings.iter().find(|setting| setting.name == name)
}

/// The verdict of setting `name` in `report`.
fn verdict(report: &Durability, name: &str) -> Verdict {
    setting(report, name)
        .unwrap_or_else(|| panic!("no setting {name} in\n{report}"))
        .verdict
}

/// Waits until `url`'s report says `value` for setting `name` (a reload is asynchronous), and
/// returns that report.
fn report_once(url: &str, name: &str, value: &str) -> Durability {
    let started = Instant::now();
    loop {
        let report = checked(url);
        if setting(&report, name).is_some_and(|setting| setting.value.starts_with(value)) {
            return report;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{name} never became {value}:\n{report}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `gdid check --store url`: its exit status, standard output and standard error.
fn gdid_check(url: &str) -> (i32, String, String) {
    let binary = gdid_binary().unwrap_or_else(|e| panic!("{e}"));
    let output = Command::new(binary)
        .args(["check", "--store", url])
        .output()
        .expect("running gdid check");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Asserts that `gdid check` exits 1 naming each of `names` as at risk on stderr.
fn command_names_risk(url: &str, names: &[&str]) {
    let (code, out, err) = gdid_check(url);
    assert_eq!(code, 1, "{url}: exit {code}\n{out}{err}");
    for name in names {
        assert!(
            err.contains(&format!("{name} (")),
            "{url}: {name} not named at risk: {err}"
        );
    }
    assert!(out.contains("verdict: at risk"), "{out}");
}

/// Asserts that `gdid check` exits 1 naming each of `names` on stderr, its verdict unknown (not
/// at risk).
fn command_says_unknown(url: &str, names: &[&str]) {
    let (code, out, err) = gdid_check(url);
    assert_eq!(code, 1, "{url}: exit {code}\n{out}{err}");
    for name in names {
        assert!(
            err.contains(&format!("{name} (unknown)")),
            "{url}: {name} not named unknown: {err}"
        );
    }
    assert!(out.contains("verdict: unknown"), "{out}");
}

/// Asserts that `gdid check` exits 0, saying the setup is safe.
fn command_says_safe(url: &str) {
    let (code, out, err) = gdid_check(url);
    assert_eq!(code, 0, "{url}: exit {code}\n{out}{err}");
    assert!(out.contains("verdict: safe"), "{out}");
}

/// `Some` when `installed` says the engine is here; `None`, said skipped, otherwise (a failure
/// with `CI=true`).
fn available(store: &str, installed: Result<(), String>) -> bool {
    match installed {
        Ok(()) => {
            gdid_testkit::ran(store);
            true
        }
        Err(why) => {
            gdid_testkit::unavailable(store, &why);
            false
        }
    }
}

/// Runs `sql` (an `ALTER SYSTEM`) on `pg`'s primary and reloads its configuration.
fn set(pg: &PostgresReplicas, sql: &str) {
    pg.query(0, sql).expect(sql);
    pg.query(0, "SELECT pg_reload_conf()").expect("reload");
}

#[test]
fn postgres_crash_settings_and_standbys() {
    if !available("PostgreSQL", PostgresReplicas::installed()) {
        return;
    }
    // Started with fsync = off (the replicated sets' own setting): a crash loses blocks.
    let unsynced = PostgresReplicas::start().expect("PostgreSQL");
    let url = unsynced.url(0);
    assert_eq!(verdict(&checked(&url), "fsync"), Verdict::IssuedAgain);
    command_names_risk(&url, &["fsync"]);
    drop(unsynced);

    let mut pg = PostgresReplicas::start_with(&["fsync=on"]).expect("PostgreSQL");
    let url = pg.url(0);
    let alone = checked(&url);
    assert!(alone.is_safe(), "{alone}");
    command_says_safe(&url);

    set(&pg, "ALTER SYSTEM SET full_page_writes = off");
    let report = report_once(&url, "full_page_writes", "off");
    assert_eq!(
        verdict(&report, "full_page_writes"),
        Verdict::IssuedAgain,
        "{report}"
    );
    assert_eq!(report.at_risk().count(), 1, "{report}");
    command_names_risk(&url, &["full_page_writes"]);
    set(&pg, "ALTER SYSTEM RESET full_page_writes");
    report_once(&url, "full_page_writes", "on");
    // synchronous_commit = off for the server: gdid's connections raise it for their own
    // commits, so its blocks are safe, and the report says both values.
    set(&pg, "ALTER SYSTEM SET synchronous_commit = off");
    let report = report_once(&url, "synchronous_commit", "off, raised to on");
    assert!(report.is_safe(), "{report}");
    command_says_safe(&url);
    set(&pg, "ALTER SYSTEM RESET synchronous_commit");
    report_once(&url, "synchronous_commit", "on");

    // The failover issue's reproduction: an asynchronous streaming standby.
    let standby = pg.add_standby(0).expect("a standby");
    let report = report_once(&url, "standbys", "walreceiver async");
    let asynchronous = ["standbys", "synchronous_standby_names"];
    for name in asynchronous {
        assert_eq!(verdict(&report, name), Verdict::LostOnFailover, "{name}");
    }
    command_names_risk(&url, &asynchronous);
    // The standby itself cannot be judged: its primary decides.
    let on_standby = checked(&pg.url(standby));
    assert_eq!(
        verdict(&on_standby, "pg_is_in_recovery()"),
        Verdict::Unknown
    );
    command_names_risk(&pg.url(standby), &["pg_is_in_recovery()"]);

    // Made synchronous: every commit waits for it.
    set(&pg, "ALTER SYSTEM SET synchronous_standby_names = '*'");
    let report = report_once(&url, "standbys", "walreceiver sync");
    assert!(report.is_safe(), "{report}");
    command_says_safe(&url);
    // Commits of other sessions stop waiting for it; gdid's still wait.
    set(&pg, "ALTER SYSTEM SET synchronous_commit = local");
    let report = report_once(&url, "synchronous_commit", "local, raised to on");
    assert!(report.is_safe(), "{report}");
    command_says_safe(&url);
}

/// The meaning of setting `name` in `report`.
fn meaning<'a>(report: &'a Durability, name: &str) -> &'a str {
    &setting(report, name)
        .unwrap_or_else(|| panic!("no setting {name} in\n{report}"))
        .meaning
}

/// Names standby `i` of `pg` `name` (its `application_name`, which `synchronous_standby_names`
/// lists; `pg_basebackup -R` leaves it `walreceiver`): its connection to the primary, reloaded,
/// says so.
fn rename_standby(pg: &PostgresReplicas, i: usize, name: &str) {
    let conninfo = pg
        .query(i, "SHOW primary_conninfo")
        .expect("primary_conninfo");
    let renamed = format!("{conninfo} application_name={name}").replace('\'', "''");
    pg.query(
        i,
        &format!("ALTER SYSTEM SET primary_conninfo = '{renamed}'"),
    )
    .expect("renaming the standby");
    pg.query(i, "SELECT pg_reload_conf()").expect("reload");
}

#[test]
fn postgres_synchronous_quorum_and_priority() {
    if !available("PostgreSQL", PostgresReplicas::installed()) {
        return;
    }
    // Started waiting for a quorum of one: the standby pg_basebackup makes is `walreceiver`.
    // (A setting given at the start outlasts ALTER SYSTEM: the other cases use a set of their
    // own.)
    let mut pg = PostgresReplicas::start_with(&[
        "fsync=on",
        "synchronous_standby_names=ANY 1 (walreceiver)",
    ])
    .expect("PostgreSQL");
    let url = pg.url(0);
    pg.add_standby(0).expect("a standby");
    let report = report_once(&url, "standbys", "walreceiver quorum");
    assert!(report.is_safe(), "{report}");
    assert!(
        meaning(&report, "standbys")
            .contains("on walreceiver (quorum): a failover that promotes it"),
        "{report}"
    );
    command_says_safe(&url);
    drop(pg);

    let mut pg = PostgresReplicas::start_with(&["fsync=on"]).expect("PostgreSQL");
    let url = pg.url(0);
    pg.add_standby(0).expect("a standby");
    // A second standby, named s2: a quorum of one among both.
    let second = pg.add_standby(0).expect("a second standby");
    rename_standby(&pg, second, "s2");
    set(
        &pg,
        "ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 (walreceiver, \"S2\")'",
    );
    let report = report_once(&url, "standbys", "s2 quorum, walreceiver quorum");
    assert!(report.is_safe(), "{report}");
    assert!(
        meaning(&report, "standbys").contains("promotes the most advanced of them"),
        "{report}"
    );
    command_says_safe(&url);

    // By priority: s2 first, walreceiver waiting its turn (potential), never to be promoted.
    set(
        &pg,
        "ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 (s2, walreceiver)'",
    );
    let report = report_once(&url, "standbys", "s2 sync, walreceiver potential");
    assert!(report.is_safe(), "{report}");
    let promote = meaning(&report, "standbys");
    assert!(
        promote.contains("on s2 (sync)") && promote.contains("not walreceiver"),
        "{report}"
    );
    command_says_safe(&url);

    // Asynchronous streaming: a failover loses what the standbys had not received.
    set(&pg, "ALTER SYSTEM SET synchronous_standby_names = ''");
    let report = report_once(&url, "standbys", "s2 async, walreceiver async");
    let asynchronous = ["standbys", "synchronous_standby_names"];
    for name in asynchronous {
        assert_eq!(verdict(&report, name), Verdict::LostOnFailover, "{report}");
    }
    command_names_risk(&url, &asynchronous);
}

#[test]
fn mariadb_crash_settings_replication_and_semi_sync() {
    if !available("MariaDB", MariaDbReplicas::installed()) {
        return;
    }
    let db = MariaDbReplicas::start().expect("MariaDB");
    let (primary, replica) = (db.url(0), db.url(1));
    let sql = |i: usize, sql: &str| db.query(i, sql).expect(sql);

    // A primary with a binary log not flushed at each commit, and an asynchronous replica.
    let report = checked(&primary);
    assert_eq!(verdict(&report, "sync_binlog"), Verdict::IssuedAgain);
    assert_eq!(
        verdict(&report, "rpl_semi_sync_master_enabled"),
        Verdict::LostOnFailover,
        "{report}"
    );
    command_names_risk(&primary, &["sync_binlog", "rpl_semi_sync_master_enabled"]);
    // The replica applies the primary's log: blocks reserved on it are overwritten.
    assert_eq!(
        verdict(&checked(&replica), "replication"),
        Verdict::IssuedAgain
    );
    command_names_risk(&replica, &["replication"]);

    // Semi-synchronous, at first as MariaDB's defaults have it: AFTER_COMMIT, 10 s timeout.
    sql(0, "SET GLOBAL sync_binlog = 1");
    sql(0, "SET GLOBAL rpl_semi_sync_master_enabled = ON");
    sql(
        1,
        "SET GLOBAL rpl_semi_sync_slave_enabled = ON; STOP SLAVE IO_THREAD; START SLAVE IO_THREAD",
    );
    let report = report_once(&primary, "replicas", "1 connected, all acknowledging");
    let falling_back = [
        "rpl_semi_sync_master_wait_point",
        "rpl_semi_sync_master_timeout",
    ];
    for name in falling_back {
        assert_eq!(verdict(&report, name), Verdict::LostOnFailover, "{name}");
    }
    command_names_risk(&primary, &falling_back);

    // AFTER_SYNC, waiting a day rather than falling back: safe.
    sql(
        0,
        "SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_SYNC; \
         SET GLOBAL rpl_semi_sync_master_timeout = 86400000",
    );
    let report = checked(&primary);
    assert!(report.is_safe(), "{report}");
    command_says_safe(&primary);

    // Each crash setting alone.
    for (set, name, reset) in [
        (
            "SET GLOBAL innodb_flush_log_at_trx_commit = 2",
            "innodb_flush_log_at_trx_commit",
            "SET GLOBAL innodb_flush_log_at_trx_commit = 1",
        ),
        (
            "SET GLOBAL read_only = ON",
            "read_only",
            "SET GLOBAL read_only = OFF",
        ),
    ] {
        sql(0, set);
        let report = checked(&primary);
        assert_eq!(verdict(&report, name), Verdict::IssuedAgain, "{report}");
        assert_eq!(report.at_risk().count(), 1, "{report}");
        command_names_risk(&primary, &[name]);
        sql(0, reset);
    }
    assert!(checked(&primary).is_safe());
}

#[test]
fn galera_nodes_judged_as_the_cluster_decides() {
    if !available("Galera", GaleraCluster::installed()) {
        return;
    }
    let mut cluster = GaleraCluster::start(3).expect("Galera");
    let url = cluster.url(0);
    // Each node flushes each commit; its binary log does not (sync_binlog = 0), which the
    // cluster does not recover a node from.
    let report = checked(&url);
    assert!(report.is_safe(), "{report}");
    assert!(
        report.server.contains("Galera node of cluster "),
        "{report}"
    );
    assert_eq!(
        setting(&report, "sync_binlog").map(|s| s.value.as_str()),
        Some("0")
    );
    command_says_safe(&url);

    // A node lost: the other two have each acknowledged commit.
    cluster.kill(2).expect("killing node 2");
    let report = report_once(&url, "wsrep_cluster_size", "2");
    assert!(report.is_safe(), "{report}");
    command_says_safe(&url);
    cluster.rejoin(2).expect("node 2 back");

    // A node cut from the group refuses writes: not judged there, and no loss.
    cluster.isolate(2).expect("isolating node 2");
    let cut = cluster.url(2);
    let report = report_once(&cut, "wsrep_cluster_status", "non-Primary");
    assert_eq!(report.worst(), Verdict::Unknown, "{report}");
    for name in ["wsrep_cluster_status", "wsrep_ready"] {
        assert_eq!(verdict(&report, name), Verdict::Unknown, "{report}");
    }
    assert!(
        meaning(&report, "wsrep_cluster_status").contains("refuses writes"),
        "{report}"
    );
    command_says_unknown(&cut, &["wsrep_cluster_status", "wsrep_ready"]);
    cluster.reconnect(2).expect("node 2 reconnected");
    assert!(checked(&cut).is_safe());
    drop(cluster);

    // Every node flushing about once a second: a crash of all of them loses acknowledged
    // commits, and the cluster bootstrapped again is the same one (its state UUID kept).
    let mut lazy =
        GaleraCluster::start_with(2, &["innodb_flush_log_at_trx_commit=2"]).expect("Galera");
    let url = lazy.url(0);
    let before = checked(&url);
    assert_eq!(
        verdict(&before, "innodb_flush_log_at_trx_commit"),
        Verdict::IssuedAgain,
        "{before}"
    );
    assert_eq!(before.at_risk().count(), 1, "{before}");
    command_names_risk(&url, &["innodb_flush_log_at_trx_commit"]);
    lazy.kill_all().expect("a power cut");
    let advanced = lazy.most_advanced().expect("the most advanced node");
    lazy.bootstrap_from(advanced).expect("bootstrapped again");
    let after = checked(&url);
    assert_eq!(after.server, before.server, "the same cluster");
    assert_eq!(
        verdict(&after, "innodb_flush_log_at_trx_commit"),
        Verdict::IssuedAgain
    );
}
