//! A Galera cluster (three MariaDB nodes, synchronous multi-primary replication) as the store:
//! every node is the same database, reached through its own server. Ids are never refused and
//! never repeated with writers on every node at once, through a node killed and rejoined, a node
//! cut from the group (it refuses writes, ERROR 1047), the whole cluster killed and bootstrapped
//! from its most advanced node, and certification conflicts (ERROR 1213) on give-backs; a fresh
//! store opens without an authority number given, and no era moves without a failover.
//!
//! One cluster serves the whole test binary ([`GaleraCluster`], about 20 s to start): the tests
//! that only write share it (a read lock), those that kill or cut nodes have it to themselves (a
//! write lock) and leave it whole again; a test that panicked midway is healed after by the next.
//! The conformance suite runs through each node, on databases of that node's own (all but its
//! `processes` group, whose workers run this binary again: each would start a cluster of its
//! own).
//!
//! `cargo test -p gdid-faults --test test_galera`. Without Galera (`galera-4`, `rsync`) or
//! MariaDB the tests are skipped, and fail under `CI=true`.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use gdid::verify::Ledger;
use gdid::{BlockGenerator, Gdid, Pick, RangeLayout, SharedIdGenerator, Store};
use gdid_faults::server::GaleraCluster;
use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

/// The cluster's nodes.
const NODES: usize = 3;

/// The store, in tallies and messages.
const STORE: &str = "MariaDB";

/// The scope of every sequence here.
const SCOPE: &str = "galera";

// ----------------------------------------------------------------------------------------------
// The shared cluster
// ----------------------------------------------------------------------------------------------

/// The cluster, and whether it is whole (every node running, synced, in the primary component)
/// as far as the tests know: a test that has it to itself may break it.
#[derive(Debug)]
struct Bench {
    cluster: GaleraCluster,
    whole: bool,
}

impl Bench {
    /// Brings the cluster back whole if a test left it broken.
    fn heal(&mut self) {
        if !self.whole {
            let healed = tokio::task::block_in_place(|| self.cluster.heal());
            healed.unwrap_or_else(|e| panic!("healing the Galera cluster: {e}"));
            self.whole = true;
        }
    }
}

/// What became of the binary's cluster.
enum Started {
    Running(Arc<RwLock<Bench>>),
    /// Galera is not installed here: why.
    NotInstalled(String),
    /// It is, but the cluster did not start: why.
    Failed(String),
}

/// The binary's cluster, started by the first test that asks, with every commit flushed to disk
/// (`innodb_flush_log_at_trx_commit=1`, as the bootstrap test needs); `None` (said skipped, a
/// failure with `CI=true`) when Galera is not installed.
///
/// # Panics
///
/// When it is installed and the cluster does not start.
fn cluster() -> Option<Arc<RwLock<Bench>>> {
    static CLUSTER: OnceLock<Started> = OnceLock::new();
    let started = CLUSTER.get_or_init(|| {
        if let Err(why) = GaleraCluster::installed() {
            return Started::NotInstalled(why);
        }
        let since = Instant::now();
        let settings = ["innodb_flush_log_at_trx_commit=1"];
        match tokio::task::block_in_place(|| GaleraCluster::start_with(NODES, &settings)) {
            Ok(cluster) => {
                eprintln!(
                    "a Galera cluster of {NODES} nodes started in {:?}",
                    since.elapsed()
                );
                Started::Running(Arc::new(RwLock::new(Bench {
                    cluster,
                    whole: true,
                })))
            }
            Err(e) => Started::Failed(e),
        }
    });
    match started {
        Started::Running(bench) => {
            gdid_testkit::ran(STORE);
            Some(bench.clone())
        }
        Started::NotInstalled(why) => {
            gdid_testkit::unavailable(STORE, &format!("Galera: {why}"));
            None
        }
        Started::Failed(e) => panic!("starting the Galera cluster: {e}"),
    }
}

/// The cluster, whole, shared with the other tests that only write.
async fn shared() -> Option<OwnedRwLockReadGuard<Bench>> {
    let bench = cluster()?;
    let read = bench.clone().read_owned().await;
    if read.whole {
        return Some(read);
    }
    drop(read);
    let mut write = bench.write_owned().await;
    write.heal();
    Some(write.downgrade())
}

