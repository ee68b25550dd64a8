//! The scenarios: each drives a fault against real parts and returns a [`Row`].

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gdid_core::Gdid;
use gdid_engine::BlockGenerator;
use rand::Rng;

use crate::calls::Calls;
use crate::error::SetupError;
use crate::proxy::FaultProxy;
use crate::row::{Outcome, Row, Timing, duplicates};
use crate::server::Server;
use crate::store;
use crate::url::ServerUrl;

/// A relay to the server of `url`, and the URL of the same database through it.
async fn relay(url: &str) -> Result<(FaultProxy, String), SetupError> {
    let server = ServerUrl::parse(url).ok_or("no scheme://host:port")?;
    let proxy = FaultProxy::start(server.address()?).await?;
    let via_proxy = server.via(proxy.address());
    Ok((proxy, via_proxy))
}

/// A slow and flaky store: a generator issuing 20,000 ids/s from `url` through a relay that adds
/// 10 ms, then 100 ms (3 s each), then 1 s (6 s) to every packet, then cuts every connection
/// twice. At 1 s a packet no block comes within the allocation timeout (3 s): for those 6 s the
/// store is as good as down, and the ids in hand (a cover of 10 s) must carry the callers until
/// it is fast again. Recovery: from the latency's end to the next block fetched.
///
/// # Errors
///
/// When the relay or the authority cannot be set up.
pub async fn slow_store(name: &str, url: &str) -> Result<Outcome, SetupError> {
    let (proxy, via_proxy) = relay(url).await?;
    let ids = BlockGenerator::builder(&gdid_testkit::fresh("slow"), "ids")
        .shared_authority(store::authority(&via_proxy, 1).await?)
        .cover(Duration::from_secs(10))
        .build()?;
    ids.next_id().await?; // the first block is always waited for
    let mut calls = Calls::new();
    calls.warm_up(&ids, 20).await;
    for latency in [10, 100] {
        proxy.set_latency(Duration::from_millis(latency));
        calls.at_rate(&ids, 20, Duration::from_secs(3)).await;
    }
    proxy.set_latency(Duration::from_secs(1));
    calls.at_rate(&ids, 20, Duration::from_secs(6)).await;
    let cover_left = ids.stats().cover_left.unwrap_or_default();
    proxy.set_latency(Duration::ZERO);
    let fast_again = Instant::now();
    let before = ids.stats().allocations;
    let mut recovery = None;
    for _ in 0..2 {
        proxy.cut();
        for _ in 0..20 {
            calls.at_rate(&ids, 20, Duration::from_millis(50)).await;
            if recovery.is_none() && ids.stats().allocations > before {
                recovery = Some(fast_again.elapsed());
            }
        }
    }
    calls.into_outcome(
        format!("slow store ({name})"),
        format!(
            "20k ids/s, cover 10 s; +10 ms, +100 ms (3 s each), +1 s (6 s; {:.1} s of ids left) per packet; then connections cut twice",
            cover_left.as_secs_f64()
        ),
        recovery,
    )
}

