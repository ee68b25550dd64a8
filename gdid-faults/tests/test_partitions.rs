//! Network partitions between a client, two `gdid serve` authorities and their PostgreSQL: no
//! id twice, no caller error while another authority answers, and how long each recovery took.
//!
//! Hosts are network namespaces joined by veth pairs ([`Network`]), made by the test and removed
//! after it (after a failed run too):
//!
//! ```text
//!   client ──c1/s1c── server 1 (gdid serve, authority 1) ──s1d/d1── ┐
//!          ──c2/s2c── server 2 (gdid serve, authority 2) ──s2d/d2── ┴ PostgreSQL (a private
//!                                                                     server, the machine's
//!                                                                     namespace, two databases)
//! ```
//!
//! The client is one long-lived generator over both servers, server 1 preferred, with blocks of
//! 100 ids (it goes back to its authorities about ten times a second), taking an id every
//! millisecond (`gdid-faults partition-client`). It reaches the servers through a relay in its
//! own namespace (`gdid-faults partition-relay`), which adds the delay and loss: `tc netem` is
//! not in every kernel (this machine's has none), a relay is. One fault at a time, each healed before the
//! next: the client cut from server 1; server 1 paused (SIGSTOP) longer than the client's 3 s
//! allocation timeout; server 1 cut from its PostgreSQL; 200 ms of delay and 20 % loss between
//! the client and both servers. Every id the client printed is then checked by `gdid verify`.
//!
//! Needs root, iproute2 (`ip`) and PostgreSQL; build the command first (`cargo build -p
//! gdid-cli`), then `cargo test -p gdid-faults --test test_partitions -- --nocapture` for the
//! table of recoveries. Without them the test is skipped, and fails under `CI=true`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gdid::Gdid;
use gdid_faults::gdid_binary;
use gdid_faults::netns::Network;
use gdid_faults::partition::{SCOPE, unix_ms};
use gdid_faults::server::PostgresReplicas;

/// The port both servers listen on, each on its own address.
const SERVE_PORT: u16 = 7070;

/// How long each fault lasts.
const HOLD: Duration = Duration::from_secs(6);

/// How long, after a fault is healed, the client gets to take ids from server 1 again.
const RECOVERY_PATIENCE: Duration = Duration::from_secs(30);

/// A process killed (and reaped) when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A file removed when dropped.
struct TempFile(std::path::PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// One line of the client: when, and the id or the error.
#[derive(Debug, Clone)]
struct Got {
    ms: u128,
    id: Result<Gdid, String>,
}

/// The hosts, the servers and the client, for as long as the test runs.
/// Dropped in this order: the processes, PostgreSQL, then the hosts.
struct Setup {
    client_host: String,
    server_hosts: [String; 2],
    servers: Vec<Running>,
    /// The relay between the client and the servers: its commands, and its answers.
    relay: Mutex<(
        std::process::ChildStdin,
        std::io::Lines<BufReader<std::process::ChildStdout>>,
    )>,
    _relay: Running,
    _client: Running,
    got: Arc<Mutex<Vec<Got>>>,
    _pg: PostgresReplicas,
    _tokens: TempFile,
    net: Network,
}

/// Sends `signal` (`STOP`, `CONT`) to `process`.
fn signal(process: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &process.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill -{signal}");
}

/// The first line `child` prints on its standard output, within 30 s; the rest is drained.
fn first_line(child: &mut Child, what: &str) -> String {
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let _ = tx.send(lines.next());
        for _ in lines {}
    });
    match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(Some(Ok(line))) => line,
        other => panic!("{what} printed no line: {other:?}"),
    }
}

