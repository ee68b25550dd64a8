//! Failover to a replica that lags, and restores of old backups: no id is issued twice, and ids
//! issued after a switch sort after every id issued before it.
//!
//! Each test builds replicated servers of its own ([`PostgresReplicas`], [`MariaDbReplicas`]),
//! puts a relay ([`FaultProxy`]) in front of the primary, so that clients keep one address, and
//! issues ids through it with the `gdid` command (`gdid next`, a fresh process each time, which
//! reserves its block when it runs) and with long-lived generators of `gdid::Store` (made before
//! the switch, still asking after it). Then it fails over the way an operator does: the primary
//! killed, a standby that missed the latest writes promoted, the relay switched to it.
//!
//! Every id every client got is kept, with the phase it came in (0 before the first switch, 1
//! after it, …). The verdict, per sequence: no id twice; per client, every id of a later phase
//! sorts after every id it got in an earlier one; and every id a fresh client (a `gdid next`
//! run, a store opened after the switch) got in a phase sorts after every id anyone got in an
//! earlier phase. Each test prints a one-line summary to stderr, then fails listing what went
//! wrong.
//!
//! Build the command first (`cargo build -p gdid-cli`), then
//! `cargo test -p gdid-faults --test test_failover`. Without PostgreSQL or MariaDB a test is
//! skipped, and fails under `CI=true`.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use gdid::verify;
use gdid::{BlockGenerator, Gdid, IdOrder, OpenOptions, Store};
use gdid_faults::server::{MariaDbReplicas, Postgres, PostgresReplicas, Replicas};
use gdid_faults::url::ServerUrl;
use gdid_faults::{FaultProxy, gdid_binary};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

/// The scope of every sequence here.
const SCOPE: &str = "failover";

/// The `extra` argument of [`gdid_next`] that is not an argument but the bearer token of an
/// `http://` store, given to the process as `GDID_TOKEN`.
const TOKEN_ARG: &str = "token=";

/// How long a `gdid next` run may take before it is killed and counted a failure.
const CLI_PATIENCE: Duration = Duration::from_secs(60);

/// How long long-lived generators get, after the last switch, to give ids again.
const RECOVERY_PATIENCE: Duration = Duration::from_secs(20);

// ----------------------------------------------------------------------------------------------
// What clients got
// ----------------------------------------------------------------------------------------------

/// One id a client got.
#[derive(Debug, Clone)]
struct Issued {
    sequence: String,
    client: String,
    /// 0 before the first switch, 1 after it, ….
    phase: u32,
    /// Reserved in this phase for sure: by a client that started in it (a `gdid next` run, a
    /// store opened after the switch), not from a block a long-lived generator had in hand.
    fresh: bool,
    id: Gdid,
}

/// Every id of a test, in the order clients got them, and what else went wrong; shared with
/// the long-lived generators' tasks.
#[derive(Debug, Default, Clone)]
struct Ledger {
    issued: Arc<Mutex<Vec<Issued>>>,
    problems: Arc<Mutex<Vec<String>>>,
    /// The current phase.
    phase: Arc<AtomicU32>,
}

impl Ledger {
    /// Records `ids`, got in this order by `client` of `sequence`, in the current phase.
    fn record(&self, sequence: &str, client: &str, fresh: bool, ids: &[Gdid]) {
        let phase = self.phase();
        lock(&self.issued).extend(ids.iter().map(|&id| Issued {
            sequence: sequence.to_owned(),
            client: client.to_owned(),
            phase,
            fresh,
            id,
        }));
    }

    /// Records something that went wrong, for the verdict (the test goes on, to see the ids).
    fn problem(&self, problem: String) {
        eprintln!("  problem: {problem}");
        lock(&self.problems).push(problem);
    }

    /// The current phase.
    fn phase(&self) -> u32 {
        self.phase.load(Ordering::SeqCst)
    }

    /// How many ids `client` got in the current phase.
    fn count_now(&self, client: &str) -> usize {
        let phase = self.phase();
        lock(&self.issued)
            .iter()
            .filter(|i| i.client == client && i.phase == phase)
            .count()
    }
}

/// The guard of `mutex`, poisoned or not (a panicking task must not hide the ids).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the ids of a test say.
#[derive(Debug, Default)]
struct Verdict {
    ids: usize,
    duplicates: u64,
    /// Ids that sort before (or at) an id of an earlier phase, where they must sort after.
    out_of_order: usize,
    /// Distinct eras seen, minus one.
    era_moves: usize,
    problems: Vec<String>,
}

/// Judges `issued`: duplicates per sequence, order across phases per client and for fresh
/// clients against everyone.
fn judge(issued: &[Issued]) -> Verdict {
    let mut verdict = Verdict {
        ids: issued.len(),
        ..Verdict::default()
    };
    let eras: BTreeSet<u32> = issued.iter().map(|i| i.id.era()).collect();
    verdict.era_moves = eras.len().saturating_sub(1);
    let sequences: BTreeSet<&str> = issued.iter().map(|i| i.sequence.as_str()).collect();
    for sequence in sequences {
        let of_sequence: Vec<&Issued> = issued.iter().filter(|i| i.sequence == sequence).collect();
        judge_repeats(sequence, &of_sequence, &mut verdict);
        judge_clients(sequence, &of_sequence, &mut verdict);
        judge_fresh(sequence, &of_sequence, &mut verdict);
    }
    verdict
}