/// Failover: authority 1 on `first`, authority 2 on `second`, both through relays; blocks of a
/// fixed 1,000 ids so that allocations keep coming. The first relay goes down for 6 s, then up.
/// Recovery is how long until authority 2 served after the first went down.
///
/// # Errors
///
/// When the relays or the authorities cannot be set up.
pub async fn failover(first: (&str, &str), second: (&str, &str)) -> Result<Row, SetupError> {
    let mut proxies = Vec::new();
    let mut builder = BlockGenerator::builder(&gdid_testkit::fresh("failover"), "ids")
        .fixed_block_size(1_000)
        .allocation_timeout(Duration::from_secs(1));
    for (number, (_, url)) in (1..).zip([first, second]) {
        let (proxy, via_proxy) = relay(url).await?;
        builder = builder.shared_authority(store::authority(&via_proxy, number).await?);
        proxies.push(proxy);
    }
    let ids = builder.build()?;
    let mut calls = Calls::new();
    calls.at_rate(&ids, 10, Duration::from_secs(1)).await;
    proxies[0].set_down(true);
    let down = Instant::now();
    let mut recovery = None;
    while down.elapsed() < Duration::from_secs(6) {
        calls.at_rate(&ids, 10, Duration::from_millis(50)).await;
        if recovery.is_none() && calls.ids.last().is_some_and(|id| id.authority() == 2) {
            recovery = Some(down.elapsed());
        }
    }
    proxies[0].set_down(false);
    let up = Instant::now();
    let mut back_to_first = None;
    while up.elapsed() < Duration::from_secs(15) && back_to_first.is_none() {
        calls.at_rate(&ids, 10, Duration::from_millis(50)).await;
        if calls.ids.last().is_some_and(|id| id.authority() == 1) {
            back_to_first = Some(up.elapsed());
        }
    }
    let (a, b) = (first.0, second.0);
    calls.into_row(
        format!("failover ({a} → {b})"),
        format!(
            "10k ids/s, blocks of 1,000; {a} down 6 s, then up: back on {a} after {}",
            back_to_first.map_or_else(|| "more than 15 s".to_owned(), |d| format!("{d:.1?}"))
        ),
        recovery,
    )
}

/// How many ids each `gdid next` of the crash loop asks for.
pub const CRASH_LOOP_COUNT: u64 = 100_000;

/// The crash loop: 4 `gdid next` processes on `store`, each asking for [`CRASH_LOOP_COUNT`] ids,
/// killed with SIGKILL at a random moment (0-200 ms after it starts) and started again, 20 times;
/// every id printed is collected.
///
/// # Errors
///
/// When a process cannot be started.
pub fn crash_loop(gdid: &Path, name: &str, store: &str) -> Result<Row, SetupError> {
    let scope = gdid_testkit::fresh("crash");
    let per_worker: Vec<Result<Vec<Gdid>, String>> = std::thread::scope(|scope_| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                scope_.spawn(|| {
                    let mut ids = Vec::new();
                    for _ in 0..20 {
                        ids.extend(run_and_kill(gdid, store, &scope).map_err(|e| e.to_string())?);
                    }
                    Ok(ids)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err("a worker panicked".into())))
            .collect()
    });
    let mut ids = Vec::new();
    for worker in per_worker {
        ids.extend(worker?);
    }
    let issued = u64::try_from(ids.len())?;
    let duplicates = duplicates(&ids);
    // Every counter from 1 to the highest issued was reserved by some process.
    let highest = ids.iter().map(|id| id.counter()).max().unwrap_or(0);
    Ok(Row {
        fault: format!("crash loop ({name})"),
        done: "4 `gdid next` processes, each SIGKILLed 20 times at random and restarted".into(),
        issued,
        caller_errors: 0,
        duplicates,
        lost_to_gaps: highest.saturating_sub(issued - duplicates),
        timing: Timing::UNMEASURED,
    })
}

/// One `gdid next` process killed 0-200 ms after it starts; the ids it printed in full lines.
fn run_and_kill(gdid: &Path, store: &str, scope: &str) -> Result<Vec<Gdid>, SetupError> {
    let mut child = Command::new(gdid)
        .args(["next", "--store", store, "--scope", scope, "--count"])
        .arg(CRASH_LOOP_COUNT.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let reader = std::thread::spawn(move || {
        // A line cut by the kill has no newline: it is left out.
        let mut ids = Vec::new();
        let mut lines = BufReader::new(stdout);
        let mut line = String::new();
        while lines.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(text) = line.strip_suffix('\n') {
                ids.push(text.parse::<Gdid>());
            }
            line.clear();
        }
        ids
    });
    std::thread::sleep(Duration::from_millis(rand::rng().random_range(0..200)));
    child.kill()?; // SIGKILL (a process that finished first is left as it is)
    child.wait()?;
    let printed = reader.join().map_err(|_| "the reader panicked")?;
    Ok(printed.into_iter().collect::<Result<_, _>>()?)
}

