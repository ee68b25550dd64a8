//! `--strategy`: building the generator a command issues ids from, over the stores given.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use bson::oid::ObjectId;
use clap::ValueEnum;
use gdid::engine::{Error, GeneratorConfig, IdGenerator, Pick, RangeLayout, SharedIdGenerator};
use gdid::mongo::ObjectIdGenerator;
use gdid::random::{IdRange, RandomIdGenerator};
use gdid::uuid::{Uuid, UuidV7Generator};
use gdid::{Gdid, Store};

use crate::failure::Failure;

/// How ids are issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Strategy {
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
pub(crate) struct IssueArgs {
    /// The store: sqlite:PATH, mysql://…, postgres://…, mongodb://…, http(s)://… or memory.
    /// Several: one authority each (`--strategy gdid`), failing over in the order given, or one
    /// shard each (`--strategy window`). Without --store: the URLs of --store-file, else of the
    /// GDID_STORE environment variable (separated by whitespace), else sqlite:gdid.sqlite.
    #[arg(long = "store", value_name = "URL", value_parser = crate::store::StoreUrl)]
    pub stores: Vec<String>,
    /// A file of store URLs, one a line (`#` starts a comment), instead of --store: no password
    /// in the command line.
    #[arg(long, value_name = "FILE", conflicts_with = "stores")]
    pub store_file: Option<PathBuf>,
    /// The authority number (0-15) of each store, in the same order (`--strategy gdid` only). By
    /// default each store is the authority recorded in it on first use (a fresh store gets the
    /// lowest number, from 1, that no other store given holds); a number that a store's record
    /// contradicts is refused.
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
    /// Settles the stores: those of --store, --store-file or GDID_STORE, or the default.
    ///
    /// # Errors
    ///
    /// As [`crate::store::urls`].
    pub(crate) fn resolve_stores(&mut self) -> Result<(), String> {
        self.stores = crate::store::urls(&self.stores, self.store_file.as_deref())?;
        Ok(())
    }

    /// The settings of the strategy for `sequence`; `needed`: how many ids the command will take
    /// at most, if it knows.
    ///
    /// # Errors
    ///
    /// A message when the `--authority` numbers do not fit the stores.
    pub(crate) fn settings(
        &self,
        sequence: String,
        needed: Option<u64>,
    ) -> Result<Settings, String> {
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
    pub(crate) fn labels(&self) -> Vec<String> {
        if self.strategy.needs_store() {
            self.stores
                .iter()
                .map(|url| crate::store::label(url))
                .collect()
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
pub(crate) struct Settings {
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
pub(crate) enum Issued {
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
pub(crate) enum Issuer {
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
    pub(crate) async fn next_id(&self) -> Result<Issued, Error> {
        Ok(match self {
            Issuer::Gdid(ids) => Issued::Gdid(ids.next_id().await?),
            Issuer::Number(ids) => Issued::Number(ids.next_id().await?),
            Issuer::Uuid(ids) => Issued::Uuid(ids.next_id().await?),
            Issuer::ObjectId(ids) => Issued::ObjectId(ids.next_id().await?),
        })
    }

    /// Stops issuing, giving the ids reserved and not issued back to the store where the
    /// strategy can: how many went back.
    pub(crate) async fn close(&self) -> Result<u64, Error> {
        match self {
            Issuer::Gdid(ids) => ids.close().await,
            Issuer::Number(ids) => ids.close().await,
            Issuer::Uuid(ids) => ids.close().await,
            Issuer::ObjectId(ids) => ids.close().await,
        }
    }

    /// `n` ids, all issued before this returns.
    pub(crate) async fn next_ids(&self, n: u64) -> Result<Vec<Issued>, Error> {
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

impl Strategy {
    /// Whether it keeps anything in a store (the others make ids in this process).
    pub(crate) fn needs_store(self) -> bool {
        !matches!(
            self,
            Strategy::Random | Strategy::UuidV7 | Strategy::ObjectId
        )
    }

    /// The name on the command line.
    pub(crate) fn name(self) -> String {
        self.to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_owned())
    }

    /// This strategy cannot run on the stores or settings given, for `reason`.
    fn unsuitable(self, reason: impl Into<String>) -> Failure {
        Failure::Unsuitable {
            strategy: self.name(),
            reason: reason.into(),
        }
    }

    /// The generator of this strategy over the stores of `urls` (one store or more, in
    /// preference order), creating the tables or documents it needs.
    pub(crate) async fn build(
        self,
        urls: &[String],
        settings: &Settings,
    ) -> Result<Issuer, Failure> {
        let first = urls.first().ok_or_else(|| self.unsuitable("no store"))?;
        if self != Strategy::Gdid && settings.authorities.iter().any(Option::is_some) {
            // Only GDIDs carry an authority number: no other strategy reads or records one.
            return Err(self.unsuitable(
                "its ids carry no authority number: --authority is for --strategy gdid",
            ));
        }
        // The counters are the store's whatever its number: none is read or recorded, so a
        // store used for them stays free to become any authority.
        let unnumbered = || Store::options().unnumbered();
        Ok(match self {
            Strategy::Gdid => Issuer::Gdid(Arc::new(block_generator(urls, settings).await?)),
            Strategy::OneAtATime => {
                let store = unnumbered().open(first).await?;
                Issuer::Number(store.one_at_a_time(&settings.scope, &settings.sequence))
            }
            Strategy::Sharded => {
                let layout = RangeLayout::decimal_digits(settings.digits, settings.ranges)
                    .map_err(|reason| self.unsuitable(reason.to_string()))?;
                let store = unnumbered().open(first).await?;
                Issuer::Number(
                    store
                        .sharded(&settings.sequence, layout, Pick::Random)
                        .await?,
                )
            }
            Strategy::Window => {
                let stores = unnumbered().open_all(urls).await?;
                Issuer::Number(stores.window_generator(&settings.sequence, settings.window_batch)?)
            }
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

/// One authority per store, each with its own number (see `gdid::OpenOptions::open_all`), tried
/// in the order given; a store that cannot be read now and has no `--authority` is left out.
async fn block_generator(
    urls: &[String],
    settings: &Settings,
) -> Result<gdid::BlockGenerator, Failure> {
    let asked: Option<Vec<u8>> = settings.authorities.iter().copied().collect();
    let options = match asked {
        Some(numbers) => Store::options().authorities(&numbers),
        None => Store::options(),
    };
    let stores = options.open_all(urls).await?;
    for url in stores.left_out() {
        eprintln!(
            "gdid: warning: {url} cannot be read now and no --authority gives its number: \
             left out"
        );
    }
    let mut builder = stores.block_generator(&settings.scope, &settings.sequence);
    if let Some(needed) = settings.needed {
        // The rate measured over a short run would size blocks for a long one.
        let defaults = GeneratorConfig::default();
        builder = builder.block_size(
            defaults.min_block,
            needed.clamp(defaults.min_block, defaults.max_block),
        );
    }
    Ok(builder.build()?)
}
