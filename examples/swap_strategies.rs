//! One service function, written once against `IdGenerator`, run with four id strategies chosen
//! at run time:
//!
//! | name | strategy | id |
//! |---|---|---|
//! | `gdid` | `BlockGenerator` of a `gdid::Store`, a SQLite file | `Gdid` |
//! | `uuid` | `gdid_uuid::UuidV7Generator` | `Uuid` |
//! | `random` | `gdid_random::RandomIdGenerator`, 12 decimal digits | `u64` |
//! | `counter` | the store's one-at-a-time counter, in the same SQLite file | `u64` |
//!
//! ```sh
//! cargo run -p gdid-examples --example swap_strategies               # all four, in turn
//! cargo run -p gdid-examples --example swap_strategies -- uuid       # one (or several) by name
//! ```
//!
//! An unknown name prints the valid names on stderr and exits with status 2.

use std::error::Error;
use std::fmt::Display;
use std::process::ExitCode;

use gdid_engine::IdGenerator;
use gdid_examples::{
    authority_of, default_id_store, describe_id_store, exit_status, open_id_store,
};
use gdid_random::{IdRange, RandomIdGenerator};
use gdid_uuid::UuidV7Generator;

/// A user of the service.
#[derive(Debug)]
struct User<Id> {
    id: Id,
    name: String,
}

/// The service: registers users, each with a new id of whatever kind `ids` makes. Nothing here
/// knows which strategy that is.
async fn register_users<G: IdGenerator>(
    ids: &G,
    names: &[&str],
) -> Result<Vec<User<G::Id>>, gdid_engine::Error>
where
    G::Id: Display,
{
    let mut users = Vec::with_capacity(names.len());
    for name in names {
        let user = User {
            id: ids.next_id().await?,
            name: (*name).to_owned(),
        };
        println!("  registered {:<6} as {}", user.name, user.id);
        users.push(user);
    }
    Ok(users)
}

const USER_NAMES: [&str; 3] = ["ada", "grace", "alan"];

/// The scope of the example's sequences in the id store.
const SCOPE: &str = "examples";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Gdid,
    UuidV7,
    Random,
    Counter,
}

impl Strategy {
    const ALL: [Strategy; 4] = [
        Strategy::Gdid,
        Strategy::UuidV7,
        Strategy::Random,
        Strategy::Counter,
    ];

    fn name(self) -> &'static str {
        match self {
            Strategy::Gdid => "gdid",
            Strategy::UuidV7 => "uuid",
            Strategy::Random => "random",
            Strategy::Counter => "counter",
        }
    }

    fn from_name(name: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.name() == name)
    }

    fn good_for(self) -> &'static str {
        match self {
            Strategy::Gdid => {
                "primary keys: 12 bytes, ordered, served from memory (one write per block), \
                 and no store outage shorter than the cover time is noticed"
            }
            Strategy::UuidV7 => {
                "ids made with no store at all, ordered by time; 16 bytes, for existing uuid \
                 columns and clients that make their own ids"
            }
            Strategy::Random => {
                "numbers that reveal neither order nor volume (accounts); unique only under a \
                 unique index, inserted with gdid_random::insert_with_retry"
            }
            Strategy::Counter => {
                "continuous numbers 1, 2, 3 (invoices) at a low rate: one store round trip \
                 per id, the slow baseline"
            }
        }
    }
}

/// The strategies named on the command line, all four when none is; the first unknown name as
/// the error.
fn strategies_from_args(args: impl Iterator<Item = String>) -> Result<Vec<Strategy>, String> {
    let chosen = args
        .map(|name| Strategy::from_name(&name).ok_or(name))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(if chosen.is_empty() {
        Strategy::ALL.to_vec()
    } else {
        chosen
    })
}

fn valid_names() -> String {
    Strategy::ALL.map(Strategy::name).join(", ")
}

#[tokio::main]
async fn main() -> ExitCode {
    match strategies_from_args(std::env::args().skip(1)) {
        Ok(strategies) => exit_status("swap_strategies", run_all(&strategies).await),
        Err(unknown) => {
            eprintln!(
                "swap_strategies: unknown strategy {unknown:?}: expected {} (none: all four)",
                valid_names()
            );
            ExitCode::from(2)
        }
    }
}

async fn run_all(strategies: &[Strategy]) -> Result<(), Box<dyn Error>> {
    let id_store = default_id_store()?;
    for &strategy in strategies {
        run(strategy, &id_store).await?;
    }
    Ok(())
}

/// Builds the generator of `strategy` and hands it to the service.
async fn run(strategy: Strategy, id_store: &str) -> Result<(), Box<dyn Error>> {
    match strategy {
        Strategy::Gdid => {
            let store = open_id_store(id_store).await?;
            println!(
                "gdid: BlockGenerator, {} of {}",
                authority_of(&store),
                describe_id_store(&store)
            );
            let ids = store.block_generator(SCOPE, "user").build()?;
            register_users(&ids, &USER_NAMES).await?;
            ids.close().await?; // what was reserved and not issued goes back
        }
        Strategy::UuidV7 => {
            println!("uuid: UuidV7Generator, no store");
            register_users(&UuidV7Generator::new(), &USER_NAMES).await?;
        }
        Strategy::Random => {
            println!("random: RandomIdGenerator of 12 decimal digits, no store");
            let ids = RandomIdGenerator::new(IdRange::decimal_digits(12)?);
            register_users(&ids, &USER_NAMES).await?;
        }
        Strategy::Counter => {
            let store = open_id_store(id_store).await?;
            println!("counter: one at a time in {}", describe_id_store(&store));
            let ids = store.one_at_a_time(SCOPE, "user_number");
            register_users(&ids, &USER_NAMES).await?;
        }
    }
    println!("  good for: {}", strategy.good_for());
    Ok(())
}
