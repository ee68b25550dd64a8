//! Runs every fault scenario the configured servers allow and prints the README's table.
//!
//! ```sh
//! eval "$(scripts/services.sh)"
//! cargo build --release -p gdid-cli && cargo run --release -p gdid-faults
//! ```
//!
//! `gdid-faults load-worker …` is one process of the load scenario (see `gdid_faults::load`).

use std::io::Write;
use std::process::ExitCode;

use gdid_faults::load::{Load, Worker};
use gdid_faults::server::Server;
use gdid_faults::{Row, gdid_binary, scenarios};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        Some((command, worker)) if command == "load-worker" => load_worker(worker),
        None => all_scenarios(),
        Some(_) => Err("usage: gdid-faults [load-worker STORE SCOPE THREADS RATE MS MS MS]".into()),
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
fn load_worker(args: &[String]) -> Result<(), scenarios::SetupError> {
    let worker = Worker::from_args(args)?;
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let report =
        runtime(usize::try_from(worker.load.threads)?)?.block_on(worker.run(&mut stdout))?;
    stdout.flush()?;
    eprintln!("{}", report.line());
    Ok(())
}

fn all_scenarios() -> Result<(), scenarios::SetupError> {
    let table = runtime(2)?.block_on(run())?;
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
    fn add(&mut self, scenario: &str, result: Result<Vec<Row>, scenarios::SetupError>) {
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
    scenario: impl FnOnce() -> Result<Row, scenarios::SetupError> + Send + 'static,
) -> Result<Vec<Row>, scenarios::SetupError> {
    Ok(vec![tokio::task::spawn_blocking(scenario).await??])
}

async fn run() -> Result<Table, scenarios::SetupError> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let (mysql, postgres, mongodb) = (
        var("GDID_MYSQL_URL"),
        var("GDID_POSTGRES_URL"),
        var("GDID_MONGODB_URI"),
    );
    let servers = [
        (Server::MariaDb, "MariaDB", &mysql),
        (Server::Postgres, "PostgreSQL", &postgres),
        (Server::MongoDb, "MongoDB", &mongodb),
    ];
    let mut table = Table::default();
    for (server, name, url) in servers {
        if let Some(url) = url {
            let rows = scenarios::server_stopped(server, name, url).await;
            table.add(&format!("{name} stopped"), rows);
        }
    }
    for (_, name, url) in servers {
        if let Some(url) = url {
            let row = scenarios::slow_store(name, url).await;
            table.add(&format!("slow {name}"), row.map(|row| vec![row]));
        }
    }
    if let (Some(first), Some(second)) = (&mysql, &postgres) {
        let row = scenarios::failover(("MariaDB", first), ("PostgreSQL", second)).await;
        table.add("failover", row.map(|row| vec![row]));
    }
    let sqlite = gdid_testkit::sqlite_url("gdid-faults");
    let mut stores = vec![("SQLite", sqlite.as_str())];
    stores.extend(
        servers
            .iter()
            .filter_map(|(_, name, url)| url.as_deref().map(|url| (*name, url))),
    );
    let gdid = gdid_binary()?;
    let me = std::env::current_exe()?;
    for &(name, store) in &stores {
        let (gdid, name_, store) = (gdid.clone(), name.to_owned(), store.to_owned());
        let row = blocking(move || scenarios::crash_loop(&gdid, &name_, &store)).await;
        table.add(&format!("crash loop {name}"), row);
    }
    for &(name, store) in &stores {
        let (me, name_, store) = (me.clone(), name.to_owned(), store.to_owned());
        let row = blocking(move || {
            gdid_faults::load::load(&me, &name_, &store, Load::ISSUE).map(|outcome| outcome.row)
        })
        .await;
        table.add(&format!("load {name}"), row);
    }
    for &(name, store) in &stores {
        let row = gdid_faults::corrupt::bad_stored_data(name, store).await;
        table.add(&format!("bad stored data {name}"), row.map(|row| vec![row]));
    }
    Ok(table)
}
