//! The lineage fence on the real servers: a row last moved by another server (as after a
//! failover to a replica that lagged, simulated here by writing another server's lineage into
//! the row) moves to a new era in the reserving statement itself; a one-at-a-time counter's row
//! refuses until its floor is raised; a second change within a minute is refused; a give-back
//! on a row of another lineage takes nothing back; a sharded counter's range of another server
//! refuses until the ranges skip ahead, and its hi-lo windows until they are skipped past. The
//! failovers themselves, on real streaming replication, are the fault suite's (gdid-faults,
//! `test_failover`).

mod common;

use common::{execute, fresh_scope};
use gdid_engine::backend::lineage::{FENCE_EPOCH_UNIX, seconds_now};
use gdid_engine::backend::{CounterKey, CounterStore, StoredInt, numbering::COUNTER_KEY};
use gdid_engine::windows::{WindowGenerator, WindowShard};
use gdid_engine::{
    Authority, Block, CounterState,
    backend::{CounterRow, raise_floor},
};
use gdid_engine::{Error as IdError, ErrorDetail, IdGenerator, Pick, RangeLayout, Recourse};
use gdid_sql::{SqlAuthority, SqlShardedCounter, SqlStore};

/// The servers that keep lineages (SQLite keeps none).
fn servers() -> Vec<(&'static str, String)> {
    common::urls()
        .into_iter()
        .filter(|(dialect, _)| *dialect != "sqlite")
        .collect()
}

/// An authority on each server that keeps lineages, with a fresh scope named after `test`.
async fn authorities(test: &str) -> Vec<(&'static str, SqlAuthority, String)> {
    let mut opened = Vec::new();
    for (dialect, url) in servers() {
        let authority = SqlAuthority::open(&url).await.unwrap();
        opened.push((dialect, authority, fresh_scope(test)));
    }
    opened
}

/// Asserts that `refused` (an authority's error, or a generator's: an authority's refusal is the
/// generator's) refuses rows last moved by another server, with a remedy saying each of `says`.
fn assert_switched(dialect: &str, refused: impl Into<IdError>, says: &[&str]) {
    let refused = refused.into();
    assert!(
        matches!(refused.detail(), ErrorDetail::Switched { remedy, .. }
            if says.iter().all(|said| remedy.contains(said))),
        "{dialect}: {refused}"
    );
}

/// Makes the row of (`key`, `scope`, `sequence`) look last moved by another server.
async fn moved_elsewhere(store: &SqlStore, key: u8, scope: &str, sequence: &str) {
    execute(
        store,
        format!(
            "UPDATE gdid_counters SET lineage = 'another server' WHERE authority = {key} \
             AND scope_name = '{scope}' AND sequence_name = '{sequence}'"
        ),
    )
    .await;
}

/// Makes the rows of `sequence` in `table` (its ranges or its windows) look last moved by another
/// server.
async fn rows_moved_elsewhere(store: &SqlStore, table: &str, sequence: &str) {
    execute(
        store,
        format!("UPDATE {table} SET lineage = 'another server' WHERE sequence_name = '{sequence}'"),
    )
    .await;
}

#[tokio::test]
async fn a_row_of_another_server_moves_to_a_new_era_in_the_reserving_statement() {
    for (dialect, authority, scope) in authorities("lineage_era").await {
        let before = authority.allocate(&scope, "q", 10).await.unwrap();
        assert_eq!(before.era(), 0, "{dialect}: a fresh row starts at era 0");
        let again = authority.allocate(&scope, "q", 10).await.unwrap();
        assert_eq!(
            again.era(),
            0,
            "{dialect}: the same lineage stays in its era"
        );

        moved_elsewhere(authority.store(), authority.number(), &scope, "q").await;
        let clock = seconds_now();
        let after = authority.allocate(&scope, "q", 10).await.unwrap();
        let era = i64::from(after.era());
        // The server's clock, not this process's: within a few seconds of it.
        assert!(
            (clock - 5..=clock + 5).contains(&era),
            "{dialect}: era {era}, clock {clock} (epoch {FENCE_EPOCH_UNIX})"
        );
        assert_eq!(
            after.start(),
            0,
            "{dialect}: the new era's block starts at 0"
        );
        assert!(after.first() > again.last(), "{dialect}: order kept");
        // The row took the server's lineage: the next block is in the same era.
        let next = authority.allocate(&scope, "q", 10).await.unwrap();
        assert_eq!((next.era(), next.start()), (after.era(), 10), "{dialect}");
    }
}

#[tokio::test]
async fn a_second_lineage_change_within_a_minute_is_refused_not_another_era() {
    for (dialect, authority, scope) in authorities("lineage_flap").await {
        authority.allocate(&scope, "q", 5).await.unwrap();
        moved_elsewhere(authority.store(), authority.number(), &scope, "q").await;
        let fenced = authority.allocate(&scope, "q", 5).await.unwrap();
        moved_elsewhere(authority.store(), authority.number(), &scope, "q").await;
        let refused = authority.allocate(&scope, "q", 5).await.unwrap_err();
        assert_eq!(
            refused.recourse(),
            Recourse::Repair,
            "another authority may serve"
        );
        let says = ["less than 60 s ago", "point it at one primary"];
        assert_switched(dialect, refused, &says);
        // Nothing moved: the record waits for its minute to pass.
        let key = CounterKey::new(authority.number(), &scope, "q");
        let row = authority.read(&key).await.unwrap().unwrap();
        let era = i64::from(fenced.era());
        assert_eq!(
            row,
            [StoredInt::Integer(era), StoredInt::Integer(5)],
            "{dialect}"
        );
    }
}

