//! `--strategy`: building the generator a command issues ids from, over the stores given.

use std::fmt;
use std::sync::Arc;

use bson::oid::ObjectId;
use clap::ValueEnum;
use gdid_core::Gdid;
use gdid_core::generator::numbering::{self, MemoryRecord, NumberRecord};
use gdid_core::generator::{
    AuthorityError, BlockGenerator, Error, IdGenerator, MemoryAuthority, Pick, RangeLayout,
    SharedIdGenerator,
};
use gdid_mongo::{
    MongoAuthority, MongoCounter, MongoNumberRecord, MongoShardedCounter, MongoWindowGenerator,
    MongoWindowShard, ObjectIdGenerator,
};
use gdid_random::{IdRange, RandomIdGenerator};
use gdid_sql::{SqlAuthority, SqlCounter, SqlNumberRecord, SqlShardedCounter, SqlWindowGenerator};
use gdid_uuid::{Uuid, UuidV7Generator};

use crate::store::{DEFAULT_STORE, Store, StoreUrl};

/// The MongoDB collection of the authorities' counters.
pub const MONGO_COUNTERS: &str = "gdid_counters";
/// The MongoDB collection of the sharded counter's ranges.
const MONGO_RANGES: &str = "gdid_ranges";

/// How ids are issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Strategy {
    /// GDIDs from blocks of each store's counter (one authority per store, failover in order).
    Gdid,
    /// 1, 2, 3…: one round trip per id on the first store.
    OneAtATime,
    /// Fixed-digit numbers from N counter ranges on the first store (`--digits`, `--ranges`).
    Sharded,
    /// Numbers from the hi-lo windows the agent opens on the stores (`gdid agent`).
    Window,
    /// Random `--digits`-digit numbers: candidates, to insert under a unique index with retry.
    Random,
    /// UUID v7, made in this process (no store).
    UuidV7,
    /// MongoDB ObjectId, made in this process (no store).
    ObjectId,
}

/// What `gdid next` and `gdid bench` share: where ids come from and how they are issued.
#[derive(Debug, clap::Args)]
pub struct IssueArgs {
    /// The store: sqlite:PATH, mysql://…, postgres://…, mongodb://… or memory. Several: one
    /// authority each (`--strategy gdid`), failing over in the order given, or one shard each
    /// (`--strategy window`).
    #[arg(long = "store", value_name = "URL", default_value = DEFAULT_STORE)]
    pub stores: Vec<StoreUrl>,
    /// The authority number (0-15) of each store, in the same order. By default each store is the
    /// authority recorded in it on first use (a fresh store gets the lowest number, from 1, that
    /// no other store given holds); a number that a store's record contradicts is refused.
    #[arg(long = "authority", value_name = "A", value_parser = clap::value_parser!(u8).range(0..=15))]
    pub authorities: Vec<u8>,
    /// How ids are issued.
    #[arg(long, value_enum, default_value_t = Strategy::Gdid)]
    pub strategy: Strategy,
    /// The scope (think: a database).
    #[arg(long, default_value = "default")]
    pub scope: String,
    /// Digits of the `sharded` and `random` ids.
    #[arg(long, default_value_t = 12)]
    pub digits: u32,
    /// Ranges of the `sharded` counter.
    #[arg(long, default_value_t = 8)]
    pub ranges: u32,
    /// Values a `window` client takes per transaction.
    #[arg(long, default_value_t = 100)]
    pub window_batch: u64,
}

impl IssueArgs {
    /// The settings of the strategy for `sequence`; `needed`: how many ids the command will take
    /// at most, if it knows.
    ///
    /// # Errors
    ///
    /// A message when the `--authority` numbers do not fit the stores.
    pub fn settings(&self, sequence: String, needed: Option<u64>) -> Result<Settings, String> {
        Ok(Settings {
            needed,
            authorities: authority_numbers(self.stores.len(), &self.authorities)?,
            scope: self.scope.clone(),
            sequence,
            digits: self.digits,
            ranges: self.ranges,
            window_batch: self.window_batch,
        })
    }

    /// The stores, without their passwords; none for a strategy that uses no store.
    pub fn labels(&self) -> Vec<String> {
        if self.strategy.needs_store() {
            self.stores.iter().map(ToString::to_string).collect()
        } else {
            Vec::new()
        }
    }
}