/// Counts the ids of `sequence` issued more than once with `gdid verify`'s ledger, each client
/// (and phase) a writer, and names a few, with who got them.
fn judge_repeats(sequence: &str, issued: &[&Issued], verdict: &mut Verdict) {
    let mut ledger = verify::Ledger::new();
    for i in issued {
        let writer = ledger.writer(&format!("{} in phase {}", i.client, i.phase));
        ledger.record(writer, i.id);
    }
    let report = ledger.report();
    if report.is_unique() {
        return;
    }
    verdict.duplicates += report.repeated;
    let examples: Vec<String> = report
        .repeats
        .iter()
        .take(3)
        .map(|repeat| {
            let who: Vec<&str> = repeat.seen.iter().map(|s| s.writer.as_str()).collect();
            format!("{} to {}", repeat.id, who.join(" and "))
        })
        .collect();
    verdict.problems.push(format!(
        "sequence {sequence}: {} id(s) issued twice, e.g. {}",
        report.repeated,
        examples.join("; ")
    ));
}

/// Per client of `sequence`: every id of a phase sorts after every id it got in earlier phases.
fn judge_clients(sequence: &str, issued: &[&Issued], verdict: &mut Verdict) {
    let clients: BTreeSet<&str> = issued.iter().map(|i| i.client.as_str()).collect();
    for client in clients {
        let mine: Vec<&Issued> = issued
            .iter()
            .copied()
            .filter(|i| i.client == client)
            .collect();
        let bad = ordered_after_earlier_phases(&mine, &mine);
        if let Some((count, id, earlier)) = bad {
            verdict.out_of_order += count;
            verdict.problems.push(format!(
                "sequence {sequence}, {client}: {count} id(s) after a switch sort before one it \
                 got earlier, e.g. {id} after {earlier}"
            ));
        }
    }
}

/// For `sequence`: every id a fresh client got in a phase sorts after every id anyone got in
/// earlier phases.
fn judge_fresh(sequence: &str, issued: &[&Issued], verdict: &mut Verdict) {
    let fresh: Vec<&Issued> = issued.iter().copied().filter(|i| i.fresh).collect();
    if let Some((count, id, earlier)) = ordered_after_earlier_phases(&fresh, issued) {
        verdict.out_of_order += count;
        verdict.problems.push(format!(
            "sequence {sequence}: {count} id(s) reserved after a switch sort before an id issued \
             before it, e.g. {id} after {earlier}"
        ));
    }
}

/// How many of `later` sort at or before the largest id of `earlier` from an earlier phase
/// than theirs, with an example: `None` when none does.
fn ordered_after_earlier_phases(
    later: &[&Issued],
    earlier: &[&Issued],
) -> Option<(usize, Gdid, Gdid)> {
    let mut bad = None;
    let mut count = 0;
    for i in later {
        let before = earlier
            .iter()
            .filter(|e| e.phase < i.phase)
            .map(|e| e.id)
            .max();
        if let Some(before) = before
            && i.id <= before
        {
            count += 1;
            bad.get_or_insert((i.id, before));
        }
    }
    bad.map(|(id, before)| (count, id, before))
}

// ----------------------------------------------------------------------------------------------
// A test's run
// ----------------------------------------------------------------------------------------------

/// One test's run: what it set up, its switches, and its ledger.
#[derive(Debug)]
struct Run {
    test: &'static str,
    store: &'static str,
    setup: &'static str,
    ledger: Ledger,
    started: Instant,
}

impl Run {
    fn new(test: &'static str, store: &'static str, setup: &'static str) -> Run {
        eprintln!("{test}: {store}, {setup}");
        Run {
            test,
            store,
            setup,
            ledger: Ledger::default(),
            started: Instant::now(),
        }
    }

    /// `gdid next --count COUNT` of `sequence` on `url` (plus `extra` arguments): its ids
    /// recorded; a failure recorded as a problem.
    fn next(&self, url: &str, sequence: &str, count: u64, extra: &[&str]) {
        match gdid_next(url, sequence, count, extra) {
            Ok(ids) => self.ledger.record(sequence, "gdid next", true, &ids),
            Err(e) => self.ledger.problem(format!(
                "gdid next of {sequence} in phase {}: {e}",
                self.ledger.phase()
            )),
        }
    }

    /// Three `gdid next --count 40` runs of `sequence` on `url`.
    fn next_three_times(&self, url: &str, sequence: &str) {
        for _ in 0..3 {
            self.next(url, sequence, 40, &[]);
        }
    }

    /// A switch: `switch` done (the relay retargeted), and the ids from now on of the next
    /// phase.
    fn switch(&self, switch: impl FnOnce()) {
        switch();
        let phase = self.ledger.phase.fetch_add(1, Ordering::SeqCst) + 1;
        eprintln!("  switch {phase} at {:.1?}", self.started.elapsed());
    }

    /// The largest era of any id got so far.
    fn largest_era(&self) -> u32 {
        lock(&self.ledger.issued)
            .iter()
            .map(|i| i.id.era())
            .max()
            .unwrap_or(0)
    }

    /// Prints the summary line and fails with every problem found.
    fn finish(self) {
        let issued = lock(&self.ledger.issued).clone();
        let mut verdict = judge(&issued);
        verdict
            .problems
            .splice(0..0, lock(&self.ledger.problems).iter().cloned());
        eprintln!(
            "{}: store={} setup=\"{}\" switches={} ids={} duplicates={} out_of_order={} \
             era_moves={} problems={} time={:.1?}",
            self.test,
            self.store,
            self.setup,
            self.ledger.phase(),
            verdict.ids,
            verdict.duplicates,
            verdict.out_of_order,
            verdict.era_moves,
            verdict.problems.len(),
            self.started.elapsed(),
        );
        assert!(
            verdict.problems.is_empty(),
            "{}:\n- {}",
            self.test,
            verdict.problems.join("\n- ")
        );
    }
}