#[tokio::test]
async fn a_one_at_a_time_counter_of_another_server_refuses_until_its_floor_is_raised() {
    for (dialect, authority, scope) in authorities("lineage_counter").await {
        let first = authority.reserve_counter(&scope, "c", 3).await.unwrap();
        assert_eq!(first.start(), 1, "{dialect}");
        moved_elsewhere(authority.store(), COUNTER_KEY, &scope, "c").await;
        let refused = authority.reserve_counter(&scope, "c", 1).await.unwrap_err();
        assert_switched(dialect, refused, &["gdid sequences set-floor --counter"]);
        // The operator's floor adopts the server's lineage: values from it on.
        let key = CounterKey::new(COUNTER_KEY, &scope, "c");
        let floor = CounterState {
            era: 0,
            next: 1_000,
        };
        assert!(raise_floor(&authority, key, floor).await.unwrap());
        let resumed = authority.reserve_counter(&scope, "c", 1).await.unwrap();
        assert_eq!((resumed.era(), resumed.start()), (0, 1_000), "{dialect}");
    }
}

#[tokio::test]
async fn a_give_back_to_a_row_of_another_server_takes_nothing_back() {
    for (dialect, authority, scope) in authorities("lineage_give_back").await {
        let block = authority.allocate(&scope, "q", 10).await.unwrap();
        let tail = Block::new(block.era(), block.authority(), block.start() + 4, 6).unwrap();
        moved_elsewhere(authority.store(), authority.number(), &scope, "q").await;
        assert!(
            !authority.give_back(&scope, "q", tail).await.unwrap(),
            "{dialect}: a copy that may have missed later blocks takes no ids back"
        );
    }
}

#[tokio::test]
async fn a_row_without_lineage_on_a_server_never_promoted_keeps_its_era() {
    for (dialect, authority, scope) in authorities("lineage_legacy").await {
        authority.allocate(&scope, "q", 5).await.unwrap();
        // A row of before lineages were kept.
        execute(
            authority.store(),
            format!("UPDATE gdid_counters SET lineage = NULL WHERE scope_name = '{scope}'"),
        )
        .await;
        let next = authority.allocate(&scope, "q", 5).await.unwrap();
        assert_eq!((next.era(), next.start()), (0, 6), "{dialect}");
    }
}

#[tokio::test]
async fn a_range_of_another_server_refuses_until_the_ranges_skip_ahead() {
    for (dialect, url) in servers() {
        let store = SqlStore::connect(&url).await.unwrap();
        let sequence = fresh_scope("lineage_ranges");
        let layout = RangeLayout::new(1_000_000, 1_000_000, 1).unwrap();
        let counter = SqlShardedCounter::create(store.clone(), &sequence, layout, Pick::RoundRobin)
            .await
            .unwrap();
        let before = counter.next_id().await.unwrap();
        rows_moved_elsewhere(&store, "gdid_ranges", &sequence).await;
        let refused = counter.next_id().await.unwrap_err();
        let remedy = format!("gdid sequences skip-ranges --sequence {sequence} --by N");
        assert_switched(dialect, refused, &[&remedy]);
        assert_eq!(
            SqlShardedCounter::skip(&store, &sequence, 500)
                .await
                .unwrap(),
            1
        );
        let after = counter.next_id().await.unwrap();
        assert_eq!(
            after,
            before + 501,
            "{dialect}: 500 values skipped, none repeated"
        );
    }
}

#[tokio::test]
async fn windows_of_another_server_refuse_until_skipped_past() {
    for (dialect, url) in servers() {
        let store = SqlStore::connect(&url).await.unwrap();
        let sequence = fresh_scope("lineage_windows");
        store.prepare().await.unwrap();
        assert!(store.claim(&sequence, 1, 1_001).await.unwrap());
        store.open(&sequence, 1, 1_001).await.unwrap();
        let generator =
            WindowGenerator::new(vec![(url.clone(), store.clone())], &sequence, 10).unwrap();
        let before = generator.next_id().await.unwrap();
        rows_moved_elsewhere(&store, "gdid_windows", &sequence).await;
        let fresh =
            WindowGenerator::new(vec![(url.clone(), store.clone())], &sequence, 10).unwrap();
        let refused = fresh.next_id().await.unwrap_err();
        let remedy = format!("gdid sequences skip-windows --store URL --sequence {sequence}");
        assert_switched(dialect, refused, &[&remedy]);
        assert_eq!(
            store.skip(&sequence, 5_000).await.unwrap(),
            Some(1),
            "{dialect}"
        );
        // The agent's next window starts past the skipped values.
        let high = store.high_water(&sequence).await.unwrap();
        assert_eq!(high, 6_001, "{dialect}");
        assert!(store.claim(&sequence, high, high + 1_000).await.unwrap());
        store.open(&sequence, high, high + 1_000).await.unwrap();
        let after = fresh.next_id().await.unwrap();
        assert!(after >= 6_001 && after > before, "{dialect}: {after}");
    }
}