/// The authority number asked for each of `stores` stores: as given (one per store), or none
/// (each store's own: see [`numbering`]).
fn authority_numbers(stores: usize, given: &[u8]) -> Result<Vec<Option<u8>>, String> {
    if given.is_empty() {
        return Ok(vec![None; stores]);
    }
    if given.len() != stores {
        return Err(format!(
            "{} --authority for {stores} --store: give one per store, or none",
            given.len()
        ));
    }
    let mut sorted = given.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err("two stores with the same --authority would issue the same ids".into());
    }
    Ok(given.iter().copied().map(Some).collect())
}

/// What a strategy needs besides the stores.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How many ids the command takes at most, if it knows (`gdid next --count`): no block is
    /// larger, so a process killed midway loses at most that many values to the gap.
    pub needed: Option<u64>,
    /// `--scope`.
    pub scope: String,
    /// `--sequence`.
    pub sequence: String,
    /// The authority number asked for each store (`--authority`), if any.
    pub authorities: Vec<Option<u8>>,
    /// Digits of the `sharded` and `random` ids.
    pub digits: u32,
    /// Ranges of the `sharded` counter.
    pub ranges: u32,
    /// Values a `window` client takes per transaction.
    pub window_batch: u64,
}

/// An id of any strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Issued {
    /// A GDID.
    Gdid(Gdid),
    /// A number (counters, ranges, windows, random).
    Number(u64),
    /// A UUID.
    Uuid(Uuid),
    /// An ObjectId.
    ObjectId(ObjectId),
}

impl fmt::Display for Issued {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Issued::Gdid(id) => fmt::Display::fmt(id, f),
            Issued::Number(id) => fmt::Display::fmt(id, f),
            Issued::Uuid(id) => fmt::Display::fmt(id, f),
            Issued::ObjectId(id) => fmt::Display::fmt(id, f),
        }
    }
}

/// The generator of a strategy, whatever its id type.
#[derive(Clone)]
pub enum Issuer {
    /// GDIDs.
    Gdid(SharedIdGenerator<Gdid>),
    /// Numbers.
    Number(SharedIdGenerator<u64>),
    /// UUIDs.
    Uuid(SharedIdGenerator<Uuid>),
    /// ObjectIds.
    ObjectId(SharedIdGenerator<ObjectId>),
}

impl fmt::Debug for Issuer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Issuer::Gdid(_) => "Issuer::Gdid",
            Issuer::Number(_) => "Issuer::Number",
            Issuer::Uuid(_) => "Issuer::Uuid",
            Issuer::ObjectId(_) => "Issuer::ObjectId",
        })
    }
}

impl Issuer {
    /// One id.
    pub async fn next_id(&self) -> Result<Issued, Error> {
        Ok(match self {
            Issuer::Gdid(ids) => Issued::Gdid(ids.next_id().await?),
            Issuer::Number(ids) => Issued::Number(ids.next_id().await?),
            Issuer::Uuid(ids) => Issued::Uuid(ids.next_id().await?),
            Issuer::ObjectId(ids) => Issued::ObjectId(ids.next_id().await?),
        })
    }

    /// `n` ids, all issued before this returns.
    pub async fn next_ids(&self, n: u64) -> Result<Vec<Issued>, Error> {
        Ok(match self {
            Issuer::Gdid(ids) => ids.next_ids(n).await?.iter().map(Issued::Gdid).collect(),
            Issuer::Number(ids) => ids.next_ids(n).await?.iter().map(Issued::Number).collect(),
            Issuer::Uuid(ids) => ids.next_ids(n).await?.iter().map(Issued::Uuid).collect(),
            Issuer::ObjectId(ids) => ids
                .next_ids(n)
                .await?
                .iter()
                .map(Issued::ObjectId)
                .collect(),
        })
    }
}

/// A strategy that cannot run on the stores given (exit status 2).
#[derive(Debug, thiserror::Error)]
#[error("--strategy {strategy}: {reason}")]
pub struct Unsuitable {
    strategy: String,
    reason: String,
}