/// The cluster, whole, to this test alone: it may kill or cut nodes (it is healed after, by the
/// next test that asks, if this one does not).
async fn exclusive() -> Option<OwnedRwLockWriteGuard<Bench>> {
    let mut bench = cluster()?.write_owned().await;
    bench.heal();
    bench.whole = false;
    Some(bench)
}

/// Runs a blocking call of the cluster from a test's task.
fn blocking<T>(call: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(call)
}

/// Unwraps a step of the cluster's handling: it must work for the test to mean anything.
fn step<T>(what: &str, result: Result<T, String>) -> T {
    result.unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// The URL of `database` through node `node`, made (through node 0) if missing.
fn database(cluster: &GaleraCluster, node: usize, database: &str) -> String {
    step(
        &format!("making database {database}"),
        blocking(|| cluster.query(0, &format!("CREATE DATABASE IF NOT EXISTS {database}"))),
    );
    let url = cluster.url(node);
    let server = url.strip_suffix("/test").unwrap_or(&url);
    format!("{server}/{database}")
}

/// Opens the store at `url` as authority 1. The tests name their stores' numbers, as a
/// deployment may (`--authority`), so that each tests what it says: whether a fresh store opens
/// without one is the fresh store's test.
async fn numbered(url: &str) -> Result<Store, gdid::StoreError> {
    Store::options().authority(1).open(url).await
}

/// Has every node write a row of its own (so that each node's binary log holds writes of every
/// server), through the `mariadb` client.
fn every_node_writes(cluster: &GaleraCluster) {
    for node in 0..NODES {
        let sql = format!(
            "CREATE TABLE IF NOT EXISTS test.galera_marks \
             (node INT PRIMARY KEY, written BIGINT NOT NULL); \
             REPLACE INTO test.galera_marks VALUES ({node}, UNIX_TIMESTAMP())"
        );
        step(
            &format!("writing on node {node}"),
            blocking(|| cluster.query(node, &sql)),
        );
    }
}

// ----------------------------------------------------------------------------------------------
// Writers
// ----------------------------------------------------------------------------------------------

/// What a writer got: each id or error, with when.
#[derive(Debug, Default)]
struct Got {
    ids: Vec<(Instant, Gdid)>,
    errors: Vec<(Instant, String)>,
}

/// A long-lived GDID generator taking an id every `pace` until `stop`, on a task.
fn spawn_writer(
    ids: BlockGenerator,
    pace: Duration,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<(BlockGenerator, Got)> {
    tokio::spawn(async move {
        let mut got = Got::default();
        while !stop.load(Ordering::Relaxed) {
            match ids.next_id().await {
                Ok(id) => got.ids.push((Instant::now(), id)),
                Err(e) => {
                    got.errors.push((Instant::now(), e.to_string()));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            tokio::time::sleep(pace).await;
        }
        (ids, got)
    })
}

/// Every writer's ids in a ledger, each writer named `node N`: the report (`gdid verify`'s).
fn verdict(writers: impl IntoIterator<Item = (String, Vec<Gdid>)>) -> gdid::verify::Report {
    let mut ledger = Ledger::new();
    for (name, ids) in writers {
        let writer = ledger.writer(&name);
        for id in ids {
            ledger.record(writer, id);
        }
    }
    ledger.report()
}

/// The ids a writer got, without when.
fn ids_of(got: &Got) -> Vec<Gdid> {
    got.ids.iter().map(|(_, id)| *id).collect()
}

/// The first few errors of a list, for a message.
fn first_errors(errors: &[String]) -> String {
    errors
        .iter()
        .take(5)
        .cloned()
        .collect::<Vec<_>>()
        .join("\n  ")
}

/// The `u64` ids of `ids` (a one-at-a-time, sharded or window generator): `count` of them, or
/// the first refusal.
async fn take_u64(ids: &SharedIdGenerator<u64>, count: usize) -> Result<Vec<u64>, String> {
    let mut got = Vec::with_capacity(count);
    for _ in 0..count {
        got.push(ids.next_id_boxed().await.map_err(|e| e.to_string())?);
    }
    Ok(got)
}

/// Writers of `u64` ids of `strategy`, one per node, at once: `take` takes a writer's ids from
/// the URL of database `database_name` through its node. Fails the test on a refusal or a
/// repeat.
async fn u64_writers_on_every_node<F, Fut>(strategy: &str, database_name: &str, take: F)
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<Vec<u64>, String>> + Send + 'static,
{
    let Some(bench) = shared().await else { return };
    let urls: Vec<String> = (0..NODES)
        .map(|node| database(&bench.cluster, node, database_name))
        .collect();
    let writers: Vec<_> = urls
        .into_iter()
        .map(|url| tokio::spawn(take(url)))
        .collect();
    let (mut refusals, mut seen, mut repeats, mut total) = (Vec::new(), HashSet::new(), 0, 0);
    for (node, writer) in writers.into_iter().enumerate() {
        match writer.await.expect("a writer's task") {
            Ok(ids) => {
                total += ids.len();
                repeats += ids.into_iter().filter(|id| !seen.insert(*id)).count();
            }
            Err(e) => refusals.push(format!("node {node}: {e}")),
        }
    }
    eprintln!(
        "{strategy}: {total} ids from {NODES} nodes at once, {repeats} repeated, {} refused",
        refusals.len()
    );
    assert!(
        refusals.is_empty() && repeats == 0,
        "{strategy} with a writer on every node: {} refused, {repeats} repeated:\n  {}",
        refusals.len(),
        first_errors(&refusals)
    );
}

// ----------------------------------------------------------------------------------------------
// Every strategy, a writer on every node at once
// ----------------------------------------------------------------------------------------------

/// Ids each writer takes.
const PER_WRITER: usize = 1500;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gdids_from_every_node_at_once_are_never_refused_nor_repeated() {
    let Some(bench) = shared().await else { return };
    let urls: Vec<String> = (0..NODES)
        .map(|node| database(&bench.cluster, node, "strategy_gdid"))
        .collect();
    // Small blocks: the writers go back to the store, through their nodes, a hundred times each.
    let writers: Vec<_> = urls
        .into_iter()
        .map(|url| {
            tokio::spawn(async move {
                let store = numbered(&url).await.map_err(|e| e.to_string())?;
                let ids = store
                    .block_generator(SCOPE, "orders")
                    .fixed_block_size(15)
                    .build()
                    .map_err(|e| e.to_string())?;
                let mut got = Vec::with_capacity(PER_WRITER);
                for _ in 0..PER_WRITER {
                    got.push(ids.next_id().await.map_err(|e| e.to_string())?);
                }
                ids.close().await.map_err(|e| e.to_string())?;
                Ok::<_, String>(got)
            })
        })
        .collect();
    let (mut refusals, mut ids) = (Vec::new(), Vec::new());
    for (node, writer) in writers.into_iter().enumerate() {
        match writer.await.expect("a writer's task") {
            Ok(got) => ids.push((format!("node {node}"), got)),
            Err(e) => refusals.push(format!("node {node}: {e}")),
        }
    }
    let report = verdict(ids);
    eprintln!("GDIDs: {report}");
    assert!(
        refusals.is_empty() && report.is_unique(),
        "GDIDs with a writer on every node: {} refused:\n  {}\n{report}",
        refusals.len(),
        first_errors(&refusals)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_at_a_time_ids_from_every_node_at_once_are_never_refused_nor_repeated() {
    u64_writers_on_every_node("one-at-a-time", "strategy_counter", |url| async move {
        let store = Store::options().unnumbered().open(&url).await;
        let store = store.map_err(|e| e.to_string())?;
        take_u64(&store.one_at_a_time(SCOPE, "invoices"), 300).await
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sharded_ids_from_every_node_at_once_are_never_refused_nor_repeated() {
    u64_writers_on_every_node("sharded", "strategy_sharded", |url| async move {
        let store = Store::options().unnumbered().open(&url).await;
        let store = store.map_err(|e| e.to_string())?;
        let layout = RangeLayout::decimal_digits(12, 8).map_err(|e| e.to_string())?;
        let ids = store.sharded("accounts", layout, Pick::Random).await;
        take_u64(&ids.map_err(|e| e.to_string())?, 500).await
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn window_ids_from_every_node_at_once_are_never_refused_nor_repeated() {
    // Each node's agent opens windows at once with the others', then its generator takes ids.
    u64_writers_on_every_node("hi-lo windows", "strategy_windows", |url| async move {
        let stores = Store::options().unnumbered().open_all(&[url]).await;
        let stores = stores.map_err(|e| e.to_string())?;
        let agent = stores.window_agent(10_000, 2).await;
        let agent = agent.map_err(|e| format!("the agent: {e}"))?;
        agent
            .run_once(&["parcels"])
            .await
            .map_err(|e| format!("the agent's round: {e}"))?;
        let ids = stores.window_generator("parcels", 50);
        take_u64(&ids.map_err(|e| e.to_string())?, 1000).await
    })
    .await;
}

// ----------------------------------------------------------------------------------------------
// Authority numbers and eras
// ----------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fresh_store_opens_without_an_authority_number_on_every_node() {
    let Some(bench) = shared().await else { return };
    let cluster = &bench.cluster;
    every_node_writes(cluster);
    let mut refused = Vec::new();
    for node in 0..NODES {
        let url = database(cluster, node, &format!("fresh_on_node_{node}"));
        match Store::open(&url).await {
            Ok(store) if store.authority_number() == Some(1) => {}
            Ok(store) => refused.push(format!(
                "node {node}: opened as authority {:?}, not 1 (the lowest free)",
                store.authority_number()
            )),
            Err(e) => refused.push(format!("node {node}: {e}")),
        }
    }
    let binlog = blocking(|| cluster.query(0, "SELECT @@gtid_binlog_state"));
    assert!(
        refused.is_empty(),
        "a fresh store (new database) on a Galera cluster whose nodes have all written must open \
         without --authority (node 0's @@gtid_binlog_state: {binlog:?}):\n  {}",
        refused.join("\n  ")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn new_gdid_sequences_stay_in_era_0_on_every_node() {
    let Some(bench) = shared().await else { return };
    let cluster = &bench.cluster;
    every_node_writes(cluster);
    let mut moved = Vec::new();
    for node in 0..NODES {
        let url = database(cluster, node, "eras");
        let store = match numbered(&url).await {
            Ok(store) => store,
            Err(e) => {
                moved.push(format!("node {node}: the store did not open: {e}"));
                continue;
            }
        };
        // A sequence of this node's own, and one every node carries on in turn.
        for sequence in [format!("node_{node}"), "every_node".to_owned()] {
            let ids = store
                .block_generator(SCOPE, &sequence)
                .build()
                .expect("a generator");
            for _ in 0..10 {
                match ids.next_id().await {
                    Ok(id) if id.era() == 0 => {}
                    Ok(id) => {
                        moved.push(format!("node {node}, {sequence}: {id} (era {})", id.era()))
                    }
                    Err(e) => moved.push(format!("node {node}, {sequence}: refused: {e}")),
                }
            }
            let _ = ids.close().await;
        }
    }
    moved.dedup();
    assert!(
        moved.is_empty(),
        "no failover happened, so every new sequence must stay in era 0:\n  {}",
        first_errors(&moved)
    );
}

// ----------------------------------------------------------------------------------------------
// A node killed, a node cut off, every node killed
// ----------------------------------------------------------------------------------------------

/// Two authorities (databases `NAME_a`, authority 1, and `NAME_b`, authority 2); writer N's
/// generator has `NAME_a` through node N first, then `NAME_b` through the next node. Its blocks
/// cover [`COVER`]: longer than the group's freeze while it leaves a dead node out (about 3 s,
/// when every node's commits wait), shorter than a fault ([`HOLD`]), so that a writer whose
/// first authority is behind the faulty node must fail over to its second.
async fn failover_writers(
    cluster: &GaleraCluster,
    name: &str,
    stop: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<(BlockGenerator, Got)>> {
    let (a, b) = (format!("{name}_a"), format!("{name}_b"));
    let settled = [database(cluster, 0, &a), database(cluster, 0, &b)];
    let stores = Store::options()
        .authorities(&[1, 2])
        .open_all(&settled)
        .await;
    step(
        "settling the numbers",
        stores.map(drop).map_err(|e| e.to_string()),
    );
    let mut writers = Vec::new();
    for node in 0..NODES {
        let urls = [
            database(cluster, node, &a),
            database(cluster, (node + 1) % NODES, &b),
        ];
        let stores = Store::options().authorities(&[1, 2]).open_all(&urls).await;
        let stores = step(
            "opening a writer's stores",
            stores.map_err(|e| e.to_string()),
        );
        let ids = stores
            .block_generator(SCOPE, "through_faults")
            .cover(COVER)
            .build()
            .expect("a generator");
        writers.push(spawn_writer(ids, Duration::from_millis(2), stop.clone()));
    }
    writers
}

/// How long the failover writers' blocks last at their rate.
const COVER: Duration = Duration::from_secs(4);

/// How long a fault lasts once the cluster has seen it.
const HOLD: Duration = Duration::from_secs(10);

/// Stops `writers` and gathers what each got (its generator closed).
async fn stop_writers(
    writers: Vec<tokio::task::JoinHandle<(BlockGenerator, Got)>>,
    stop: &AtomicBool,
) -> Vec<Got> {
    stop.store(true, Ordering::Relaxed);
    let mut gots = Vec::new();
    for writer in writers {
        let (ids, got) = writer.await.expect("a writer's task");
        let _ = ids.close().await;
        gots.push(got);
    }
    gots
}

/// The verdict on writers that ran through a fault from `cut` to `healed`: no repeat, no
/// caller error, each writer got ids while the fault lasted, and writer `cut_off` (whose first
/// authority was behind the faulty node) got them from its second authority then.
fn assert_carried_on(what: &str, gots: &[Got], cut_off: usize, (cut, healed): (Instant, Instant)) {
    let report = verdict(
        gots.iter()
            .enumerate()
            .map(|(node, got)| (format!("writer {node}"), ids_of(got))),
    );
    let errors: Vec<String> = gots
        .iter()
        .enumerate()
        .flat_map(|(node, got)| {
            got.errors
                .iter()
                .map(move |(_, e)| format!("writer {node}: {e}"))
        })
        .collect();
    let stalled: Vec<usize> = (0..gots.len())
        .filter(|&node| {
            !gots[node]
                .ids
                .iter()
                .any(|(at, _)| *at > cut && *at < healed)
        })
        .collect();
    let failed_over = gots[cut_off]
        .ids
        .iter()
        .filter(|(at, id)| *at > cut && *at < healed && id.authority() == 2)
        .count();
    eprintln!(
        "{what}: {} caller errors, writers without ids during the fault: {stalled:?}, writer \
         {cut_off} got {failed_over} ids from authority 2 then; {report}",
        errors.len()
    );
    assert!(
        report.is_unique() && errors.is_empty() && stalled.is_empty() && failed_over > 0,
        "{what}: {} repeated, {} caller errors, writers without ids during the fault: \
         {stalled:?}, writer {cut_off}'s ids from its second authority during the fault: \
         {failed_over}:\n  {}\n{report}",
        report.repeated,
        errors.len(),
        first_errors(&errors)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_killed_mid_run_and_rejoined_repeats_nothing() {
    let Some(mut bench) = exclusive().await else {
        return;
    };
    let stop = Arc::new(AtomicBool::new(false));
    let writers = failover_writers(&bench.cluster, "killed", &stop).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let cut = Instant::now();
    step("killing node 1", blocking(|| bench.cluster.kill(1)));
    let left_out = blocking(|| bench.cluster.wait_cluster_size(0, NODES - 1));
    step("nodes 0 and 2 leaving node 1 out", left_out);
    tokio::time::sleep(HOLD).await;
    step("rejoining node 1", blocking(|| bench.cluster.rejoin(1)));
    let healed = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let gots = stop_writers(writers, &stop).await;
    bench.whole = true;
    assert_carried_on("node 1 killed and rejoined", &gots, 1, (cut, healed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_cut_from_the_group_refuses_writes_and_its_clients_fail_over() {
    let Some(mut bench) = exclusive().await else {
        return;
    };
    let stop = Arc::new(AtomicBool::new(false));
    let writers = failover_writers(&bench.cluster, "partitioned", &stop).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let cut = Instant::now();
    step("cutting node 2 off", blocking(|| bench.cluster.isolate(2)));
    let refused = blocking(|| {
        bench
            .cluster
            .query(2, "REPLACE INTO test.galera_marks VALUES (2, 0)")
    });
    let primary = blocking(|| bench.cluster.wait_cluster_size(0, NODES - 1));
    tokio::time::sleep(Duration::from_secs(5)).await;
    step(
        "reconnecting node 2",
        blocking(|| bench.cluster.reconnect(2)),
    );
    let healed = Instant::now();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let gots = stop_writers(writers, &stop).await;
    bench.whole = true;
    assert!(
        refused.as_ref().is_err_and(|e| e.contains("1047")),
        "node 2, outside the primary component, must refuse writes with ERROR 1047: {refused:?}"
    );
    assert!(
        primary.is_ok(),
        "nodes 0 and 1 go on as the primary component: {primary:?}"
    );
    assert_carried_on("node 2 cut from the group", &gots, 2, (cut, healed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_node_killed_at_once_and_bootstrapped_from_the_most_advanced_repeats_nothing() {
    let Some(mut bench) = exclusive().await else {
        return;
    };
    let cluster = &mut bench.cluster;
    // One store, a writer on every node.
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for node in 0..NODES {
        let url = database(cluster, node, "power_cut");
        let store = step("opening", numbered(&url).await.map_err(|e| e.to_string()));
        let ids = store
            .block_generator(SCOPE, "power_cut")
            .fixed_block_size(20)
            .build()
            .expect("a generator");
        writers.push(spawn_writer(ids, Duration::from_millis(1), stop.clone()));
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    step("killing every node", blocking(|| cluster.kill_all()));
    let seqnos = step("recovering positions", blocking(|| cluster.seqnos()));
    let from = step("the most advanced", blocking(|| cluster.most_advanced()));
    eprintln!("power cut: seqnos {seqnos:?}, bootstrapping from node {from}");
    step("bootstrapping", blocking(|| cluster.bootstrap_from(from)));
    let back = Instant::now();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut gots = stop_writers(writers, &stop).await;
    // And fresh clients, on every node.
    for node in 0..NODES {
        let url = database(cluster, node, "power_cut");
        let store = step("opening", numbered(&url).await.map_err(|e| e.to_string()));
        let ids = store
            .block_generator(SCOPE, "power_cut")
            .build()
            .expect("a generator");
        let mut got = Got::default();
        for _ in 0..100 {
            match ids.next_id().await {
                Ok(id) => got.ids.push((Instant::now(), id)),
                Err(e) => got.errors.push((Instant::now(), e.to_string())),
            }
        }
        let _ = ids.close().await;
        gots.push(got);
    }
    bench.whole = true;
    let report = verdict(
        gots.iter()
            .enumerate()
            .map(|(i, got)| (format!("writer {i}"), ids_of(got))),
    );
    let after: Vec<usize> = gots
        .iter()
        .map(|got| got.ids.iter().filter(|(at, _)| *at > back).count())
        .collect();
    let fresh_errors: Vec<String> = gots[NODES..]
        .iter()
        .flat_map(|got| got.errors.iter().map(|(_, e)| e.clone()))
        .collect();
    eprintln!("power cut: ids after the bootstrap per writer {after:?}; {report}");
    assert!(
        report.is_unique() && after.iter().all(|&n| n > 0) && fresh_errors.is_empty(),
        "every node killed, bootstrapped from node {from} (seqnos {seqnos:?}): ids after the \
         bootstrap per writer {after:?}, fresh clients' errors:\n  {}\n{report}",
        first_errors(&fresh_errors)
    );
}

// ----------------------------------------------------------------------------------------------
// Give-backs and certification conflicts
// ----------------------------------------------------------------------------------------------

/// The sum over the nodes of the status counters of Galera's conflicts: transactions that failed
/// certification, and local ones aborted by a replicated one (brute-force aborts).
fn conflicts(cluster: &GaleraCluster) -> u64 {
    (0..NODES)
        .flat_map(|node| ["wsrep_local_cert_failures", "wsrep_local_bf_aborts"].map(|v| (node, v)))
        .filter_map(|(node, name)| cluster.status(node, name).ok()?.parse::<u64>().ok())
        .sum()
}

/// Short runs each writer makes.
const RUNS: usize = 40;

/// Ids each short run takes before closing.
const PER_RUN: usize = 3;

/// The block size of a short run.
const RUN_BLOCK: u64 = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn give_backs_survive_certification_conflicts() {
    let Some(bench) = shared().await else { return };
    let cluster = &bench.cluster;
    let before = blocking(|| conflicts(cluster));
    let writers: Vec<_> = (0..NODES)
        .map(|node| {
            let url = database(cluster, node, "give_backs");
            tokio::spawn(async move {
                let store = numbered(&url).await.map_err(|e| e.to_string())?;
                // (ids, given back per run, close errors)
                let mut outcome = (Vec::new(), Vec::new(), Vec::new());
                for _ in 0..RUNS {
                    let ids = store
                        .block_generator(SCOPE, "short_runs")
                        .fixed_block_size(RUN_BLOCK)
                        .build()
                        .map_err(|e| e.to_string())?;
                    for _ in 0..PER_RUN {
                        outcome
                            .0
                            .push(ids.next_id().await.map_err(|e| e.to_string())?);
                    }
                    match ids.close().await {
                        Ok(given) => outcome.1.push(given),
                        Err(e) => outcome.2.push(e.to_string()),
                    }
                }
                Ok::<_, String>(outcome)
            })
        })
        .collect();
    let (mut ids, mut given, mut lost, mut refusals) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (node, writer) in writers.into_iter().enumerate() {
        match writer.await.expect("a writer's task") {
            Ok((got, back, errors)) => {
                ids.push((format!("node {node}"), got));
                given.extend(back);
                lost.extend(errors.into_iter().map(|e| format!("node {node}: {e}")));
            }
            Err(e) => refusals.push(format!("node {node}: {e}")),
        }
    }
    let conflicts = blocking(|| conflicts(cluster)).saturating_sub(before);
    let report = verdict(ids);
    let issued = report.recorded;
    let counter = blocking(|| {
        cluster.query(
            0,
            &format!(
                "SELECT next_counter FROM give_backs.gdid_counters \
                 WHERE scope_name = '{SCOPE}' AND sequence_name = 'short_runs'"
            ),
        )
    });
    let reserved = counter
        .as_ref()
        .ok()
        .and_then(|next| next.trim().parse::<u64>().ok())
        .map(|next| next.saturating_sub(1));
    let returned = given.iter().filter(|&&n| n > 0).count();
    eprintln!(
        "give-backs: {} runs, {returned} gave their tail back, {} could not (reserved after), {} \
         failed; {conflicts} certification conflicts on the nodes; {issued} ids issued of {reserved:?} \
         reserved (wasted {:?}); {report}",
        NODES * RUNS,
        given.len() - returned,
        lost.len(),
        reserved.map(|r| r.saturating_sub(issued))
    );
    assert!(
        refusals.is_empty() && lost.is_empty() && report.is_unique(),
        "short runs on every node at once ({conflicts} certification conflicts): {} refused, {} \
         give-backs lost:\n  {}\n{report}",
        refusals.len(),
        lost.len(),
        first_errors(&[refusals, lost].concat())
    );
}

// ----------------------------------------------------------------------------------------------
// The conformance suite, through each node
// ----------------------------------------------------------------------------------------------

/// Raw SQL on a store, for the conformance suite's set-up (`common/adapter.rs` of gdid-sql's
/// tests asks for these): a write is run again when Galera aborts it for a conflict with another
/// node's write or schema change (ERROR 1213), as any client of a Galera cluster must.
mod common {
    use std::time::Duration;

    use gdid_sql::SqlStore;

    /// Runs `sql` (set-up only: values are formatted in), again after a certification conflict.
    pub(crate) async fn execute(store: &SqlStore, sql: String) {
        for attempt in 1.. {
            let statement = sqlx::AssertSqlSafe(sql.clone());
            let done = gdid_sql::with_pool!(store, pool => {
                sqlx::query(statement).execute(pool).await.map(drop)
            });
            match done {
                Ok(()) => return,
                Err(sqlx::Error::Database(e))
                    if e.code().as_deref() == Some("40001") && attempt < 20 =>
                {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("{sql}: {e}"),
            }
        }
    }

    /// The rows of a `SELECT` of three columns cast to text, formatted.
    pub(crate) async fn text_rows(store: &SqlStore, select: String) -> String {
        let select = sqlx::AssertSqlSafe(select);
        let rows: Vec<(Option<String>, Option<String>, Option<String>)> =
            gdid_sql::with_pool!(store, pool => sqlx::query_as(select).fetch_all(pool).await)
                .unwrap();
        format!("{rows:?}")
    }

    /// The one integer a `SELECT COUNT(*) …` returns.
    pub(crate) async fn count(store: &SqlStore, select: String) -> i64 {
        let select = sqlx::AssertSqlSafe(select);
        gdid_sql::with_pool!(store, pool => sqlx::query_scalar(select).fetch_one(pool).await)
            .unwrap()
    }

    /// The rows of a `SELECT` of three integers.
    pub(crate) async fn ranges(store: &SqlStore, select: String) -> Vec<(i64, i64, i64)> {
        let select = sqlx::AssertSqlSafe(select);
        gdid_sql::with_pool!(store, pool => sqlx::query_as(select).fetch_all(pool).await).unwrap()
    }

    /// Closes the store's pool.
    pub(crate) async fn close(store: &SqlStore) {
        gdid_sql::with_pool!(store, pool => pool.close().await);
    }
}

/// The SQL stores' dialect of the suite, written once in gdid-sql's tests.
#[path = "../../gdid-sql/tests/common/adapter.rs"]
mod adapter;

/// The conformance suite through node `node` of the shared cluster: gdid-sql's MariaDB dialect,
/// each node on databases of its own (`gN_…`) so that the nodes' runs do not meet, with the
/// cluster held shared for as long as a site is used.
mod conformance {
    use std::sync::Arc;

    use super::adapter::{Sharded, Shards, Site, Sql};
    use super::{STORE, shared};

    /// Node `node`'s site, or `None` (no cluster here: skipped).
    async fn site(node: usize) -> Option<Site> {
        let bench = shared().await?;
        Some(Site {
            label: STORE,
            server: bench.cluster.url(node),
            prefix: format!("g{node}_"),
            keep: Some(Arc::new(bench)),
        })
    }

    /// Authorities and counters through node `node`.
    async fn sql(node: usize) -> Option<Sql> {
        Some(Sql::at(site(node).await?))
    }

    /// Sharded counters through node `node`.
    async fn sharded(node: usize) -> Option<Sharded> {
        Some(Sharded::at(site(node).await?).await)
    }

    /// Window shards through node `node`.
    async fn shards(node: usize) -> Option<Shards> {
        Some(Shards::at(site(node).await?))
    }

    gdid_testkit::conformance!(node0 {
        authority, counters, counter, numbers, sequences => sql(0).await;
        sharded => sharded(0).await;
        windows => shards(0).await;
    });
    gdid_testkit::conformance!(node1 {
        authority, counters, counter, numbers, sequences => sql(1).await;
        sharded => sharded(1).await;
        windows => shards(1).await;
    });
    gdid_testkit::conformance!(node2 {
        authority, counters, counter, numbers, sequences => sql(2).await;
        sharded => sharded(2).await;
        windows => shards(2).await;
    });
}
