//! `gdid serve` under fire, on real processes: two servers (authorities 1 and 2, each on a store of
//! its own, SQLite files or PostgreSQL databases), four client processes issuing ids through
//! both, and server 1 killed with SIGKILL mid-run, then restarted on its port. No id is printed
//! twice, no client sees an error while server 2 is up, and server 1's ids from before the kill
//! are never issued again. The token may give ids back (`SCOPE:give-back`), so the clients' closes and
//! the leases are in play too.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gdid::verify::Ledger;
use gdid::{Gdid, Store};
use gdid_testkit::{database, processes, server, sqlite_url};

const TEST: &str = "clients_never_repeat_an_id_while_a_server_is_killed_and_restarted";
const TOKEN: &str = "serve-faults-token-0123456789";
/// Ids each client prints.
const PER_CLIENT: usize = 6_000;
const CLIENTS: usize = 4;
/// What a client prints before each id, and before an error.
const ID: &str = "gdid-id ";
const FAILED: &str = "gdid-error ";

/// A `gdid serve` process and the URL it serves.
struct Served {
    /// Killed if a test that fails midway drops it.
    child: common::KillOnDrop,
    url: String,
}

impl Served {
    /// Starts `gdid serve` for `store` as authority `number` on `port` (0: any), and waits for
    /// the URL it prints.
    fn start(store: &str, number: u8, tokens: &Path, port: u16) -> Served {
        let (number, listen) = (number.to_string(), format!("127.0.0.1:{port}"));
        let tokens = tokens.to_str().expect("a UTF-8 path");
        let args = ["serve", "--store", store, "--authority", &number];
        let args = [&args[..], &["--listen", &listen, "--tokens", tokens]].concat();
        let (child, url) = common::serve(&args, Stdio::null());
        assert!(url.starts_with("http://"), "gdid serve printed {url:?}");
        Served { child, url }
    }

    fn port(&self) -> u16 {
        self.url.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// SIGKILL: no shutdown, nothing given back.
    fn kill(&mut self) {
        self.child.0.kill().unwrap();
        self.child.0.wait().unwrap();
    }

    /// SIGTERM, and its exit status.
    fn terminate(mut self) -> std::process::ExitStatus {
        self.child.terminate()
    }
}

/// A client: the test executable again, as a worker of `urls`.
fn client(urls: &str, scope: &str, start: &Path) -> Child {
    processes::rerun(TEST)
        .env("GDID_SERVE_CLIENT_URLS", urls)
        .env("GDID_SERVE_CLIENT_SCOPE", scope)
        .env("GDID_SERVE_CLIENT_START", start)
        .env("GDID_TOKEN", TOKEN)
        .spawn()
        .unwrap()
}

/// What a client does: opens both servers as stores (the token from `GDID_TOKEN`), then prints
/// `PER_CLIENT` ids from small blocks, so that it asks the servers for one often, pausing 1 ms
/// every 5 ids as a service between requests would (so that the run lasts past the restart).
async fn run_client(urls: &str, scope: &str, start: &Path) {
    let urls: Vec<&str> = urls.split(' ').collect();
    let stores = Store::open_all(&urls)
        .await
        .expect("both servers are up at the start");
    let ids = stores
        .block_generator(scope, "orders")
        .fixed_block_size(40)
        .backoff(Duration::from_millis(20), Duration::from_millis(200))
        .build()
        .unwrap();
    while !start.exists() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for n in 0..PER_CLIENT {
        if n % 5 == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        match ids.next_id().await {
            Ok(id) => println!("{ID}{id}"),
            Err(error) => {
                println!("{FAILED}{error}");
                std::process::exit(1);
            }
        }
    }
    let _ = ids.close().await;
}

/// The next counter recorded in `store` for authority `number`'s `scope`/orders.
async fn next_counter(store: &str, number: u8, scope: &str) -> u64 {
    let store = Store::options()
        .authority(number)
        .open(store)
        .await
        .unwrap();
    let sequences = store.sequences().await.unwrap();
    let found = sequences
        .iter()
        .find(|s| s.scope == scope && s.sequence == "orders" && !s.one_at_a_time && s.key == number)
        .expect("the sequence is recorded");
    found.next
}

async fn killed_and_restarted(store_one: &str, store_two: &str, what: &str) {
    let dir: PathBuf = std::env::temp_dir().join(gdid_testkit::fresh("serve_faults"));
    std::fs::create_dir_all(&dir).unwrap();
    let scope = "shop";
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, format!("{TOKEN} {scope}:give-back\n")).unwrap();
    let mut one = Served::start(store_one, 1, &tokens, 0);
    let two = Served::start(store_two, 2, &tokens, 0);
    let urls = format!("{} {}", one.url, two.url);