/// Why no issuer could be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The strategy and the stores or settings do not fit together.
    #[error(transparent)]
    Unsuitable(#[from] Unsuitable),
    /// The generator refused its configuration or a store failed while setting up.
    #[error(transparent)]
    Generator(#[from] Error),
    /// A SQL store failed while setting up.
    #[error(transparent)]
    Sql(#[from] gdid_sql::Error),
    /// The stores' authority numbers could not be settled: a store is another authority than
    /// asked, two stores would share one (exit status 2), or a store failed reading them.
    #[error(transparent)]
    Authority(#[from] AuthorityError),
}

impl Strategy {
    /// Whether it keeps anything in a store (the others make ids in this process).
    pub fn needs_store(self) -> bool {
        !matches!(
            self,
            Strategy::Random | Strategy::UuidV7 | Strategy::ObjectId
        )
    }

    /// The name on the command line.
    pub fn name(self) -> String {
        self.to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_owned())
    }

    fn unsuitable(self, reason: impl Into<String>) -> Unsuitable {
        Unsuitable {
            strategy: self.name(),
            reason: reason.into(),
        }
    }

    /// The generator of this strategy over `stores` (one store or more, in preference order),
    /// creating the tables or documents it needs.
    pub async fn build(
        self,
        stores: &[(StoreUrl, Store)],
        settings: &Settings,
    ) -> Result<Issuer, BuildError> {
        let (first_url, first) = stores.first().ok_or_else(|| self.unsuitable("no store"))?;
        Ok(match self {
            Strategy::Gdid => Issuer::Gdid(Arc::new(block_generator(stores, settings).await?)),
            Strategy::OneAtATime => Issuer::Number(match first {
                Store::Sql(store) => {
                    let number = first_store_number(stores, settings).await?;
                    let authority =
                        SqlAuthority::new(store.clone(), number, &first_url.to_string())?;
                    Arc::new(SqlCounter::new(
                        authority,
                        &settings.scope,
                        &settings.sequence,
                    ))
                }
                Store::Mongo(database) => {
                    let number = first_store_number(stores, settings).await?;
                    let authority = mongo_authority(database, number)?;
                    Arc::new(MongoCounter::new(
                        authority,
                        &settings.scope,
                        &settings.sequence,
                    ))
                }
                Store::Memory => return Err(self.unsuitable("needs a database store").into()),
            }),
            Strategy::Sharded => {
                let layout = RangeLayout::decimal_digits(settings.digits, settings.ranges)
                    .map_err(|reason| self.unsuitable(reason))?;
                Issuer::Number(match first {
                    Store::Sql(store) => Arc::new(
                        SqlShardedCounter::create(
                            store.clone(),
                            &settings.sequence,
                            layout,
                            Pick::Random,
                        )
                        .await?,
                    ),
                    Store::Mongo(database) => Arc::new(
                        MongoShardedCounter::create(
                            database,
                            MONGO_RANGES,
                            &settings.sequence,
                            layout,
                            Pick::Random,
                        )
                        .await?,
                    ),
                    Store::Memory => return Err(self.unsuitable("needs a database store").into()),
                })
            }
            Strategy::Window => Issuer::Number(window_generator(self, stores, settings)?),
            Strategy::Random => {
                let range = IdRange::decimal_digits(settings.digits)
                    .map_err(|e| self.unsuitable(e.to_string()))?;
                Issuer::Number(Arc::new(RandomIdGenerator::new(range)))
            }
            Strategy::UuidV7 => Issuer::Uuid(Arc::new(UuidV7Generator::new())),
            Strategy::ObjectId => Issuer::ObjectId(Arc::new(ObjectIdGenerator)),
        })
    }
}

fn mongo_authority(database: &mongodb::Database, number: u8) -> Result<MongoAuthority, Error> {
    MongoAuthority::new(database, MONGO_COUNTERS, number).map_err(|e| Error::InvalidConfig {
        reason: e.to_string(),
    })
}

/// Where each store keeps its authority number, its tables created if missing. A store that
/// is down now still gets a record: its number is checked when it is first used.
async fn number_records(stores: &[(StoreUrl, Store)]) -> Vec<Box<dyn NumberRecord>> {
    let mut records: Vec<Box<dyn NumberRecord>> = Vec::with_capacity(stores.len());
    for (url, store) in stores {
        let label = url.to_string();
        records.push(match store {
            Store::Sql(store) => {
                let record = SqlNumberRecord::new(store.clone(), &label);
                if let Err(e) = record.ensure_schema().await {
                    eprintln!("gdid: warning: {url} is not usable now: {e}");
                }
                Box::new(record)
            }
            Store::Mongo(database) => {
                Box::new(MongoNumberRecord::new(database, MONGO_COUNTERS, &label))
            }
            Store::Memory => Box::new(MemoryRecord::new(&label)),
        });
    }
    records
}

/// The authority number of each store: its own, recorded in it, or the one `--authority` asks
/// for (refused when the store is recorded as another); fresh stores get the lowest numbers the
/// others do not hold. `None` for a store that cannot be read now and has no `--authority`: it
/// is left out. See [`numbering`].
async fn store_numbers(
    stores: &[(StoreUrl, Store)],
    settings: &Settings,
) -> Result<Vec<Option<u8>>, AuthorityError> {
    let records = number_records(stores).await;
    let asked: Vec<(&dyn NumberRecord, Option<u8>)> = records
        .iter()
        .map(|record| record.as_ref())
        .zip(settings.authorities.iter().copied())
        .collect();
    numbering::assign(&asked).await
}

/// The number of the first store, which must be readable.
async fn first_store_number(
    stores: &[(StoreUrl, Store)],
    settings: &Settings,
) -> Result<u8, AuthorityError> {
    store_numbers(&stores[..1], settings).await?[0]
        .ok_or_else(|| AuthorityError::store(format!("{} cannot be read now", stores[0].0)))
}

/// One authority per store, with the store's own number, tried in the order given.
async fn block_generator(
    stores: &[(StoreUrl, Store)],
    settings: &Settings,
) -> Result<BlockGenerator, BuildError> {
    let mut builder = BlockGenerator::builder(&settings.scope, &settings.sequence);
    if let Some(needed) = settings.needed {
        // The rate measured over a short run would size blocks for a long one.
        let defaults = gdid_core::generator::GeneratorConfig::default();
        builder = builder.block_size(
            defaults.min_block,
            needed.clamp(defaults.min_block, defaults.max_block),
        );
    }
    let numbers = store_numbers(stores, settings).await?;
    for ((url, store), number) in stores.iter().zip(numbers) {
        let Some(number) = number else {
            eprintln!(
                "gdid: warning: {url} cannot be read now and no --authority gives its number: \
                 left out"
            );
            continue;
        };
        builder = match store {
            Store::Sql(store) => {
                builder.authority(SqlAuthority::new(store.clone(), number, &url.to_string())?)
            }
            Store::Mongo(database) => builder.authority(mongo_authority(database, number)?),
            Store::Memory => builder.authority(MemoryAuthority::new(number)),
        };
    }
    Ok(builder.build()?)
}

/// Every store is a shard, labelled by its URL (as `gdid agent` labels it); they must all be SQL
/// or all MongoDB.
fn window_generator(
    strategy: Strategy,
    stores: &[(StoreUrl, Store)],
    settings: &Settings,
) -> Result<SharedIdGenerator<u64>, BuildError> {
    let (sequence, batch) = (settings.sequence.as_str(), settings.window_batch);
    let sql = shards(stores, |store| match store {
        Store::Sql(store) => Some(store.clone()),
        _ => None,
    });
    if let Some(shards) = sql {
        return Ok(Arc::new(SqlWindowGenerator::new(shards, sequence, batch)?));
    }
    let mongo = shards(stores, |store| match store {
        Store::Mongo(database) => Some(MongoWindowShard::new(database)),
        _ => None,
    });
    match mongo {
        Some(shards) => Ok(Arc::new(MongoWindowGenerator::new(
            shards, sequence, batch,
        )?)),
        None => Err(strategy
            .unsuitable("the shards must all be SQL stores or all MongoDB")
            .into()),
    }
}

/// Every store as a shard of one kind, or `None` when one store is of another kind.
fn shards<S>(
    stores: &[(StoreUrl, Store)],
    shard: impl Fn(&Store) -> Option<S>,
) -> Option<Vec<(String, S)>> {
    stores
        .iter()
        .map(|(url, store)| Some((url.to_string(), shard(store)?)))
        .collect()
}
