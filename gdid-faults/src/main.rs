//! Runs every fault scenario the configured servers allow and prints the README's table.
//!
//! ```sh
//! eval "$(scripts/services.sh)"
//! cargo build --release -p gdid-cli && cargo run --release -p gdid-faults
//! ```

use std::process::ExitCode;

use gdid_faults::server::Server;
use gdid_faults::{Row, gdid_binary, scenarios};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    match run().await {
        Ok(rows) => {
            println!("{}", Row::HEADER);
            for row in &rows {
                println!("{row}");
            }
            if rows.iter().any(|row| row.duplicates > 0) {
                eprintln!("gdid-faults: an id was issued twice");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gdid-faults: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<Vec<Row>, scenarios::SetupError> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let (mysql, postgres) = (var("GDID_MYSQL_URL"), var("GDID_POSTGRES_URL"));
    let mut rows = Vec::new();
    if let Some(url) = &mysql {
        rows.extend(scenarios::server_stopped(Server::MariaDb, "MariaDB", url).await?);
    }
    if let Some(url) = &postgres {
        rows.extend(scenarios::server_stopped(Server::Postgres, "PostgreSQL", url).await?);
    }
    if let Some(url) = &mysql {
        rows.push(scenarios::slow_store("MariaDB", url).await?);
    }
    if let Some(url) = &postgres {
        rows.push(scenarios::slow_store("PostgreSQL", url).await?);
    }
    if let (Some(first), Some(second)) = (&mysql, &postgres) {
        rows.push(scenarios::failover(("MariaDB", first), ("PostgreSQL", second)).await?);
    }
    let gdid = gdid_binary()?;
    let sqlite = gdid_testkit::sqlite_url("gdid-faults");
    let mut stores = vec![("SQLite", sqlite.as_str())];
    stores.extend(mysql.as_deref().map(|url| ("MariaDB", url)));
    stores.extend(postgres.as_deref().map(|url| ("PostgreSQL", url)));
    for (name, store) in stores {
        let (gdid, name, store) = (gdid.clone(), name.to_owned(), store.to_owned());
        rows.push(
            tokio::task::spawn_blocking(move || scenarios::crash_loop(&gdid, &name, &store))
                .await??,
        );
    }
    Ok(rows)
}
