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
    let rows = runtime(2)?.block_on(run())?;
    println!("{}", Row::HEADER);
    for row in &rows {
        println!("{row}");
    }
    if rows.iter().any(|row| row.duplicates > 0) {
        return Err("an id was issued twice".into());
    }
    Ok(())
}

async fn run() -> Result<Vec<Row>, scenarios::SetupError> {
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
    let mut rows = Vec::new();
    for (server, name, url) in servers {
        if let Some(url) = url {
            rows.extend(scenarios::server_stopped(server, name, url).await?);
        }
    }
    for (_, name, url) in servers {
        if let Some(url) = url {
            rows.push(scenarios::slow_store(name, url).await?);
        }
    }
    if let (Some(first), Some(second)) = (&mysql, &postgres) {
        rows.push(scenarios::failover(("MariaDB", first), ("PostgreSQL", second)).await?);
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
        let (gdid, name, store) = (gdid.clone(), name.to_owned(), store.to_owned());
        rows.push(
            tokio::task::spawn_blocking(move || scenarios::crash_loop(&gdid, &name, &store))
                .await??,
        );
    }
    for &(name, store) in &stores {
        let (me, name, store) = (me.clone(), name.to_owned(), store.to_owned());
        let outcome = tokio::task::spawn_blocking(move || {
            gdid_faults::load::load(&me, &name, &store, Load::ISSUE)
        })
        .await??;
        rows.push(outcome.row);
    }
    for &(name, store) in &stores {
        rows.push(gdid_faults::corrupt::bad_stored_data(name, store).await?);
    }
    Ok(rows)
}
