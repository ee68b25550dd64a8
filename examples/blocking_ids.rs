//! Ids without async: a command-line tool that prints new GDIDs of a sequence, with no tokio
//! runtime of its own (`gdid::blocking`). The ids come from a SQLite file unless
//! `GDID_ID_STORE` names another store; several threads take them at once, as the request
//! handlers of a synchronous server (diesel, say) would.
//!
//! ```sh
//! cargo run -p gdid-examples --example blocking_ids            # 5 ids of shop/orders
//! cargo run -p gdid-examples --example blocking_ids -- 20 invoices
//! ```

use std::error::Error;
use std::process::ExitCode;

use gdid::Gdid;
use gdid_examples::{MONGODB_DATABASE, authority_of, exit_status, id_store};

fn main() -> ExitCode {
    exit_status("blocking_ids", run())
}

fn run() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let count: usize = args.next().map_or(Ok(5), |n| n.parse())?;
    let sequence = args.next().unwrap_or_else(|| "orders".to_owned());

    let store = gdid::blocking::Store::options()
        .default_mongodb_database(MONGODB_DATABASE)
        .open(&id_store()?)?;
    let ids = store.block_generator("shop", &sequence).build()?;

    // One id here, then `count` from four threads at once: no async anywhere.
    let first = ids.next_id()?;
    let mut issued: Vec<Gdid> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|worker| {
                let ids = ids.clone();
                scope.spawn(move || {
                    (worker..count)
                        .step_by(4)
                        .map(|_| ids.next_id())
                        .collect::<Result<Vec<_>, _>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a worker panicked"))
            .collect::<Result<Vec<_>, _>>()
            .map(|all| all.into_iter().flatten().collect())
    })?;
    issued.sort();
    println!(
        "{} ({}), {}",
        store.label(),
        sequence,
        authority_of(store.as_async())
    );
    println!("{first}");
    for id in &issued {
        println!("{id}");
    }
    if issued.windows(2).any(|w| w[0] == w[1]) || issued.first().is_some_and(|id| *id <= first) {
        return Err("an id was issued twice, or before the first".into());
    }
    // What was reserved and not issued goes back: the next run goes on from here.
    ids.close()?;
    Ok(())
}