    let start = dir.join("start");
    let printed = Arc::new(AtomicUsize::new(0));
    let all = Arc::new(Mutex::new(Vec::new()));
    let readers: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let mut child = client(&urls, scope, &start);
            let (printed, all) = (printed.clone(), all.clone());
            std::thread::spawn(move || {
                let (mut ids, mut errors) = (0, Vec::new());
                for line in BufReader::new(child.stdout.take().unwrap()).lines() {
                    let line = line.unwrap();
                    if let Some((_, id)) = line.split_once(ID) {
                        all.lock().unwrap().push(id.parse::<Gdid>().unwrap());
                        printed.fetch_add(1, Ordering::Relaxed);
                        ids += 1;
                    } else if let Some((_, error)) = line.split_once(FAILED) {
                        errors.push(error.to_owned());
                    }
                }
                (ids, errors, child.wait().unwrap())
            })
        })
        .collect();
    std::fs::write(&start, b"go").unwrap();

    // A quarter of the way through, server 1 dies without a word.
    let total = CLIENTS * PER_CLIENT;
    let began = Instant::now();
    while printed.load(Ordering::Relaxed) < total / 4 {
        assert!(
            began.elapsed() < Duration::from_secs(120),
            "{what}: the clients stalled"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let port = one.port();
    one.kill();
    let at_kill = printed.load(Ordering::Relaxed);
    let persisted = next_counter(store_one, 1, scope).await;
    // Every id server 1 handed out before it died is below its store's counter.
    let issued_by_one: Vec<Gdid> = all
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|id| id.authority() == 1)
        .collect();
    assert!(
        !issued_by_one.is_empty(),
        "{what}: server 1 served nobody before its kill"
    );
    assert!(issued_by_one.iter().all(|id| id.counter() < persisted));
    std::thread::sleep(Duration::from_millis(300));
    let one = Served::start(store_one, 1, &tokens, port);
    let at_restart = printed.load(Ordering::Relaxed);

    for (k, reader) in readers.into_iter().enumerate() {
        let (ids, errors, status) = reader.join().unwrap();
        assert!(
            errors.is_empty(),
            "{what}: client {k} saw errors: {errors:?}"
        );
        assert!(status.success(), "{what}: client {k} exited with {status}");
        assert_eq!(ids, PER_CLIENT, "{what}: client {k} stopped early");
    }
    let all = all.lock().unwrap();
    assert_eq!(all.len(), total);
    // The checker of `gdid verify`: no id twice, whichever client got it.
    let mut ledger = Ledger::new();
    let clients = ledger.writer("the clients");
    for id in all.iter() {
        ledger.record(clients, *id);
    }
    let report = ledger.report();
    assert!(report.is_unique(), "{what}: {report}");
    assert!(
        at_restart < total,
        "{what}: the clients were done before server 1 came back ({at_kill} at the kill)"
    );
    // The restarted server went on from its store's counter, and was asked again.
    let after_restart = all
        .iter()
        .filter(|id| id.authority() == 1 && id.counter() >= persisted)
        .count();
    assert!(
        after_restart > 0,
        "{what}: server 1 served nobody after its restart ({at_kill} ids printed at the kill, \
         {at_restart} at the restart, of {total})"
    );
    eprintln!(
        "{what}: {total} ids from {CLIENTS} clients, none twice, none failed; server 1 killed \
         at {at_kill} and restarted at {at_restart}, then served {after_restart}"
    );
    let last_of_one = all.iter().filter(|id| id.authority() == 1).max().unwrap();
    let again = common::gdid_with_env(
        &[
            "next",
            "--store",
            &one.url,
            "--scope",
            scope,
            "--sequence",
            "orders",
        ],
        &[("GDID_TOKEN", TOKEN)],
    );
    let next: Gdid = common::stdout(&again).trim().parse().expect("an id");
    assert!(next > *last_of_one, "{what}: {next} after {last_of_one}");

    assert!(one.terminate().success(), "{what}: server 1 on SIGTERM");
    assert!(two.terminate().success(), "{what}: server 2 on SIGTERM");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_never_repeat_an_id_while_a_server_is_killed_and_restarted() {
    if let (Ok(urls), Ok(scope), Some(start)) = (
        std::env::var("GDID_SERVE_CLIENT_URLS"),
        std::env::var("GDID_SERVE_CLIENT_SCOPE"),
        std::env::var_os("GDID_SERVE_CLIENT_START"),
    ) {
        return run_client(&urls, &scope, Path::new(&start)).await;
    }
    killed_and_restarted(
        &sqlite_url("serve_faults_one"),
        &sqlite_url("serve_faults_two"),
        "SQLite",
    )
    .await;
    if let Some(url) = server("GDID_POSTGRES_URL") {
        let one = database(&url, &gdid_testkit::fresh("serve_one")).await;
        let two = database(&url, &gdid_testkit::fresh("serve_two")).await;
        killed_and_restarted(&one, &two, "PostgreSQL").await;
    }
}
