//! Runs every fault scenario and prints the table of docs/benchmarks/faults.md: on SQLite, and on private MariaDB,
//! PostgreSQL and MongoDB test servers it starts for the run (see `gdid_faults::server`), for
//! each installed here. The machine's own servers are left alone.
//!
//! ```sh
//! cargo build --release -p gdid-cli && cargo run --release -p gdid-faults
//! cargo run --release -p gdid-faults -- crash-loop load   # only these scenarios
//! ```
//!
//! The scenarios, by the name that runs it alone: `stopped`, `slow`, `failover`, `crash-loop`,
//! `load`, `bad-data`. `gdid-faults load-worker …` is one process of the load scenario (see
//! `gdid_faults::load`), `gdid-faults partition-client …` the client of the partition tests
//! (`gdid_faults::partition`).

use std::io::Write;
use std::process::ExitCode;

use gdid_faults::load::{Load, Worker};
use gdid_faults::server::{Engine, PrivateServers};
use gdid_faults::{Row, SetupError, gdid_binary, scenarios};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        Some((command, worker)) if command == "load-worker" => load_worker(worker),
        Some((command, args)) if command == "partition-client" => partition_client(args),
        Some((command, targets)) if command == "partition-relay" => {
            runtime(1).map_err(Into::into).and_then(|runtime| {
                let (input, mut out) = (std::io::stdin().lock(), std::io::stdout().lock());
                gdid_faults::partition::relay(&runtime, targets, input, &mut out)
            })
        }
        _ => Chosen::from_args(&args).and_then(all_scenarios),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gdid-faults: {e}");
            ExitCode::FAILURE
        }
    }
}

fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
}

/// One process of the load scenario: the ids on stdout, the report on stderr.
fn load_worker(args: &[String]) -> Result<(), SetupError> {
    let worker = Worker::from_args(args)?;
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let report =
        runtime(usize::try_from(worker.load.threads)?)?.block_on(worker.run(&mut stdout))?;
    stdout.flush()?;
    eprintln!("{}", report.line());
    Ok(())
}

/// The client of the partition tests (`gdid_faults::partition`): `TOKEN SEQUENCE URL…`.
fn partition_client(args: &[String]) -> Result<(), SetupError> {
    let [token, sequence, urls @ ..] = args else {
        return Err("partition-client TOKEN SEQUENCE URL…".into());
    };
    let mut stdout = std::io::stdout().lock();
    runtime(2)?.block_on(gdid_faults::partition::client(
        token,
        sequence,
        urls,
        &mut stdout,
    ))
}

/// The scenarios to run, by name ([`Chosen::NAMES`]); all of them when none is named.
struct Chosen(Vec<String>);

impl Chosen {
    const NAMES: [&str; 6] = [
        "stopped",
        "slow",
        "failover",
        "crash-loop",
        "load",
        "bad-data",
    ];

    fn from_args(args: &[String]) -> Result<Chosen, SetupError> {
        match args.iter().find(|a| !Self::NAMES.contains(&a.as_str())) {
            Some(unknown) => Err(format!(
                "no scenario {unknown:?}: usage: gdid-faults [{}]… | load-worker STORE SCOPE \
                 THREADS RATE MS MS MS",
                Self::NAMES.join("|")
            )
            .into()),
            None => Ok(Chosen(args.to_vec())),
        }
    }

    fn runs(&self, name: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|n| n == name)
    }
}

fn all_scenarios(chosen: Chosen) -> Result<(), SetupError> {
    let table = runtime(2)?.block_on(run(&chosen))?;
    println!("{}", Row::HEADER);
    for row in &table.rows {
        println!("{row}");
    }
    if table.rows.iter().any(|row| row.duplicates > 0) {
        return Err("an id was issued twice".into());
    }
    if !table.failed.is_empty() {
        return Err(format!("scenarios failed: {}", table.failed.join("; ")).into());
    }
    Ok(())
}

/// The rows of the scenarios run so far, and those that could not run.
#[derive(Default)]
struct Table {
    rows: Vec<Row>,
    failed: Vec<String>,
}

impl Table {
    /// Keeps the rows of `scenario`, or its error; each on stderr as it comes.
    fn add(&mut self, scenario: &str, result: Result<Vec<Row>, SetupError>) {
        match result {
            Ok(rows) => {
                for row in rows {
                    eprintln!("{row}");
                    self.rows.push(row);
                }
            }
            Err(e) => {
                eprintln!("gdid-faults: {scenario}: {e}");
                self.failed.push(format!("{scenario}: {e}"));
            }
        }
    }
}

/// Runs `scenario` (blocking: it waits on processes) off the runtime's threads.
async fn blocking(
    scenario: impl FnOnce() -> Result<Row, SetupError> + Send + 'static,
) -> Result<Vec<Row>, SetupError> {
    Ok(vec![tokio::task::spawn_blocking(scenario).await??])
}

async fn run(chosen: &Chosen) -> Result<Table, SetupError> {
    let private = tokio::task::spawn_blocking(PrivateServers::start).await??;
    let mut servers = Vec::new();
    for engine in Engine::ALL {
        match private.get(engine) {
            Ok(server) => servers.push(server.clone()),
            Err(why) => eprintln!("gdid-faults: no {} scenario: {why}", engine.name()),
        }
    }
    let mut table = Table::default();
    let servers_for = |name: &str| if chosen.runs(name) { &servers[..] } else { &[] };
    for server in servers_for("stopped") {
        let rows = scenarios::server_stopped(server).await;
        let rows = rows.map(|outcomes| outcomes.into_iter().map(|o| o.row).collect());
        table.add(&format!("{} stopped", server.engine().name()), rows);
    }
    for server in servers_for("slow") {
        let name = server.engine().name();
        let row = scenarios::slow_store(name, server.url()).await;
        table.add(
            &format!("slow {name}"),
            row.map(|outcome| vec![outcome.row]),
        );
    }
    if let (true, Ok(first), Ok(second)) = (
        chosen.runs("failover"),
        private.get(Engine::MariaDb),
        private.get(Engine::Postgres),
    ) {
        let row = scenarios::failover(("MariaDB", first.url()), ("PostgreSQL", second.url())).await;
        table.add("failover", row.map(|row| vec![row]));
    }
    let sqlite = gdid_testkit::sqlite_url("gdid-faults");
    let mut stores = vec![("SQLite", sqlite.as_str())];
    stores.extend(servers.iter().map(|s| (s.engine().name(), s.url())));
    let stores_for = |name: &str| if chosen.runs(name) { &stores[..] } else { &[] };
    let gdid = gdid_binary()?;
    let me = std::env::current_exe()?;
    for &(name, store) in stores_for("crash-loop") {
        let (gdid, name_, store) = (gdid.clone(), name.to_owned(), store.to_owned());
        let row = blocking(move || scenarios::crash_loop(&gdid, &name_, &store)).await;
        table.add(&format!("crash loop {name}"), row);
    }
    for &(name, store) in stores_for("load") {
        let (me, name_, store) = (me.clone(), name.to_owned(), store.to_owned());
        let row = blocking(move || {
            gdid_faults::load::load(&me, &name_, &store, Load::FULL).map(|outcome| outcome.row)
        })
        .await;
        table.add(&format!("load {name}"), row);
    }
    for &(name, store) in stores_for("bad-data") {
        let row = gdid_faults::corrupt::bad_stored_data(name, store).await;
        table.add(&format!("bad stored data {name}"), row.map(|row| vec![row]));
    }
    Ok(table)
}