impl Setup {
    fn start(pg_installed: Result<(), String>) -> Option<Setup> {
        let store = "PostgreSQL";
        let available = pg_installed.and_then(|()| Network::available());
        if let Err(why) = available {
            gdid_testkit::unavailable(store, &format!("partitions: {why}"));
            return None;
        }
        gdid_testkit::ran(store);
        let mut net = Network::new().expect("network");
        let client_host = net.host("c").expect("client host");
        let server_hosts = [net.host("s1").expect("host"), net.host("s2").expect("host")];
        for (i, host) in server_hosts.iter().enumerate() {
            let n = i + 1;
            net.link(
                (
                    Some(&client_host),
                    &format!("c{n}"),
                    &format!("10.201.{n}.1/30"),
                ),
                (Some(host), &format!("s{n}c"), &format!("10.201.{n}.2/30")),
            )
            .expect("client link");
            net.link(
                (
                    Some(host),
                    &format!("s{n}d"),
                    &format!("10.201.{}.2/30", n + 2),
                ),
                (None, &format!("d{n}"), &format!("10.201.{}.1/30", n + 2)),
            )
            .expect("database link");
        }

        let pg =
            PostgresReplicas::start_with(&["listen_addresses=127.0.0.1,10.201.3.1,10.201.4.1"])
                .expect("PostgreSQL");
        pg.trust_network(0, "10.201.0.0/16").expect("pg_hba");
        pg.query(0, "CREATE DATABASE second")
            .expect("second database");
        let pg_port = pg.address(0).port();

        let gdid = gdid_binary().unwrap_or_else(|e| panic!("{e}"));
        let token = Command::new(&gdid)
            .args(["token", "--scopes", SCOPE])
            .output()
            .expect("gdid token");
        let token = String::from_utf8(token.stdout).expect("token");
        let mut lines = token.lines();
        let (token, tokens_line) = (lines.next().unwrap(), lines.next().unwrap());
        let tokens = std::env::temp_dir().join(format!("gdid-partition-{}", std::process::id()));
        std::fs::write(&tokens, format!("{tokens_line}\n")).expect("tokens file");
        let tokens = TempFile(tokens);

        let mut servers = Vec::new();
        let mut urls = Vec::new();
        for (i, (host, database)) in server_hosts.iter().zip(["postgres", "second"]).enumerate() {
            let n = i + 1;
            let store = format!(
                "postgres://postgres@10.201.{}.1:{pg_port}/{database}",
                n + 2
            );
            let listen = format!("10.201.{n}.2:{SERVE_PORT}");
            let mut server = net
                .exec(host, &gdid)
                .args(["serve", "--store", &store, "--authority", &n.to_string()])
                .args(["--listen", &listen, "--tokens"])
                .arg(&tokens.0)
                .stdout(Stdio::piped())
                .spawn()
                .expect("gdid serve");
            let url = first_line(&mut server, &format!("gdid serve {n}"));
            urls.push(url);
            servers.push(Running(server));
        }

        // The client reaches the servers through a relay in its own namespace, which adds delay
        // and loss when told to.
        let addresses: Vec<&str> = urls
            .iter()
            .map(|url| url.trim_start_matches("http://"))
            .collect();
        let mut relay = net
            .exec(&client_host, env!("CARGO_BIN_EXE_gdid-faults"))
            .arg("partition-relay")
            .args(&addresses)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("partition relay");
        let commands = relay.stdin.take().expect("piped stdin");
        let mut answers = BufReader::new(relay.stdout.take().expect("piped stdout")).lines();
        let urls: Vec<String> = urls
            .iter()
            .map(|_| {
                format!(
                    "http://{}",
                    answers.next().expect("a relay").expect("a relay")
                )
            })
            .collect();

        let mut client = net
            .exec(&client_host, env!("CARGO_BIN_EXE_gdid-faults"))
            .args(["partition-client", token, "partitioned"])
            .args(&urls)
            .stdout(Stdio::piped())
            .spawn()
            .expect("partition client");
        let got = Arc::new(Mutex::new(Vec::new()));
        let stdout = client.stdout.take().expect("piped stdout");
        let lines = got.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let (ms, rest) = line.split_once(' ').expect("MS REST");
                let id = match rest.strip_prefix("error ") {
                    Some(error) => Err(error.to_owned()),
                    None => Ok(rest.parse::<Gdid>().expect("an id")),
                };
                let ms = ms.parse().expect("ms");
                lines.lock().unwrap().push(Got { ms, id });
            }
        });
        Some(Setup {
            client_host,
            server_hosts,
            servers,
            relay: Mutex::new((commands, answers)),
            _relay: Running(relay),
            _client: Running(client),
            got,
            _pg: pg,
            _tokens: tokens,
            net,
        })
    }

    /// Tells the relay `command` (`degrade MS PERCENT`, `clear`) and waits until it is applied.
    fn relay(&self, command: &str) {
        let mut relay = self.relay.lock().unwrap();
        writeln!(relay.0, "{command}").expect("relay command");
        let answer = relay.1.next().expect("relay answer").expect("relay answer");
        assert_eq!(answer, "ok", "relay: {command}");
    }

    /// What the client got from `from` ms on.
    fn since(&self, from: u128) -> Vec<Got> {
        let got = self.got.lock().unwrap();
        got.iter().filter(|g| g.ms >= from).cloned().collect()
    }

    /// Waits until the client takes an id of authority 1 after `from` ms; how long after.
    fn back_on_server_1(&self, from: u128) -> Option<u128> {
        let started = std::time::Instant::now();
        while started.elapsed() < RECOVERY_PATIENCE {
            let first = self
                .since(from)
                .into_iter()
                .find(|g| g.id.as_ref().is_ok_and(|id| id.authority() == 1));
            if let Some(first) = first {
                return Some(first.ms - from);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

/// What a fault did to the client.
struct Outcome {
    fault: &'static str,
    ids: usize,
    from_server_2: usize,
    errors: Vec<String>,
    longest_wait_ms: u128,
    back_on_server_1_ms: Option<u128>,
}

/// Puts `fault` in place (`put(setup, true)`), holds it for [`HOLD`], heals it
/// (`put(setup, false)`), and waits for the client to be back on server 1.
fn run_fault(setup: &Setup, fault: &'static str, put: impl Fn(&Setup, bool)) -> Outcome {
    let from = unix_ms();
    put(setup, true);
    std::thread::sleep(HOLD);
    let healed = unix_ms();
    put(setup, false);
    let back = setup.back_on_server_1(healed);
    let got = setup.since(from);
    let mut longest_wait_ms = 0;
    let mut last = from;
    for g in got.iter().filter(|g| g.id.is_ok()) {
        longest_wait_ms = longest_wait_ms.max(g.ms - last);
        last = g.ms;
    }
    Outcome {
        fault,
        ids: got.iter().filter(|g| g.id.is_ok()).count(),
        from_server_2: got
            .iter()
            .filter(|g| g.id.as_ref().is_ok_and(|id| id.authority() == 2))
            .count(),
        errors: got.iter().filter_map(|g| g.id.clone().err()).collect(),
        longest_wait_ms,
        back_on_server_1_ms: back,
    }
}

/// The fault of [`run_fault`] that cuts the link `tag` of namespace `host` (down while it is put).
fn cut<'a>(host: &'a str, tag: &'a str) -> impl Fn(&Setup, bool) + 'a {
    move |s, cut| s.net.set_up(Some(host), tag, !cut).unwrap()
}

#[test]
fn partitions_issue_no_id_twice_and_the_client_never_fails() {
    let Some(setup) = Setup::start(PostgresReplicas::installed()) else {
        return;
    };
    let warm = unix_ms();
    assert!(
        setup.back_on_server_1(warm).is_some(),
        "the client took no id from server 1"
    );
    let (c, [s1, _]) = (setup.client_host.clone(), setup.server_hosts.clone());

    let outcomes = [
        run_fault(&setup, "client cut from server 1", cut(&c, "c1")),
        run_fault(&setup, "server 1 paused (SIGSTOP) 6 s", |s, paused| {
            signal(&s.servers[0].0, if paused { "STOP" } else { "CONT" });
        }),
        run_fault(&setup, "server 1 cut from PostgreSQL", cut(&s1, "s1d")),
        run_fault(&setup, "200 ms delay, 20 % loss to both", |s, degraded| {
            s.relay(if degraded { "degrade 200 20" } else { "clear" });
        }),
    ];
    let all = setup.since(0);
    drop(setup);

    eprintln!(
        "\n| fault (held {} s) | ids | from server 2 | caller errors | longest wait for an id | back on server 1 after the heal |",
        HOLD.as_secs()
    );
    eprintln!("|---|---|---|---|---|---|");
    for o in &outcomes {
        eprintln!(
            "| {} | {} | {} | {} | {} ms | {} |",
            o.fault,
            o.ids,
            o.from_server_2,
            o.errors.len(),
            o.longest_wait_ms,
            o.back_on_server_1_ms
                .map_or("not within 30 s".to_owned(), |ms| format!("{ms} ms")),
        );
    }

    // Every id the client printed, checked by `gdid verify`.
    let ids: Vec<String> = all
        .iter()
        .filter_map(|g| g.id.as_ref().ok().map(ToString::to_string))
        .collect();
    let mut verify = Command::new(gdid_binary().unwrap())
        .arg("verify")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gdid verify");
    let mut stdin = verify.stdin.take().unwrap();
    stdin.write_all((ids.join("\n") + "\n").as_bytes()).unwrap();
    drop(stdin);
    let verified = verify.wait_with_output().unwrap();
    let report = String::from_utf8_lossy(&verified.stdout);
    eprintln!("gdid verify: {}", report.lines().next().unwrap_or(""));
    assert_eq!(
        verified.status.code(),
        Some(0),
        "ids issued twice:\n{report}"
    );
    assert!(ids.len() > 2_000, "only {} ids", ids.len());

    for o in &outcomes {
        assert!(
            o.errors.is_empty(),
            "{}: the caller got {} error(s) while server 2 answered, e.g. {}",
            o.fault,
            o.errors.len(),
            o.errors[0]
        );
        assert!(
            o.back_on_server_1_ms.is_some(),
            "{}: never back on server 1",
            o.fault
        );
    }
    let cut = &outcomes[0];
    assert!(
        cut.from_server_2 > 0,
        "{}: no id came from server 2",
        cut.fault
    );
}