/// Runs `gdid next` of (`SCOPE`, `sequence`), `count` ids, on `url` with `extra` arguments, and
/// parses what it printed.
///
/// # Errors
///
/// Its exit status and standard error when it fails, or when it runs longer than
/// [`CLI_PATIENCE`] (it is killed).
fn gdid_next(url: &str, sequence: &str, count: u64, extra: &[&str]) -> Result<Vec<Gdid>, String> {
    let count = count.to_string();
    let mut args = vec!["next", "--store", url, "--scope", SCOPE];
    args.extend(["--sequence", sequence, "--count", &count]);
    let token = extra.iter().find_map(|arg| arg.strip_prefix(TOKEN_ARG));
    args.extend(extra.iter().filter(|arg| !arg.starts_with(TOKEN_ARG)));
    let out = gdid_as(&args, token)?;
    out.lines()
        .map(|line| Gdid::from_str(line.trim()).map_err(|e| format!("{line:?}: {e}")))
        .collect()
}

/// Runs the `gdid` command with `args`: its standard output when it succeeds, else its status
/// and standard error.
fn gdid(args: &[&str]) -> Result<String, String> {
    gdid_as(args, None)
}

/// [`gdid`], with `token` as `GDID_TOKEN` (the bearer token of `http://` stores).
fn gdid_as(args: &[&str], token: Option<&str>) -> Result<String, String> {
    let binary = gdid_binary().unwrap_or_else(|e| panic!("{e}"));
    let mut command = Command::new(binary);
    if let Some(token) = token {
        command.env("GDID_TOKEN", token);
    }
    let mut child = command
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("gdid {}: {e}", args.join(" ")))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > CLI_PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("gdid {}: still running after 60 s", args.join(" ")));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let (mut out, mut err) = (String::new(), String::new());
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut err);
    }
    if status.success() {
        Ok(out)
    } else {
        Err(format!("gdid {}: {status}: {}", args.join(" "), err.trim()))
    }
}

// ----------------------------------------------------------------------------------------------
// Long-lived generators
// ----------------------------------------------------------------------------------------------

/// Generators made before the switch that keep asking for ids, one at a time, through it: the
/// services that stay up while their database fails over.
#[derive(Debug)]
struct LongLived {
    names: Vec<String>,
    stop: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<()>>,
}

impl LongLived {
    /// `count` stores opened on `url`, each with a generator of `sequence` (strict order, so
    /// that each one's ids increase; blocks of 10, so that they allocate often), asking for an
    /// id every 10 ms.
    fn start(runtime: &Runtime, run: &Run, url: &str, sequence: &str, count: usize) -> LongLived {
        LongLived::start_with(runtime, run, &Store::options(), url, sequence, count)
    }

    /// As [`start`](Self::start), the stores opened with `options` (an `http://` store's token).
    fn start_with(
        runtime: &Runtime,
        run: &Run,
        options: &OpenOptions,
        url: &str,
        sequence: &str,
        count: usize,
    ) -> LongLived {
        let stop = Arc::new(AtomicBool::new(false));
        let mut names = Vec::new();
        let mut tasks = Vec::new();
        for n in 1..=count {
            let name = format!("long-lived generator {n}");
            let ids = runtime.block_on(async {
                let store = options
                    .open(url)
                    .await
                    .unwrap_or_else(|e| panic!("opening {url}: {e}"));
                store
                    .block_generator(SCOPE, sequence)
                    .order(IdOrder::Strict)
                    .fixed_block_size(10)
                    .request_timeout(Duration::from_secs(2))
                    .build()
                    .unwrap()
            });
            let (ledger, stop) = (run.ledger.clone(), Arc::clone(&stop));
            let (client, sequence) = (name.clone(), sequence.to_owned());
            tasks.push(runtime.spawn(ask(ids, ledger, client, sequence, stop)));
            names.push(name);
        }
        LongLived { names, stop, tasks }
    }