/// Issues `per_ms` ids a millisecond until `operation` (stopping or starting a server) is done;
/// returns its result.
async fn issue_during<T: Send + 'static>(
    calls: &mut Calls,
    ids: &BlockGenerator,
    per_ms: u32,
    operation: impl FnOnce() -> T + Send + 'static,
) -> Result<T, SetupError> {
    let operation = tokio::task::spawn_blocking(operation);
    while !operation.is_finished() {
        calls.at_rate(ids, per_ms, Duration::from_millis(50)).await;
    }
    Ok(operation.await?)
}

/// The database (a private server of the suite's) stopped for real mid-run, twice:
/// - for 5 s, shorter than the cover (15 s): callers see nothing;
/// - with a cover of 2 s, for 4 s longer than the ids in hand last at the real rate (a young
///   generator may hold more than its cover): callers get the typed error within the request
///   timeout (2 s), and ids come again by themselves once the server is back.
///
/// Recovery: from the server accepting connections again to the next block fetched, callers
/// asking for 20,000 ids/s from then on so that one comes due (first row), or to the first 50 ms
/// of calls without an error (second row).
///
/// # Errors
///
/// When the server cannot be stopped or started, or the authority cannot be set up.
pub async fn server_stopped(server: &Server) -> Result<Vec<Outcome>, SetupError> {
    let (name, url) = (server.engine().name(), server.url());
    let mut rows = Vec::new();
    for (within_cover, cover) in [(true, 15), (false, 2)] {
        let ids = BlockGenerator::builder(&gdid_testkit::fresh("stopped"), "ids")
            .shared_authority(store::authority(url, 1).await?)
            .cover(Duration::from_secs(cover))
            .request_timeout(Duration::from_secs(2))
            .build()?;
        ids.next_id().await?;
        let mut calls = Calls::new();
        calls.warm_up(&ids, 5).await;
        let outage = if within_cover {
            Duration::from_secs(5)
        } else {
            // The ids in hand at 5,000 a second, and 4 s more.
            let in_hand = Duration::from_millis(ids.stats().ids_in_hand / 5);
            (in_hand + Duration::from_secs(4)).min(Duration::from_secs(40))
        };
        let server = server.clone();
        let stopped = issue_during(&mut calls, &ids, 5, move || server.stop()).await??;
        calls.at_rate(&ids, 5, outage).await;
        let errors_while_down = calls.errors;
        issue_during(&mut calls, &ids, 5, move || stopped.start()).await??;
        let back = Instant::now();
        let allocations = ids.stats().allocations;
        // Within the cover the ids in hand may last another minute at 5,000 a second: callers
        // ask for 20,000 a second after the restart, so that a block comes due.
        let per_ms_after = if within_cover { 20 } else { 5 };
        let mut recovery = None;
        while recovery.is_none() && back.elapsed() < Duration::from_secs(60) {
            let errors = calls.errors;
            calls
                .at_rate(&ids, per_ms_after, Duration::from_millis(50))
                .await;
            let recovered = if within_cover {
                ids.stats().allocations > allocations
            } else {
                // With no ids in hand, 50 ms of calls without an error: a block came.
                calls.errors == errors
            };
            if recovered {
                recovery = Some(back.elapsed());
            }
        }
        calls.at_rate(&ids, 5, Duration::from_secs(1)).await;
        rows.push(calls.into_outcome(
            format!("{name} stopped {:.1} s, cover {cover} s", outage.as_secs_f64()),
            format!(
                "{} ids/s, request timeout 2 s; server stopped and started for real; {errors_while_down} errors while down",
                if within_cover { "5k (20k after the restart)" } else { "5k" }
            ),
            recovery,
        )?);
    }
    Ok(rows)
}