    /// Waits until each has got `ids` ids in the current phase (a problem when one has not
    /// within [`RECOVERY_PATIENCE`]).
    fn wait_for(&self, ledger: &Ledger, ids: usize) {
        let started = Instant::now();
        for name in &self.names {
            while ledger.count_now(name) < ids {
                if started.elapsed() > RECOVERY_PATIENCE {
                    ledger.problem(format!(
                        "{name} got {} of {ids} ids within {RECOVERY_PATIENCE:?} in phase {}",
                        ledger.count_now(name),
                        ledger.phase()
                    ));
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// Stops them (after they got `ids` ids each in the current phase, or gave up waiting).
    fn finish(self, runtime: &Runtime, ledger: &Ledger, ids: usize) {
        self.wait_for(ledger, ids);
        self.stop.store(true, Ordering::SeqCst);
        for task in self.tasks {
            if let Err(e) = runtime.block_on(task) {
                ledger.problem(format!("a long-lived generator's task failed: {e}"));
            }
        }
    }
}

/// Asks `ids` for an id every 10 ms until `stop`, recording each as `client`'s; an error is
/// retried after 100 ms (the first of a run of errors is said on stderr).
async fn ask(
    ids: BlockGenerator,
    ledger: Ledger,
    client: String,
    sequence: String,
    stop: Arc<AtomicBool>,
) {
    let mut failing = false;
    while !stop.load(Ordering::SeqCst) {
        match ids.next_id().await {
            Ok(id) => {
                ledger.record(&sequence, &client, false, &[id]);
                failing = false;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => {
                if !failing {
                    eprintln!("  {client} in phase {}: {e} (retrying)", ledger.phase());
                }
                failing = true;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

// ----------------------------------------------------------------------------------------------
// Servers, relay, runtime
// ----------------------------------------------------------------------------------------------

/// A runtime for the relay and the in-process stores (the test's own thread drives the servers
/// and the `gdid` runs).
fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Replicated servers made by `start`, if `installed` says the engine's programs are here;
/// `None`, said skipped, when they are not (a failure with `CI=true`).
fn replicas<E>(
    installed: Result<(), String>,
    start: impl FnOnce() -> Result<Replicas<E>, String>,
) -> Option<Replicas<E>>
where
    Replicas<E>: Failover,
{
    let store = Replicas::<E>::STORE;
    if let Err(why) = installed {
        gdid_testkit::unavailable(store, &why);
        return None;
    }
    gdid_testkit::ran(store);
    Some(start().unwrap_or_else(|e| panic!("starting {store}: {e}")))
}

/// A PostgreSQL primary with `standbys` standbys of it (see [`replicas`]).
fn postgres(standbys: usize) -> Option<PostgresReplicas> {
    replicas(PostgresReplicas::installed(), || {
        let mut replicas = PostgresReplicas::start()?;
        for _ in 0..standbys {
            replicas
                .add_standby(0)
                .map_err(|e| format!("adding a standby: {e}"))?;
        }
        Ok(replicas)
    })
}

/// A MariaDB primary and replica (see [`replicas`]).
fn mariadb() -> Option<MariaDbReplicas> {
    replicas(MariaDbReplicas::installed(), MariaDbReplicas::start)
}

/// 2025-01-01T00:00:00Z in seconds since the Unix epoch: the epoch of the eras a record moves
/// to on a failover (an era is that server's clock in seconds since it, or more).
const ERA_EPOCH_UNIX: u64 = 1_735_689_600;

/// Waits until this machine's clock, in seconds since [`ERA_EPOCH_UNIX`], is past `era` (at most
/// two seconds: an era further ahead is not a clock's).
fn wait_for_a_second_after(era: u32) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_secs())
            .saturating_sub(ERA_EPOCH_UNIX);
        if now > u64::from(era) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Unwraps a step of the servers' set-up or failover: those must work for the test to mean
/// anything.
fn step<T>(what: &str, result: Result<T, String>) -> T {
    result.unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// What a failover does that depends on the engine (a set's servers are otherwise alike:
/// [`Replicas`]).
trait Failover {
    /// The engine's name.
    const STORE: &'static str;
    /// Waits until replica `i` has everything, then makes it lag from now on.
    fn lag(&mut self, i: usize);
    /// Makes lagging replica `i` the primary.
    fn take_over(&mut self, i: usize);
}

impl Failover for PostgresReplicas {
    const STORE: &'static str = "PostgreSQL";

    /// Caught up, then stopped (fast shutdown).
    fn lag(&mut self, i: usize) {
        step("catching up", self.wait_caught_up(i));
        step("stopping the standby", self.stop(i));
    }

    /// Started again (its upstream is gone), then promoted.
    fn take_over(&mut self, i: usize) {
        step("starting the standby", self.start_again(i));
        step("promoting the standby", self.promote(i));
    }
}

impl Failover for MariaDbReplicas {
    const STORE: &'static str = "MariaDB";

    /// Caught up, then its IO thread stopped (`STOP SLAVE IO_THREAD`).
    fn lag(&mut self, i: usize) {
        step("catching up", self.wait_caught_up(i));
        step("pausing replication", self.pause(i));
    }

    /// `STOP SLAVE; RESET SLAVE ALL`, writable.
    fn take_over(&mut self, i: usize) {
        step("promoting the replica", self.promote(i));
    }
}

/// A test's replicated servers behind a relay, which clients keep as their address through a
/// switch; the runtime of the relay and of the in-process stores; and the test's run.
struct Bench<E> {
    replicas: Replicas<E>,
    runtime: Runtime,
    relay: FaultProxy,
    /// The URL of the servers' database through the relay.
    url: String,
    run: Run,
}

impl<E> Bench<E>
where
    Replicas<E>: Failover,
{
    /// A relay to server 0 of `replicas`, and the run of `test`, whose `setup` is said.
    fn new(replicas: Replicas<E>, test: &'static str, setup: &'static str) -> Bench<E> {
        let runtime = runtime();
        let relay = runtime
            .block_on(FaultProxy::start(replicas.address(0)))
            .unwrap();
        let url = ServerUrl::parse(&replicas.url(0))
            .unwrap()
            .via(relay.address());
        let run = Run::new(test, Replicas::<E>::STORE, setup);
        Bench {
            replicas,
            runtime,
            relay,
            url,
            run,
        }
    }

    /// `gdid next --count COUNT` of `sequence` through the relay ([`Run::next`]).
    fn next(&self, sequence: &str, count: u64) {
        self.run.next(&self.url, sequence, count, &[]);
    }

    /// Three `gdid next --count 40` runs of `sequence` through the relay.
    fn next_three_times(&self, sequence: &str) {
        self.run.next_three_times(&self.url, sequence);
    }

    /// Long-lived generators of `sequence` through the relay ([`LongLived::start`]).
    fn long_lived(&self, sequence: &str, count: usize) -> LongLived {
        LongLived::start(&self.runtime, &self.run, &self.url, sequence, count)
    }

    /// Kills server `i`, the primary.
    fn crash(&mut self, i: usize) {
        step("killing the primary", self.replicas.kill(i));
    }

    /// The relay switched to server `i` ([`Run::switch`]).
    fn switch_to(&self, i: usize) {
        self.run
            .switch(|| self.relay.set_target(self.replicas.address(i)));
    }

    /// The failover: primary `primary` killed, lagging replica `replica` made the primary, the
    /// relay switched to it.
    fn fail_over(&mut self, primary: usize, replica: usize) {
        self.crash(primary);
        self.replicas.take_over(replica);
        self.switch_to(replica);
    }
}

/// The bench of `test` (whose `setup` is said) on a PostgreSQL primary and one standby, or
/// `None` when PostgreSQL is not installed here.
fn postgres_bench(test: &'static str, setup: &'static str) -> Option<Bench<Postgres>> {
    postgres(1).map(|postgres| Bench::new(postgres, test, setup))
}

// ----------------------------------------------------------------------------------------------
// The scenarios
// ----------------------------------------------------------------------------------------------

/// The failover of tests 1 and 2: ids on the primary, the replica made to lag, more ids on the
/// primary, the primary killed, the lagging replica promoted, the relay switched to it, more
/// ids; two long-lived generators ask throughout.
fn failover_to_a_lagging_replica<E>(test: &'static str, replicas: Replicas<E>)
where
    Replicas<E>: Failover,
{
    let mut bench = Bench::new(
        replicas,
        test,
        "primary + async replica made to lag; primary killed, replica promoted",
    );
    bench.next("orders", 3);
    let long_lived = bench.long_lived("orders", 2);
    long_lived.wait_for(&bench.run.ledger, 20);
    bench.replicas.lag(1);
    bench.next_three_times("orders");
    long_lived.wait_for(&bench.run.ledger, 40);
    bench.fail_over(0, 1);
    bench.next_three_times("orders");
    long_lived.finish(&bench.runtime, &bench.run.ledger, 30);
    bench.run.finish();
}

#[test]
fn postgres_failover_to_a_lagging_standby_repeats_no_id() {
    if let Some(postgres) = postgres(1) {
        failover_to_a_lagging_replica(
            "postgres_failover_to_a_lagging_standby_repeats_no_id",
            postgres,
        );
    }
}

#[test]
fn mariadb_failover_to_a_lagging_replica_repeats_no_id() {
    if let Some(mariadb) = mariadb() {
        failover_to_a_lagging_replica(
            "mariadb_failover_to_a_lagging_replica_repeats_no_id",
            mariadb,
        );
    }
}

#[test]
fn fifty_clients_racing_the_first_allocation_after_promotion_repeat_nothing() {
    let Some(mut bench) = postgres_bench(
        "fifty_clients_racing_the_first_allocation_after_promotion_repeat_nothing",
        "primary + async standby stopped (lagging); primary killed, standby promoted; \
         50 stores allocate at once",
    ) else {
        return;
    };
    bench.next("orders", 3);
    bench.replicas.lag(1);
    bench.next_three_times("orders");
    bench.fail_over(0, 1);
    let race = race(&bench.run, &bench.url, "orders", 50);
    bench.runtime.block_on(race);
    bench.next("orders", 40);
    bench.run.finish();
}

/// `clients` stores opened on `url` (at once), whose generators of `sequence` then ask for
/// their first ids at the same moment: each one's ids recorded as a fresh client's.
async fn race(run: &Run, url: &str, sequence: &str, clients: usize) {
    let barrier = Arc::new(tokio::sync::Barrier::new(clients));
    let mut racers = tokio::task::JoinSet::new();
    for n in 1..=clients {
        let (url, sequence) = (url.to_owned(), sequence.to_owned());
        let (ledger, barrier) = (run.ledger.clone(), Arc::clone(&barrier));
        racers.spawn(async move {
            let client = format!("store {n}");
            let store = open_patiently(&url).await;
            let ids = store.as_ref().map_err(Clone::clone).and_then(|s| {
                s.block_generator(SCOPE, &sequence)
                    .build()
                    .map_err(|e| e.to_string())
            });
            barrier.wait().await;
            let got = match ids {
                Ok(ids) => ids.next_ids(5).await.map_err(|e| e.to_string()),
                Err(e) => Err(e),
            };
            match got {
                Ok(batch) => {
                    let ids: Vec<Gdid> = batch.iter().collect();
                    ledger.record(&sequence, &client, true, &ids);
                }
                Err(e) => ledger.problem(format!("{client}: {e}")),
            }
        });
    }
    while let Some(done) = racers.join_next().await {
        if let Err(e) = done {
            run.ledger
                .problem(format!("a racing store's task failed: {e}"));
        }
    }
}

/// `Store::open(url)`, tried up to 5 times (fifty opening at once may meet a busy server).
async fn open_patiently(url: &str) -> Result<Store, String> {
    let mut last = String::new();
    for _ in 0..5 {
        match Store::open(url).await {
            Ok(store) => return Ok(store),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err(format!("opening {url}: {last}"))
}

#[test]
fn a_standby_that_never_received_the_counter_row_repeats_nothing() {
    let Some(mut bench) = postgres_bench(
        "a_standby_that_never_received_the_counter_row_repeats_nothing",
        "store in use (another sequence) when the standby stopped; the sequence's first ids \
         on the primary only; primary killed, standby promoted",
    ) else {
        return;
    };
    bench.next("warm-up", 3);
    bench.replicas.lag(1);
    bench.next("orders", 3);
    bench.next_three_times("orders");
    bench.fail_over(0, 1);
    bench.next_three_times("orders");
    bench.next("warm-up", 40);
    bench.run.finish();
}

#[test]
fn a_standby_that_never_received_the_authority_record_refuses_without_authority() {
    let Some(mut bench) = postgres_bench(
        "a_standby_that_never_received_the_authority_record_refuses_without_authority",
        "standby stopped before the store's first use; primary killed, standby promoted",
    ) else {
        return;
    };
    bench.replicas.lag(1);
    bench.next("orders", 3);
    bench.next_three_times("orders");
    bench.fail_over(0, 1);
    let (run, url) = (&bench.run, &bench.url);
    match gdid_next(url, "orders", 40, &[]) {
        Ok(ids) => {
            run.ledger.record("orders", "gdid next", true, &ids);
            run.ledger.problem(format!(
                "gdid next without --authority issued {} ids from a store that never received \
                 its authority record (it must refuse)",
                ids.len()
            ));
        }
        Err(e) if e.to_lowercase().contains("authority") => {
            eprintln!("  refused as it must: {e}");
        }
        Err(e) => run.ledger.problem(format!(
            "gdid next without --authority failed, but not about the authority record: {e}"
        )),
    }
    for _ in 0..3 {
        run.next(url, "orders", 40, &["--authority", "1"]);
    }
    bench.run.finish();
}

#[test]
fn two_sequences_where_one_allocates_first_after_promotion_repeat_nothing() {
    let Some(mut bench) = postgres_bench(
        "two_sequences_where_one_allocates_first_after_promotion_repeat_nothing",
        "two sequences; standby stopped (lagging); primary killed, standby promoted; one \
         sequence allocates first",
    ) else {
        return;
    };
    bench.next("orders", 3);
    bench.next("invoices", 3);
    bench.replicas.lag(1);
    bench.next_three_times("orders");
    bench.next_three_times("invoices");
    bench.fail_over(0, 1);
    bench.next_three_times("orders");
    bench.next_three_times("invoices");
    bench.next("orders", 40);
    bench.run.finish();
}

#[test]
fn a_chain_where_standby_two_missed_standby_ones_era_move_repeats_nothing() {
    let Some(mut postgres) = postgres(1) else {
        return;
    };
    let second = step("adding standby 2 (of standby 1)", postgres.add_standby(1));
    let mut bench = Bench::new(
        postgres,
        "a_chain_where_standby_two_missed_standby_ones_era_move_repeats_nothing",
        "primary -> standby 1 -> standby 2; standby 2 stopped; primary killed, standby 1 \
         promoted and used; standby 1 killed, standby 2 promoted",
    );
    bench.next("orders", 3);
    step("catching up", bench.replicas.wait_caught_up(1));
    bench.replicas.lag(second);
    bench.next_three_times("orders");
    step("catching up", bench.replicas.wait_caught_up(1));
    bench.crash(0);
    step("promoting standby 1", bench.replicas.promote(1));
    bench.switch_to(1);
    bench.next_three_times("orders");
    // The era a record moves to is the server's clock in seconds (since 2025-01-01), so two
    // copies moved within one second would share one: a limit the rule states
    // (gdid_engine::backend::lineage). A chain of failovers takes longer than a second; this
    // one, on one machine, may not, so standby 2 is promoted in a later second than the era
    // standby 1 moved to.
    wait_for_a_second_after(bench.run.largest_era());
    bench.fail_over(1, second);
    bench.next_three_times("orders");
    bench.run.finish();
}

#[test]
fn a_restore_of_an_old_backup_then_fence_repeats_nothing() {
    let Some(postgres) = postgres(0) else {
        return;
    };
    let url = postgres.url(0);
    let run = Run::new(
        "a_restore_of_an_old_backup_then_fence_repeats_nothing",
        "PostgreSQL",
        "pg_dump of the gdid tables; more ids, and a sequence made after it; the dump restored; \
         gdid sequences fence --all",
    );
    run.next(&url, "orders", 3, &[]);
    run.next(&url, "invoices", 3, &[]);
    run.next(&url, "orders", 40, &[]);
    let backup = step(
        "dumping the gdid tables",
        postgres.dump_gdid_tables(0, "backup"),
    );
    run.next_three_times(&url, "orders");
    run.next_three_times(&url, "invoices");
    run.next(&url, "made_after_the_backup", 3, &[]);
    run.switch(|| step("restoring the dump", postgres.restore(0, &backup)));
    if let Err(e) = gdid(&["sequences", "fence", "--store", &url, "--all"]) {
        run.ledger
            .problem(format!("gdid sequences fence --all failed: {e}"));
    }
    run.next_three_times(&url, "orders");
    run.next_three_times(&url, "invoices");
    run.next_three_times(&url, "made_after_the_backup");
    run.finish();
}

/// `gdid serve` on a store, for the test's life: its URL and a token of [`SCOPE`].
struct Served {
    process: Child,
    url: String,
    token: String,
    _tokens: TokensFile,
}

/// The tokens file of a [`Served`], removed with it.
struct TokensFile(std::path::PathBuf);

impl Drop for TokensFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl Served {
    /// Starts `gdid serve --store STORE` on a free port with a new token of [`SCOPE`], and waits
    /// for the URL it prints.
    fn start(store: &str) -> Served {
        let made = step("gdid token", gdid(&["token", "--scopes", SCOPE]));
        let mut lines = made.lines();
        let token = lines.next().expect("a token").to_owned();
        let file = std::env::temp_dir().join(gdid_testkit::fresh("gdid-failover-tokens"));
        let file = TokensFile(file);
        std::fs::write(&file.0, lines.next().expect("a tokens-file line")).unwrap();
        let tokens = file.0.to_str().unwrap();
        let mut process = Command::new(gdid_binary().unwrap_or_else(|e| panic!("{e}")))
            .args([
                "serve",
                "--store",
                store,
                "--listen",
                "127.0.0.1:0",
                "--tokens",
                tokens,
            ])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("gdid serve");
        let mut url = String::new();
        let stdout = process.stdout.take().expect("its stdout");
        BufReader::new(stdout).read_line(&mut url).unwrap();
        assert!(url.starts_with("http://"), "gdid serve printed {url:?}");
        Served {
            process,
            url: url.trim().to_owned(),
            token,
            _tokens: file,
        }
    }

    /// The token, as the `extra` argument of [`gdid_next`].
    fn token_arg(&self) -> String {
        format!("{TOKEN_ARG}{}", self.token)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

#[test]
fn gdid_serve_in_front_of_a_failing_over_postgres_repeats_nothing() {
    let Some(mut bench) = postgres_bench(
        "gdid_serve_in_front_of_a_failing_over_postgres_repeats_nothing",
        "gdid serve on the relay; standby stopped (lagging); primary killed, standby promoted; \
         only the server's clients issue",
    ) else {
        return;
    };
    let served = Served::start(&bench.url);
    let token = served.token_arg();
    let next = |run: &Run, count| run.next(&served.url, "orders", count, &[&token]);
    next(&bench.run, 3);
    let options = Store::options().http_token(&served.token);
    let long_lived = LongLived::start_with(
        &bench.runtime,
        &bench.run,
        &options,
        &served.url,
        "orders",
        2,
    );
    long_lived.wait_for(&bench.run.ledger, 20);
    bench.replicas.lag(1);
    for _ in 0..3 {
        next(&bench.run, 40);
    }
    long_lived.wait_for(&bench.run.ledger, 40);
    bench.fail_over(0, 1);
    for _ in 0..3 {
        next(&bench.run, 40);
    }
    long_lived.finish(&bench.runtime, &bench.run.ledger, 30);
    bench.run.finish();
}

// ----------------------------------------------------------------------------------------------
// Switches the server's own history does not show: the store record decides
// ----------------------------------------------------------------------------------------------

/// The era of the counter row of `sequence` on server `i` of `replicas` (PostgreSQL), and
/// whether it has no fence of its own (`fenced_at` unset).
fn postgres_row(replicas: &PostgresReplicas, i: usize, sequence: &str) -> (i64, bool) {
    let row = step(
        "reading the counter row",
        replicas.query(
            i,
            &format!(
                "SELECT era || ' ' || (fenced_at IS NULL) FROM gdid_counters \
                 WHERE scope_name = '{SCOPE}' AND sequence_name = '{sequence}' AND authority <> 0"
            ),
        ),
    );
    let (era, unfenced) = row
        .split_once(' ')
        .unwrap_or_else(|| panic!("a row: {row:?}"));
    let era = era.parse().unwrap_or_else(|_| panic!("an era: {era:?}"));
    (era, unfenced == "true")
}

/// The floor era of the store record on server `i` of `replicas` (PostgreSQL).
fn postgres_floor(replicas: &PostgresReplicas, i: usize) -> i64 {
    let floor = step(
        "reading the store record",
        replicas.query(
            i,
            "SELECT COALESCE(floor_era, 0) FROM gdid_authority WHERE id = 1",
        ),
    );
    floor
        .parse()
        .unwrap_or_else(|_| panic!("a floor: {floor:?}"))
}

/// Asserts that the row of `sequence`, new on server `i` of `replicas` after a switch, has no
/// fence of its own and starts at the store record's floor era, above 0: its floor era.
fn assert_at_the_floor(replicas: &PostgresReplicas, i: usize, sequence: &str) -> i64 {
    let (era, unfenced) = postgres_row(replicas, i, sequence);
    assert!(
        unfenced,
        "{sequence}, new after the switch, was fenced on its own (era {era})"
    );
    let floor = postgres_floor(replicas, i);
    assert!(
        floor > 0,
        "the store record keeps floor era 0 after the switch"
    );
    assert_eq!(era, floor, "{sequence} starts at the store's floor era");
    floor
}

/// Waits until `check` holds on server `i` of `replicas` (a `SELECT` printing `t`), at most 60 s.
fn wait_until(replicas: &PostgresReplicas, i: usize, what: &str, check: &str) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        if replicas.query(i, check).is_ok_and(|out| out == "t") {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{what}: not within 60 s ({check})");
}

#[test]
fn a_logical_replication_switch_repeats_nothing_of_a_sequence_the_subscriber_never_received() {
    let Some(publisher) = replicas(PostgresReplicas::installed(), || {
        PostgresReplicas::start_with(&["wal_level=logical"])
    }) else {
        return;
    };
    let subscriber = step("starting the subscriber", PostgresReplicas::start());
    let mut bench = Bench::new(
        publisher,
        "a_logical_replication_switch_repeats_nothing_of_a_sequence_the_subscriber_never_received",
        "publication of the gdid tables on A, subscription on B, disabled (B lags); a new \
         sequence on A; A killed, clients switched to B",
    );
    bench.next("received", 3);
    step(
        "publishing the gdid tables",
        bench.replicas.query(
            0,
            "CREATE PUBLICATION gdid FOR TABLE gdid_counters, gdid_authority",
        ),
    );
    let b = subscriber.url(0);
    step(
        "gdid schema apply on B",
        gdid(&["schema", "apply", "--store", &b]).map(drop),
    );
    let port = bench.replicas.address(0).port();
    step(
        "subscribing B",
        subscriber.query(
            0,
            &format!(
                "CREATE SUBSCRIPTION gdid CONNECTION 'host=127.0.0.1 port={port} \
                 dbname=postgres user=postgres' PUBLICATION gdid"
            ),
        ),
    );
    wait_until(
        &subscriber,
        0,
        "B received the store record and the counter row",
        "SELECT (SELECT count(*) FROM gdid_authority) = 1 \
         AND (SELECT count(*) FROM gdid_counters WHERE sequence_name = 'received') > 0",
    );
    step(
        "disabling the subscription (B lags from now on)",
        subscriber.query(0, "ALTER SUBSCRIPTION gdid DISABLE"),
    );
    bench.next("fresh", 3);
    bench.next_three_times("fresh");
    bench.next_three_times("received");
    bench.crash(0);
    bench
        .run
        .switch(|| bench.relay.set_target(subscriber.address(0)));
    bench.next_three_times("fresh");
    bench.next_three_times("received");
    bench.next("new_after_the_switch", 3);
    bench.run.finish();
    assert_at_the_floor(&subscriber, 0, "new_after_the_switch");
}

#[test]
fn a_restore_onto_another_server_repeats_nothing_of_a_sequence_the_backup_lacks() {
    let Some(old) = postgres(0) else {
        return;
    };
    let other = step("starting the other server", PostgresReplicas::start());
    let mut bench = Bench::new(
        old,
        "a_restore_onto_another_server_repeats_nothing_of_a_sequence_the_backup_lacks",
        "pg_dump of the gdid tables; a new sequence; the server lost, the dump restored onto \
         another server, clients switched to it",
    );
    bench.next("in_the_backup", 3);
    let backup = step(
        "dumping the gdid tables",
        bench.replicas.dump_gdid_tables(0, "backup"),
    );
    bench.next_three_times("in_the_backup");
    bench.next("after_the_backup", 3);
    bench.next_three_times("after_the_backup");
    bench.crash(0);
    step("restoring onto the other server", other.restore(0, &backup));
    bench
        .run
        .switch(|| bench.relay.set_target(other.address(0)));
    bench.next_three_times("in_the_backup");
    bench.next_three_times("after_the_backup");
    bench.run.finish();
}

#[test]
fn mariadb_a_promoted_replica_whose_binary_log_was_reset_repeats_nothing() {
    let Some(mariadb) = mariadb() else {
        return;
    };
    let mut bench = Bench::new(
        mariadb,
        "mariadb_a_promoted_replica_whose_binary_log_was_reset_repeats_nothing",
        "primary + replica made to lag; a new sequence on the primary; primary killed, replica \
         promoted, then RESET MASTER and gtid_slave_pos cleared (no history of the switch left)",
    );
    bench.next("received", 3);
    bench.replicas.lag(1);
    bench.next("fresh", 3);
    bench.next_three_times("fresh");
    bench.next_three_times("received");
    bench.crash(0);
    bench.replicas.take_over(1);
    step(
        "resetting the promoted replica's history",
        bench
            .replicas
            .query(1, "RESET MASTER; SET GLOBAL gtid_slave_pos = ''"),
    );
    bench.switch_to(1);
    bench.next_three_times("fresh");
    bench.next_three_times("received");
    bench.run.finish();
}

#[test]
fn a_standby_promoted_twice_starts_new_sequences_at_the_store_floor_era() {
    let Some(postgres) = postgres(1) else {
        return;
    };
    let mut bench = Bench::new(
        postgres,
        "a_standby_promoted_twice_starts_new_sequences_at_the_store_floor_era",
        "primary -> standby 1, promoted; standby 2 of it, promoted; a new sequence after each \
         (the sequence of before is refused for a minute after the second: a row moves to a \
         new era at most once a minute)",
    );
    bench.next("orders", 3);
    step("catching up", bench.replicas.wait_caught_up(1));
    bench.crash(0);
    step("promoting standby 1", bench.replicas.promote(1));
    bench.switch_to(1);
    bench.next_three_times("orders");
    bench.next("first_new", 3);
    let floor = assert_at_the_floor(&bench.replicas, 1, "first_new");
    let second = step(
        "adding standby 2 (of standby 1)",
        bench.replicas.add_standby(1),
    );
    wait_for_a_second_after(bench.run.largest_era());
    bench.crash(1);
    step("promoting standby 2", bench.replicas.promote(second));
    bench.switch_to(second);
    bench.next("second_new", 3);
    let second_floor = assert_at_the_floor(&bench.replicas, second, "second_new");
    assert!(
        second_floor > floor,
        "the second promotion moves the floor era on"
    );
    bench.run.finish();
}

#[test]
fn a_fence_is_refused_while_the_clocks_are_an_hour_apart() {
    let Some(postgres) = postgres(0) else {
        return;
    };
    let faketime = which("faketime");
    if faketime.is_none() && std::env::var("CI").as_deref() == Ok("true") {
        panic!("faketime is not installed (apt-get install faketime), and CI=true");
    }
    let Some(faketime) = faketime else {
        eprintln!("skipped: faketime is not installed");
        return;
    };
    let url = postgres.url(0);
    let run = Run::new(
        "a_fence_is_refused_while_the_clocks_are_an_hour_apart",
        "PostgreSQL",
        "a counter row made to look last moved by another server; gdid next with a clock two \
         days ahead of the server's, then with the right clock",
    );
    run.next(&url, "orders", 3, &[]);
    step(
        "moving the row to another lineage",
        postgres
            .query(
                0,
                "UPDATE gdid_counters SET lineage = 'another server' WHERE authority <> 0",
            )
            .map(drop),
    );
    let binary = gdid_binary().unwrap_or_else(|e| panic!("{e}"));
    let ahead = Command::new(&faketime)
        .args(["-f", "+2d"])
        .arg(&binary)
        .args([
            "next",
            "--store",
            &url,
            "--scope",
            SCOPE,
            "--sequence",
            "orders",
        ])
        .env("RUST_LOG", "warn")
        .output()
        .expect("faketime gdid next");
    let said = String::from_utf8_lossy(&ahead.stderr);
    assert!(
        !ahead.status.success() && said.contains("3600 s apart"),
        "a fence with the clocks two days apart: {} {said}",
        ahead.status
    );
    run.switch(|| ());
    run.next_three_times(&url, "orders");
    assert!(
        run.largest_era() > 0,
        "with the right clock the row moved to a new era"
    );
    run.finish();
}

/// The program `name` on the `PATH`, if there is one.
fn which(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}
